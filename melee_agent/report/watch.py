"""Drawing one arena frame as a picture: the stage and its platforms, both fighters' hurtboxes and hitboxes, and a HUD.

``melee-agent watch`` (:mod:`melee_agent.cli.watch`) records a game through ``Arena.on_frame``;
each recorded state becomes a :class:`FrameView` (plain numbers: what to draw), and a
:class:`Painter` draws it with Pillow. The geometry is the simulator's own hit test (``_hits``
in :mod:`melee_agent.arena.dodge.frame`), so what is drawn is what can hit:

* a body (hurtbox) is an upright capsule of radius ``data.BODY_RADIUS`` around the segment from
  the player's position up ``T.height[p]``;
* a hitbox is a circle ``T.circles[move, action_frame, k]`` = (x forward, y up, radius), centred
  at position + facing * x, position + y; radius 0 means no hitbox.

Colours follow Melee's debug view where it has one: hitboxes red, bodies filled in each
character's colour (hollow while intangible or invulnerable), a shield as a ring.

Example::

    >>> import torch
    >>> from melee_agent.arena.env_state import CPU, EnvState, with_player
    >>> from melee_agent.arena.dodge.tables import MOVE_INDEX, build_tables
    >>> T = build_tables(torch.device("cpu"))
    >>> s = with_player(EnvState.zeros(1, torch.device("cpu")), CPU, move=MOVE_INDEX["fsmash"],
    ...                 action_frame=10.0, position_x=20.0, facing=-1.0)
    >>> [round(c.x, 2) for c in hitbox_circles(s.players, T, CPU)]
    [5.27, 5.15, 10.68, 9.02]
    >>> clock(3_601), Painter(3.0, "dodger", "dodge").size
    ('1:00.01', (768, 510))
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

from melee.enums import Action
from PIL import Image, ImageDraw, ImageFont

from melee_agent.arena import libmelee_data as d
from melee_agent.arena.env_state import AGENT, CPU, EnvState, PlayerState
from melee_agent.arena.dodge.frame import intangible
from melee_agent.arena.dodge.tables import Tables

NAMES = ("Fox", "Marth")  # by player column: AGENT, CPU
# The main view: the stage and the space around it where a game is played, 16:9. The blast
# zones (246 units out, 188 up, 140 down) would shrink the fighters to a few pixels, so they are
# shown in an inset map of the whole field instead.
VIEW = (-128.0, 128.0, -64.0, 80.0)  # left, right, bottom, top in game units
MAP_SCALE = 0.12  # the inset map's pixels per unit, relative to the main view's


class Circle(NamedTuple):
    """A hitbox in game units (y up)."""

    x: float
    y: float
    r: float


class Capsule(NamedTuple):
    """A body: every point within ``r`` of the upright segment from (x, bottom) to (x, top)."""

    x: float
    bottom: float
    top: float
    r: float


class FighterView(NamedTuple):
    """One fighter in one frame, as plain numbers."""

    name: str
    body: Capsule
    facing: float  # +1 right, -1 left
    hitboxes: tuple[Circle, ...]
    intangible: bool  # intangible or respawn-invulnerable: nothing can hit the body
    hitstun: bool  # in hitstun or shieldstun (the arena counts both in hitstun_frames_left)
    shield: float | None  # shield health while shielding, else None
    percent: float
    stock: int
    action: str  # libmelee's Action name
    action_frame: int


class FrameView(NamedTuple):
    """One frame of one game: what the painter draws."""

    frame: int  # frames played in the episode
    fighters: tuple[FighterView, FighterView]  # Fox (the agent), Marth (the CPU)
    cpu_level: int


def hitbox_circles(players: PlayerState, T: Tables, p: int, env: int = 0) -> tuple[Circle, ...]:
    """Player ``p``'s active hitboxes in environment ``env``, placed as ``_hits`` places them."""
    move = int(players.move[env, p])
    if move < 0:  # no move, or a timed action that is not one (LOCKED): no hitbox
        return ()
    # _hits reads the row of the current action frame, clamped to the table's last row.
    af = min(int(players.action_frame[env, p]), T.circles.shape[1] - 1)
    x, y, facing = (float(getattr(players, f)[env, p]) for f in ("position_x", "position_y", "facing"))
    return tuple(Circle(x + facing * float(ox), y + float(oy), float(r))
                 for ox, oy, r in T.circles[move, af].tolist() if r > 0)


def fight_hitbox_circles(players: PlayerState, p: int, env: int = 0) -> tuple[Circle, ...]:
    """In a fight: player ``p``'s hitboxes this frame, from the fight's move table (``arena/fight/moves.py``)."""
    from melee_agent.arena.fight.moves import NUM_SLOTS, H, fight_table_cpu  # noqa: PLC0415

    move = int(players.move[env, p])
    if move < 0:
        return ()
    FT = fight_table_cpu()
    af = min(int(players.action_frame[env, p]), FT.hit.shape[1] - 1)
    x, y, facing = (float(getattr(players, f)[env, p]) for f in ("position_x", "position_y", "facing"))
    out = []
    for k in range(4):
        e = FT.hit[move if move < 2 * NUM_SLOTS else 2 * NUM_SLOTS, af, k].tolist()
        if e[H.RADIUS] > 0 and e[H.ANYWHERE] == 0:
            out.append(Circle(x + facing * e[H.X], y + e[H.Y], e[H.RADIUS]))
    return tuple(out)


def hurtbox(players: PlayerState, T: Tables, p: int, env: int = 0) -> Capsule:
    """Player ``p``'s body in environment ``env``: the capsule ``_hits`` tests hitboxes against."""
    x, y = float(players.position_x[env, p]), float(players.position_y[env, p])
    return Capsule(x, y, y + float(T.height[p]), d.BODY_RADIUS)


def action_name(action_id: int) -> str:
    """libmelee's name of an action id (the id itself where libmelee has no name for it)."""
    try:
        return Action(action_id).name
    except ValueError:
        return f"action {action_id}"


def stage_title(name: str) -> str:
    """A stage's name as a title: ``yoshis_story`` is Yoshi's Story.

    >>> stage_title("yoshis_story"), stage_title("pokemon_stadium"), stage_title("dreamland")
    ("Yoshi's Story", 'Pokémon Stadium', 'Dream Land')
    """
    return STAGE_TITLES.get(name, name.replace("_", " ").title())


STAGE_TITLES = {"final_destination": "Final Destination", "battlefield": "Battlefield", "yoshis_story": "Yoshi's Story",
                "dreamland": "Dream Land", "fountain_of_dreams": "Fountain of Dreams",
                "pokemon_stadium": "Pokémon Stadium"}


def clock(frames: int) -> str:
    """Frames played (60 per second) as ``m:ss.cc``."""
    cs = frames * 100 // 60
    return f"{cs // 6000}:{cs // 100 % 60:02d}.{cs % 100:02d}"


def view_of(state: EnvState, T: Tables, env: int = 0) -> FrameView:
    """Environment ``env`` of ``state`` as a :class:`FrameView`."""
    ps = state.players
    untouchable = intangible(ps, T)
    fighters = []
    for p in (AGENT, CPU):
        shielding = int(ps.action[env, p]) == Action.SHIELD.value
        fighters.append(FighterView(
            name=NAMES[p], body=hurtbox(ps, T, p, env), facing=float(ps.facing[env, p]),
            hitboxes=(fight_hitbox_circles(ps, p, env) if state.fight is not None else hitbox_circles(ps, T, p, env)),
            intangible=bool(untouchable[env, p]),
            hitstun=float(ps.hitstun_frames_left[env, p]) > 0,
            shield=float(ps.shield_strength[env, p]) if shielding else None,
            percent=float(ps.percent[env, p]), stock=int(ps.stock[env, p]),
            action=action_name(int(ps.action[env, p])), action_frame=int(ps.action_frame[env, p])))
    return FrameView(int(state.game.episode_frame[env]), (fighters[0], fighters[1]),
                     int(state.game.cpu_level[env]))


# --- colours ---
RGB = tuple[int, int, int]


class Colors(NamedTuple):
    sky: RGB = (16, 21, 34)
    hud: RGB = (9, 12, 20)
    blast: RGB = (150, 52, 68)
    stage: RGB = (72, 80, 96)
    stage_top: RGB = (200, 210, 225)
    text: RGB = (240, 242, 246)
    dim: RGB = (140, 150, 166)
    hitbox: RGB = (229, 45, 45)
    hitbox_edge: RGB = (255, 190, 180)
    shield: RGB = (120, 210, 255)
    stun: RGB = (255, 255, 255)
    fox: RGB = (240, 160, 48)
    fox_edge: RGB = (120, 72, 12)
    marth: RGB = (96, 140, 230)
    marth_edge: RGB = (36, 58, 120)


C = Colors()
FIGHTER_COLORS = ((C.fox, C.fox_edge), (C.marth, C.marth_edge))
PALETTE_SIZE = 255  # entries drawn with: a GIF writer keeps the 256th for "unchanged" (melee_agent.report.video)


def _blend(a: RGB, b: RGB, t: float) -> RGB:
    return tuple(round(x + (y - x) * t) for x, y in zip(a, b))  # type: ignore[return-value]


@lru_cache(maxsize=1)
def palette_image() -> Image.Image:
    """One palette for every frame (so frames can be stored as differences): the colours drawn,
    and ramps from each text colour to the backgrounds text sits on, for anti-aliased text."""
    colors: list[RGB] = list(dict.fromkeys(C))
    for fg in (C.text, C.dim, C.fox, C.marth, C.stage_top):
        for bg in (C.sky, C.hud):
            colors += [_blend(bg, fg, i / 8) for i in range(1, 8)]
    colors = list(dict.fromkeys(colors))
    assert len(colors) <= PALETTE_SIZE
    # Pad with a colour never drawn, so no pixel is mapped to the spare entries.
    colors += [(255, 0, 255)] * (256 - len(colors))
    pal = Image.new("P", (1, 1))
    pal.putpalette([v for c in colors for v in c])
    return pal


@lru_cache(maxsize=None)
def _font(bold: bool, px: int) -> ImageFont.FreeTypeFont:
    # DejaVu ships with matplotlib (a dependency), so text looks the same everywhere.
    import matplotlib  # noqa: PLC0415

    name = "DejaVuSans-Bold.ttf" if bold else "DejaVuSans.ttf"
    return ImageFont.truetype(str(Path(matplotlib.get_data_path()) / "fonts" / "ttf" / name), px)


class Viewport(NamedTuple):
    """Game units to pixels: world (x0, y1) at pixel (left, top), ``s`` pixels per unit, y up."""

    left: float
    top: float
    x0: float
    y1: float
    s: float

    def px(self, x: float) -> float:
        return self.left + (x - self.x0) * self.s

    def py(self, y: float) -> float:
        return self.top + (self.y1 - y) * self.s

    def box(self, x0: float, y0: float, x1: float, y1: float) -> tuple[float, float, float, float]:
        """The pixel box of the world box (x0, y0)-(x1, y1)."""
        return (self.px(x0), self.py(y1), self.px(x1), self.py(y0))


class Painter:
    """Draws :class:`FrameView` s: the main view (:data:`VIEW`) at ``scale`` pixels per game unit,
    an inset map of the whole field with its blast zones, and a HUD below.

    ``agent_label`` (the policy) and ``game`` are printed on every frame; ``opponent_label`` names who played
    Marth (default: the CPU at the frame's level).
    """

    def __init__(self, scale: float, agent_label: str, game: str, opponent_label: str | None = None,
                 stage: str = "final_destination"):
        from melee_agent.arena.stages import stage_named  # noqa: PLC0415

        if scale <= 0:
            raise ValueError(f"--scale must be positive, got {scale}")
        left, right, bottom, top = VIEW
        self.view = Viewport(0.0, 0.0, left, top, float(scale))
        self.main_w, self.main_h = round((right - left) * scale), round((top - bottom) * scale)
        self.k = scale / 3.0  # text, lines and the HUD follow the scale (3: the reference)
        self.hud_h = round(78 * self.k)
        w, h = self.main_w, self.main_h + self.hud_h
        self.size = (w + w % 2, h + h % 2)  # even sizes: H.264 (MP4) needs them
        #: The stage drawn (arena/stages.py): its floor, platforms and blast zones.
        self.stage = stage_named(stage)
        self.blast_left, self.blast_right, self.blast_top, self.blast_bottom = self.stage.blast
        ms = scale * MAP_SCALE
        map_w = (self.blast_right - self.blast_left) * ms
        self.map = Viewport(self.main_w - map_w - 10 * self.k, 10 * self.k, self.blast_left, self.blast_top, ms)
        self._map_box = (self.map.px(self.blast_left), self.map.py(self.blast_top), self.map.px(self.blast_right),
                         self.map.py(self.blast_bottom) + 16 * self.k)  # with its label
        self.agent_label, self.game, self.opponent_label = agent_label, game, opponent_label
        self._stage = self._background()

    def _w(self, v: float) -> int:
        """A line width or text size of ``v`` pixels at the reference scale."""
        return max(1, round(v * self.k))

    @property
    def title(self) -> str:
        """The line at the top left: the game, and the stage where it is not Final Destination (as drawn before stages)."""
        where = "" if self.stage.name == "final_destination" else f" · {stage_title(self.stage.name)}"
        return f"arena · {self.game}{where}"

    # --- drawn once ---
    def _background(self) -> Image.Image:
        img = Image.new("RGB", self.size, C.sky)
        g = ImageDraw.Draw(img)
        g.rectangle((0, self.main_h, self.size[0], self.size[1]), fill=C.hud)
        v, e = self.view, self.stage.edge_x
        # The main floor: only its flat top and its two edges exist in the arena; the body below is
        # drawn for looks (its shape is not the game's).
        body = [(-e, 0), (e, 0), (e - 6, -10), (e - 26, -22), (e - 40, -42), (-(e - 40), -42), (-(e - 26), -22),
                (-(e - 6), -10)]
        g.polygon([(v.px(x), v.py(y)) for x, y in body], fill=C.stage)
        g.line((v.px(-e), v.py(0), v.px(e), v.py(0)), fill=C.stage_top, width=self._w(3))
        for side in (-e, e):  # the ledges
            g.line((v.px(side), v.py(0), v.px(side), v.py(-5)), fill=C.stage_top, width=self._w(3))
        for p in self.stage.platforms:  # soft platforms: a top to stand on, a thin body drawn for looks
            g.rectangle(v.box(p.left, p.height - 3, p.right, p.height), fill=C.stage)
            g.line((v.px(p.left), v.py(p.height), v.px(p.right), v.py(p.height)), fill=C.stage_top, width=self._w(3))
        # The inset map: the whole field to the blast zones (crossing one is a KO), the stage,
        # and the part the main view shows.
        m = self.map
        g.rectangle(m.box(self.blast_left, self.blast_bottom, self.blast_right, self.blast_top), fill=C.hud,
                    outline=C.blast, width=self._w(1))
        g.line((m.px(-e), m.py(0), m.px(e), m.py(0)), fill=C.stage_top, width=self._w(2))
        for p in self.stage.platforms:
            g.line((m.px(p.left), m.py(p.height), m.px(p.right), m.py(p.height)), fill=C.stage_top, width=1)
        g.rectangle(m.box(VIEW[0], VIEW[2], VIEW[1], VIEW[3]), outline=C.dim, width=1)
        g.text((m.px(self.blast_left), m.py(self.blast_bottom) + 3 * self.k), "blast zones", fill=C.blast,
               font=_font(False, self._w(11)))
        g.text((10 * self.k, 30 * self.k), "red: hitboxes · hollow: intangible · white edge: hitstun or shieldstun",
               fill=C.dim, font=_font(False, self._w(11)))
        return img

    # --- a frame ---
    def draw(self, view: FrameView) -> Image.Image:
        """The frame as an RGB image of :attr:`size`."""
        img = self._stage.copy()
        g = ImageDraw.Draw(img)
        for f, (fill, edge) in zip(view.fighters, FIGHTER_COLORS):
            self._fighter(g, f, fill, edge)
        v = self.view
        for f in view.fighters:  # hitboxes over both bodies, as Melee's debug view draws them
            for c in f.hitboxes:
                g.ellipse(v.box(c.x - c.r, c.y - c.r, c.x + c.r, c.y + c.r), fill=C.hitbox, outline=C.hitbox_edge,
                          width=1)
        for f, (fill, _) in zip(view.fighters, FIGHTER_COLORS):
            self._on_map(g, f, fill)
        g.rectangle((0, self.main_h, self.size[0], self.size[1]), fill=C.hud)  # bodies below the view stop here
        g.text((self.main_w / 2, 8 * self.k), clock(view.frame), fill=C.text, font=_font(True, self._w(22)),
               anchor="mt")
        g.text((10 * self.k, 10 * self.k), self.title, fill=C.dim, font=_font(False, self._w(13)))
        self._hud(g, view)
        return img

    def _fighter(self, g: ImageDraw.ImageDraw, f: FighterView, fill: RGB, edge: RGB) -> None:
        b, v = f.body, self.view
        # Hollow while nothing can hit it; a white outline while in hitstun or shieldstun.
        outline = C.stun if f.hitstun else (fill if f.intangible else edge)
        g.rounded_rectangle(v.box(b.x - b.r, b.bottom - b.r, b.x + b.r, b.top + b.r), radius=b.r * v.s,
                            fill=None if f.intangible else fill, outline=outline,
                            width=self._w(3) if f.intangible or f.hitstun else self._w(1.5))
        # Which way it faces: a nose at head height.
        root, tip, y = b.x + f.facing * (b.r - 0.5), b.x + f.facing * (b.r + 3.0), b.top - 1.0
        g.polygon([(v.px(root), v.py(y + 2.0)), (v.px(tip), v.py(y)), (v.px(root), v.py(y - 2.0))],
                  fill=None if f.intangible else fill, outline=fill if f.intangible else edge)
        if f.shield is not None:
            # The arena's shield has no size (any hit while shielding lands on it): the ring shows
            # that it is up, and shrinks with its health as Melee's does.
            r = (b.top - b.bottom + 2 * b.r) / 2 * (0.5 + 0.5 * max(f.shield, 0.0) / d.SHIELD_MAX) + 2.0
            cy = (b.top + b.bottom) / 2
            g.ellipse(v.box(b.x - r, cy - r, b.x + r, cy + r), outline=C.shield, width=self._w(2))
        g.text((v.px(b.x), v.py(b.top + b.r + 2.0)), f.name, fill=fill, font=_font(True, self._w(13)), anchor="mb")
        left, right, bottom, top = VIEW
        cx, cy = min(max(b.x, left), right), min(max((b.top + b.bottom) / 2, bottom), top)
        if (cx, cy) != (b.x, (b.top + b.bottom) / 2):
            # Off the main view (launched, or recovering from below): a marker at the view's
            # edge, pointing at it, as Melee's magnifier does.
            dx, dy = b.x - cx, (b.top + b.bottom) / 2 - cy
            n = max((dx * dx + dy * dy) ** 0.5, 1e-6)
            ux, uy = dx / n, dy / n
            px, py = v.px(cx) - ux * 14 * self.k, v.py(cy) + uy * 14 * self.k
            a = 9 * self.k
            mx0, my0, mx1, my1 = self._map_box
            if mx0 - 2 * a < px and py < my1 + 2 * a:  # not on the inset map: just below or left of it
                px, py = (px, my1 + 2 * a) if abs(ux) >= abs(uy) else (mx0 - 2 * a, py)
            g.polygon([(px + ux * a, py - uy * a), (px - uy * a * 0.6, py - ux * a * 0.6),
                       (px + uy * a * 0.6, py + ux * a * 0.6)], fill=fill)

    def _on_map(self, g: ImageDraw.ImageDraw, f: FighterView, fill: RGB) -> None:
        m, b = self.map, f.body
        x = min(max(b.x, self.blast_left), self.blast_right)
        y = min(max((b.top + b.bottom) / 2, self.blast_bottom), self.blast_top)
        r = 3 * self.k
        g.ellipse((m.px(x) - r, m.py(y) - r, m.px(x) + r, m.py(y) + r), fill=fill)

    def _hud(self, g: ImageDraw.ImageDraw, view: FrameView) -> None:
        w = self.size[0]
        labels = (f"Fox · {self.agent_label}", f"Marth · {self.opponent_label or f'CPU level {view.cpu_level}'}")
        for i, (f, label, (fill, _)) in enumerate(zip(view.fighters, labels, FIGHTER_COLORS)):
            x = w * (0.05 + 0.5 * i)
            top = self.main_h + 10 * self.k
            g.text((x, top), f"{f.percent:.0f}%", fill=C.text, font=_font(True, self._w(38)))
            tx = x + 118 * self.k
            g.text((tx, top), label, fill=fill, font=_font(True, self._w(15)))
            r = 5 * self.k
            for j in range(max(f.stock, 0)):  # stocks as dots
                cx, cy = tx + r + j * 3 * r, top + 30 * self.k
                g.ellipse((cx - r, cy - r, cx + r, cy + r), fill=fill)
            g.text((tx, top + 42 * self.k), f"{f.action} · frame {f.action_frame}", fill=C.dim,
                   font=_font(False, self._w(13)))
