"""Melee's six legal stages as data: main floor and ledges, platforms, blast zones, spawn points.

Every number names its source in :attr:`Stage.sources`:

* libmelee's ``melee.stages`` module: ``EDGE_GROUND_POSITION`` (the main floor's end, where a fighter
  stands teetering), ``EDGE_POSITION`` (a fighter hanging on the ledge), ``BLASTZONES`` (Magus420's
  measurements, as libmelee cites them), ``top_platform_position`` and ``side_platform_position``;
* libmelee's ``gamestate.FoDPlatforms``: Fountain of Dreams' side platforms' starting heights, in the
  units Slippi's platform event records; their standing height is that times 0.80625, and their ends are
  at x +-21 and +-49.5 (slippilab ``src/components/viewer/Stage.tsx``, which draws them so on replays);
* spawn points: the players' positions on a replay's first frame (``../shared/replays``), marked
  "measured"; where no replay of the stage was at hand, a guess, marked "guess".

The main floor is at y = 0 from ``-edge_x`` to ``edge_x`` on every stage, which is how the game has it on
Final Destination, Battlefield, Dream Land and Pokemon Stadium; :attr:`Stage.simplification` names where
the game differs (Yoshi's Story's floor slopes down to -3.5 at its ends, Fountain of Dreams' rises to 0.62).

Example::

    >>> stage_named("battlefield").platforms[2]
    Platform(left=-18.80000114440918, right=18.80000114440918, height=54.40010070800781, moves=False)
    >>> stage_named("fd")
    Traceback (most recent call last):
    ...
    ValueError: unknown stage 'fd': one of final_destination, battlefield, yoshis_story, dreamland, fountain_of_dreams, pokemon_stadium
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import melee

Stage_ = melee.enums.Stage  # libmelee's enum (the name Stage is this module's dataclass)
LIBMELEE = "libmelee melee.stages"


@dataclass(frozen=True)
class Platform:
    """A soft platform: stood on from above, passed through from below and dropped through."""

    left: float
    right: float
    height: float
    moves: bool = False  # True: the game moves it (Fountain of Dreams' side platforms); height is its start


@dataclass(frozen=True)
class Stage:
    name: str  # config name
    libmelee: str  # melee.Stage member name
    edge_x: float  # the main floor's half width: it spans -edge_x..edge_x at y = 0 (see simplification)
    platforms: tuple[Platform, ...]
    blast: tuple[float, float, float, float]  # left, right, top, bottom
    spawns: tuple[tuple[float, float], ...]  # the game's four spawn points (x, y), players 1-4
    simplification: str  # "" or what the arena simplifies of the game's stage
    sources: dict[str, str] = field(default_factory=dict)  # field -> source
    ledge_x: float = 0.0  # x of a fighter hanging on the ledge (libmelee EDGE_POSITION)
    #: Where the arena puts a KO'd fighter back on the floor, per port (the game's revival platform is left out).
    respawn_x: tuple[float, float] = (-40.0, 40.0)

    @property
    def enum(self) -> Any:
        """The libmelee ``melee.Stage`` member."""
        return Stage_[self.libmelee]


def _geometry(s: Any) -> dict[str, Any]:
    """Edges and blast zones of libmelee stage ``s``."""
    return dict(edge_x=float(melee.stages.EDGE_GROUND_POSITION[s]), ledge_x=float(melee.stages.EDGE_POSITION[s]),
                blast=tuple(float(v) for v in melee.stages.BLASTZONES[s]))


def _libmelee_platforms(s: Any) -> tuple[Platform, ...]:
    """Side platforms (left, right) and the top one, as libmelee gives them; absent ones left out."""
    out = []
    for h, lo, hi in (melee.stages.side_platform_position(False, s), melee.stages.side_platform_position(True, s),
                      melee.stages.top_platform_position(s)):
        if h is not None:
            out.append(Platform(float(lo), float(hi), float(h)))
    return tuple(out)


_GEO = {"edge_x": f"{LIBMELEE} EDGE_GROUND_POSITION", "ledge_x": f"{LIBMELEE} EDGE_POSITION",
        "blast": f"{LIBMELEE} BLASTZONES (Magus420)"}
_PLATS = f"{LIBMELEE} side_platform_position, top_platform_position"
_RESPAWN_GUESS = "guess: players 1-2's spawn x, on the main floor (the revival platform is left out)"
#: guess: where no replay of the stage was at hand, players at x -40, 40, -20, 20, 10 above the main floor.
_GUESSED_SPAWNS = ((-40.0, 10.0), (40.0, 10.0), (-20.0, 10.0), (20.0, 10.0))

#: Fountain of Dreams' side platforms: libmelee gamestate.FoDPlatforms' starting heights (left 20, right 28, in
#: Slippi's platform-event units) times 0.80625, ends at +-21 and +-49.5 (slippilab Stage.tsx).
FOD_EVENT_SCALE = 0.80625
FOD_START = (20.0, 28.0)


def _fod_platforms() -> tuple[Platform, ...]:
    s = Stage_.FOUNTAIN_OF_DREAMS
    h, lo, hi = melee.stages.top_platform_position(s)
    return (Platform(-49.5, -21.0, FOD_START[0] * FOD_EVENT_SCALE, moves=True),
            Platform(21.0, 49.5, FOD_START[1] * FOD_EVENT_SCALE, moves=True),
            Platform(float(lo), float(hi), float(h)))


def _stages() -> dict[str, Stage]:
    S = Stage_
    fd = Stage("final_destination", "FINAL_DESTINATION", platforms=(), spawns=((-60.0, 10.0), (60.0, 10.0),
               *_GUESSED_SPAWNS[2:]), simplification="", respawn_x=(-40.0, 40.0),
               sources={**_GEO, "platforms": "none (the stage has none)",
                        "spawns": "players 1-2 measured (slippijs_lCancel.slp, peppi_v3.13.slp frame -123); 3-4 guess",
                        "respawn_x": "guess (the arena's respawn spots since before it had stages)"},
               **_geometry(S.FINAL_DESTINATION))
    bf = Stage("battlefield", "BATTLEFIELD", platforms=_libmelee_platforms(S.BATTLEFIELD),
               spawns=_GUESSED_SPAWNS, simplification="",
               respawn_x=(-40.0, 40.0), sources={**_GEO, "platforms": _PLATS, "spawns": "guess", "respawn_x": _RESPAWN_GUESS},
               **_geometry(S.BATTLEFIELD))
    ys = Stage("yoshis_story", "YOSHIS_STORY", platforms=_libmelee_platforms(S.YOSHIS_STORY),
               spawns=((-42.0, 26.6), (42.0, 28.0), (-20.0, 10.0), (20.0, 10.0)),
               simplification=("the main floor is flat at y = 0 to its ends (the game's slopes down from x +-39 to "
                               "-3.5 at +-56); Randall the cloud is left out"),
               respawn_x=(-42.0, 42.0), sources={**_GEO, "platforms": _PLATS,
                                                 "spawns": ("players 1-2 measured (libmelee_test_game_1.slp, "
                                                            "pyslippi_game.slp frame -123); 3-4 guess"),
                                                 "respawn_x": _RESPAWN_GUESS},
               **_geometry(S.YOSHIS_STORY))
    dl = Stage("dreamland", "DREAMLAND", platforms=_libmelee_platforms(S.DREAMLAND),
               spawns=_GUESSED_SPAWNS,
               simplification="Whispy's wind is left out", respawn_x=(-40.0, 40.0),
               sources={**_GEO, "platforms": _PLATS, "spawns": "guess", "respawn_x": _RESPAWN_GUESS},
               **_geometry(S.DREAMLAND))
    fod = Stage("fountain_of_dreams", "FOUNTAIN_OF_DREAMS", platforms=_fod_platforms(),
                spawns=_GUESSED_SPAWNS,
                simplification=("the side platforms stay at their starting heights (the game moves them up and down "
                                "at random, by parameters in its stage file that the decompilation does not carry: "
                                "grIzumi); the main floor is flat at y = 0 to its ends (the game's rises to 0.62 "
                                "past x +-51)"),
                respawn_x=(-40.0, 40.0),
                sources={**_GEO, "platforms": (f"top: {LIBMELEE} top_platform_position; sides: libmelee "
                                               "gamestate.FoDPlatforms start x 0.80625, ends slippilab Stage.tsx"),
                         "spawns": "guess", "respawn_x": _RESPAWN_GUESS},
                **_geometry(S.FOUNTAIN_OF_DREAMS))
    ps = Stage("pokemon_stadium", "POKEMON_STADIUM", platforms=_libmelee_platforms(S.POKEMON_STADIUM),
               spawns=_GUESSED_SPAWNS,
               simplification="the neutral form only (the game transforms it into fire, grass, rock and water forms)",
               respawn_x=(-40.0, 40.0),
               sources={**_GEO, "platforms": _PLATS, "spawns": "guess", "respawn_x": _RESPAWN_GUESS},
               **_geometry(S.POKEMON_STADIUM))
    return {s.name: s for s in (fd, bf, ys, dl, fod, ps)}


STAGES: dict[str, Stage] = _stages()
#: The stage every arena plays unless told otherwise.
DEFAULT_STAGE = "final_destination"
#: The most platforms any stage has (a stage table pads to it).
MAX_PLATFORMS = max(len(s.platforms) for s in STAGES.values())


def stage_named(name: str) -> Stage:
    """The stage called ``name`` (a config name, e.g. ``battlefield``); a ValueError naming the six otherwise."""
    try:
        return STAGES[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown stage {name!r}: one of {', '.join(STAGES)}") from None


def stage_of_libmelee(stage: Any) -> Stage:
    """The stage of a libmelee ``melee.Stage`` member; a ValueError for a stage that is not one of the six."""
    for s in STAGES.values():
        if getattr(stage, "name", None) == s.libmelee:
            return s
    raise ValueError(f"{stage!r} is not one of the six legal stages the arena plays "
                     f"({', '.join(s.libmelee for s in STAGES.values())})")


def platforms_at(stage: Stage, frame: int = 0) -> tuple[Platform, ...]:
    """The stage's platforms on game frame ``frame``: the arena keeps moving platforms at their starting heights
    (:attr:`Stage.simplification`), so this is ``stage.platforms`` on every frame."""
    del frame  # the platforms do not move in the arena
    return stage.platforms


__all__ = ["Platform", "Stage", "STAGES", "DEFAULT_STAGE", "MAX_PLATFORMS", "stage_named", "stage_of_libmelee",
           "platforms_at"]
