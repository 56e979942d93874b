"""Play N episodes with a policy and report the paper's metric and damage figures.

Works on any :class:`~melee_agent.envs.vecenv.VecEnv` (the arena, Dolphin). Each of ``min(num_envs, N)`` environments contributes its first
episodes only, so short episodes are not over-counted.

Reported: ``untouched_share`` (episodes that reach the frame limit without a hit: the paper's
"untouched for a minute"; an episode cut short by a game's end or a Dolphin restart is counted,
but never as untouched), ``episodes_cut`` (how many were cut so), ``mean_seconds_to_first_hit``
(an episode never hit counts its full length), and per-episode means of damage taken and dealt,
stocks lost and taken. Where the
episodes were played against more than one CPU level (an arena with a level mix), ``per_level``
holds the same figures for each level and ``untouched_share_worst_level`` the lowest share.

Where episodes are whole games (fights: ``info.game_over``), an episode a Dolphin restart cut short
(no game's end) does not use up the ``episodes`` asked for: another game is played in its place (as
many as were asked for, at most), so ``eval --episodes 20`` reports 20 games where Dolphin restarted
now and then; the cut ones still count in ``episodes`` and ``episodes_cut``. The report adds
docs/design.md's game figures: ``games``, ``wins``, ``losses``, ``draws``, ``win_rate`` and stocks and damage per game
(a game's result by :func:`melee_agent.envs.rewards.game_result`), ``ko_causes`` and, over a level mix,
``win_rate_worst_level``.

``ko_causes`` counts the stocks the agent took by the move credited with each KO, as Melee credits it:
the agent's latest move that hit the opponent since the opponent last stood on the ground
(``info.ko_move``; SmashWiki "Self-destruct": the credit resets when a character touches the ground),
named by Fox's move (``fsmash``, ``uair``, ``bthrow``, ``shine``...; see :func:`ko_cause_names`);
``self_destruct`` where no hit was on credit (the opponent fell or missed its recovery by itself), and
``unknown`` where the environment does not report the credit (Dolphin so far). ``lost_causes`` counts
the agent's lost stocks the same way, by the opponent's move (``info.lost_move``, Marth's names).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Callable, Iterable

import torch

from melee_agent.envs.rewards import game_result, reached_limit
from melee_agent.envs.vecenv import VecEnv
from melee_agent.report.progress import progress_bar

if TYPE_CHECKING:
    from tqdm import tqdm

FPS = 60.0
UNKNOWN_CAUSE = "unknown"
SELF_DESTRUCT = "self_destruct"
#: ``info.ko_move`` / ``info.lost_move`` values that are not attack ids.
_NOT_A_MOVE = {0: UNKNOWN_CAUSE, -1: SELF_DESTRUCT}
#: A fight report's per-game figures (means over games), merged by :func:`merge_games`.
GAME_MEANS = ("stocks_taken_per_game", "stocks_lost_per_game", "damage_dealt_per_game", "damage_taken_per_game")


def _field(d: dict[str, Any], key: str, kind: type | tuple[type, ...], where: str) -> Any:
    """``d[key]``, checked to be a ``kind`` (a JSON number may be an int where a float is meant)."""
    if key not in d:
        raise ValueError(f"{where}: missing field {key!r}")
    v = d[key]
    if isinstance(v, bool) or not isinstance(v, kind):
        raise ValueError(f"{where}: field {key!r} must be {_kind_name(kind)}, got {v!r}")
    return v


def _kind_name(kind: type | tuple[type, ...]) -> str:
    return " or ".join(k.__name__ for k in (kind if isinstance(kind, tuple) else (kind,)))


@dataclass(frozen=True)
class GameFigures:
    """A fight report's game figures (episodes that ended as whole games: ``info.game_over``)."""

    games: int
    """Games played to their end."""
    wins: int
    """Games won (:func:`melee_agent.envs.rewards.game_result` > 0)."""
    losses: int
    """Games lost."""
    draws: int
    """Games neither won nor lost."""
    win_rate: float
    """``wins / games``."""
    stocks_taken_per_game: float
    """Opponent stocks taken, mean per game."""
    stocks_lost_per_game: float
    """Agent stocks lost, mean per game."""
    damage_dealt_per_game: float
    """Damage dealt (percent), mean per game."""
    damage_taken_per_game: float
    """Damage taken (percent), mean per game."""
    ko_causes: dict[str, int]
    """Stocks taken by the move credited with the KO (:func:`ko_cause_names`; ``self_destruct``, ``unknown``),
    most first."""
    lost_causes: dict[str, int] = field(default_factory=dict)
    """Stocks lost by the opponent's move credited with the KO (or ``self_destruct``, ``unknown``), most first."""

    def to_json(self) -> dict[str, Any]:
        return {"games": self.games, "wins": self.wins, "losses": self.losses, "draws": self.draws,
                "win_rate": self.win_rate, "stocks_taken_per_game": self.stocks_taken_per_game,
                "stocks_lost_per_game": self.stocks_lost_per_game, "damage_dealt_per_game": self.damage_dealt_per_game,
                "damage_taken_per_game": self.damage_taken_per_game, "ko_causes": dict(self.ko_causes),
                "lost_causes": dict(self.lost_causes)}

    @classmethod
    def from_json(cls, d: dict[str, Any], where: str = "game figures") -> GameFigures:
        causes = {"ko_causes": _field(d, "ko_causes", dict, where),
                  "lost_causes": _field(d, "lost_causes", dict, where) if "lost_causes" in d else {}}  # older files
        for key, c in causes.items():
            if not all(isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool) for k, v in c.items()):
                raise ValueError(f"{where}: field {key!r} must map move names to KO counts, got {c!r}")
        ints = {k: _field(d, k, int, where) for k in ("games", "wins", "losses", "draws")}
        floats = {k: float(_field(d, k, (int, float), where)) for k in ("win_rate", *GAME_MEANS)}
        return cls(**ints, **floats, **{k: dict(v) for k, v in causes.items()})


@dataclass(frozen=True)
class EvalResult:
    """What :func:`evaluate` reports: per-episode means over ``episodes`` counted episodes.

    :meth:`to_json` is the document ``melee-agent eval --json`` and ``eval.json`` carry
    (docs/design.md "Commands" and "Fights"); :meth:`from_json` reads one back.
    """

    episodes: int
    """Episodes counted."""
    untouched_share: float
    """Share of episodes that reached the frame limit without a hit (the paper's metric)."""
    episodes_cut: int
    """Episodes cut short by a game's end or a Dolphin restart (never counted untouched)."""
    mean_seconds_to_first_hit: float
    """Seconds to the first hit taken (an episode never hit counts its full length)."""
    damage_taken: float
    """Damage taken (percent), mean per episode."""
    damage_dealt: float
    """Damage dealt (percent), mean per episode."""
    stocks_lost: float
    """Agent stocks lost, mean per episode."""
    stocks_taken: float
    """Opponent stocks taken, mean per episode."""
    fights: GameFigures | None = None
    """The game figures, where episodes ended as whole games (fights); else None."""
    per_level: dict[int, EvalResult] | None = None
    """The same figures for each CPU level, where more than one was played; else None."""
    untouched_share_worst_level: float | None = None
    """The lowest ``untouched_share`` in ``per_level`` (None without a level mix)."""
    win_rate_worst_level: float | None = None
    """The lowest win rate in ``per_level``, where every level played games (None otherwise)."""

    @property
    def win_rate(self) -> float | None:
        """The fights' win rate, None where no game ended."""
        return self.fights.win_rate if self.fights is not None else None

    def with_worst_levels(self) -> EvalResult:
        """This result with the worst-level figures filled in by its own where it has no level mix."""
        return replace(self, untouched_share_worst_level=self.untouched_share if self.untouched_share_worst_level
                       is None else self.untouched_share_worst_level,
                       win_rate_worst_level=self.win_rate if self.win_rate_worst_level is None
                       else self.win_rate_worst_level)

    def to_json(self) -> dict[str, Any]:
        """The JSON document: the figures by name, the game figures flat beside them, ``per_level`` keyed
        by the level as text; fields that are None are left out."""
        out: dict[str, Any] = {
            "episodes": self.episodes, "untouched_share": self.untouched_share, "episodes_cut": self.episodes_cut,
            "mean_seconds_to_first_hit": self.mean_seconds_to_first_hit, "damage_taken": self.damage_taken,
            "damage_dealt": self.damage_dealt, "stocks_lost": self.stocks_lost, "stocks_taken": self.stocks_taken}
        if self.fights is not None:
            out.update(self.fights.to_json())
        if self.per_level is not None:
            out["per_level"] = {str(lv): r.to_json() for lv, r in self.per_level.items()}
        if self.untouched_share_worst_level is not None:
            out["untouched_share_worst_level"] = self.untouched_share_worst_level
        if self.win_rate_worst_level is not None:
            out["win_rate_worst_level"] = self.win_rate_worst_level
        return out

    @classmethod
    def from_json(cls, d: dict[str, Any], where: str = "evaluation result") -> EvalResult:
        """The result a :meth:`to_json` document holds; other keys (``policy``, ``seconds``...) are ignored.
        A missing or mistyped field raises a ValueError naming it."""
        if not isinstance(d, dict):
            raise ValueError(f"{where}: must be a JSON object, got {type(d).__name__}")
        ints = {k: _field(d, k, int, where) for k in ("episodes", "episodes_cut")}
        floats = {k: float(_field(d, k, (int, float), where)) for k in (
            "untouched_share", "mean_seconds_to_first_hit", "damage_taken", "damage_dealt", "stocks_lost",
            "stocks_taken")}
        fights = GameFigures.from_json(d, where) if "games" in d else None
        per_level = None
        if "per_level" in d:
            raw = _field(d, "per_level", dict, where)
            per_level = {}
            for lv, v in raw.items():
                if not str(lv).isdigit():
                    raise ValueError(f"{where}: field 'per_level' must be keyed by CPU level, got {lv!r}")
                per_level[int(lv)] = cls.from_json(v, f"{where} per_level {lv}")
        worst = {k: float(_field(d, k, (int, float), where)) for k in ("untouched_share_worst_level",
                                                                       "win_rate_worst_level") if k in d}
        return cls(**ints, **floats, fights=fights, per_level=per_level, **worst)



def ko_cause_names(player: str = "agent") -> dict[int, str]:
    """The game's attack ids -> the names ``ko_causes`` (``player="agent"``: Fox's moves) and ``lost_causes``
    (``"opponent"``: Marth's) count by; -1 is ``self_destruct`` and 0 ``unknown``."""
    from melee_agent.arena.fight.moves import AGENT_COL, CPU_COL, SLOT_NAMES, fight_table_cpu, row  # noqa: PLC0415

    col = {"agent": AGENT_COL, "opponent": CPU_COL}[player]
    specials = ({"down_b": "shine", "up_b": "firefox", "side_b": "illusion"} if player == "agent" else
                {"down_b": "counter", "up_b": "dolphin_slash", "side_b": "dancing_blade"})
    rename = {**specials, "dash_grab": "grab", "jab1": "jab", "jab2": "jab", "jab3": "jab"}
    t = fight_table_cpu()
    out: dict[int, str] = dict(_NOT_A_MOVE)
    for slot, name in enumerate(SLOT_NAMES):
        aid = int(t.attack_id[row(col, slot)])
        if aid and aid not in out:
            out[aid] = rename.get(name.lower(), name.lower())
    return out


def _count_causes(causes: list[dict[str, int]], happened: torch.Tensor, move: torch.Tensor | None,
                  count: torch.Tensor, names: dict[int, str]) -> None:
    """Add each environment's ``count`` stocks (where ``happened``) to its dict under the credited move's name."""
    move = move if move is not None else torch.zeros_like(count)
    for i, aid, n in zip(happened.nonzero().view(-1).tolist(), move[happened].tolist(), count[happened].tolist()):
        name = names.get(int(aid), UNKNOWN_CAUSE)
        causes[i][name] = causes[i].get(name, 0) + int(n)


def evaluate(env: VecEnv, policy: Callable[[torch.Tensor], torch.Tensor], episodes: int, progress: bool = True,
             desc: str = "eval", bar: tqdm | None = None) -> EvalResult:
    """Play ``episodes`` episodes with ``policy`` on ``env``; the figures as an :class:`EvalResult`.

    ``progress``: a bar of its own counting the episodes, on a terminal (:mod:`melee_agent.report.progress`);
    ``bar``: an open bar to advance instead (several evaluations counted as one piece of work).
    """
    if episodes <= 0:
        raise ValueError(f"episodes must be positive, got {episodes}")
    B = env.num_envs
    per_env = math.ceil(episodes / B)
    quota = torch.full((B,), per_env, dtype=torch.long, device=env.device)
    # Spread the remainder so exactly `episodes` are counted.
    extra = per_env * B - episodes
    if extra:
        quota[B - extra:] -= 1
    done_count = torch.zeros(B, dtype=torch.long, device=env.device)
    replayed = torch.zeros(B, dtype=torch.long, device=env.device)  # fights cut by a restart, played again
    whole_games = bool(getattr(env, "whole_games", False))  # the arena and Dolphin say so
    first_hit = torch.zeros(B, device=env.device)  # per running episode: frame of first hit (0 = none)
    acc = {k: torch.zeros(B, device=env.device) for k in ("damage_taken", "damage_dealt", "stocks_lost", "stocks_taken")}
    rows: list[dict[str, Any]] = []
    running = {k: torch.zeros(B, device=env.device) for k in acc}
    causes: list[dict[str, int]] = [{} for _ in range(B)]  # per running episode: its KOs by cause
    lost: list[dict[str, int]] = [{} for _ in range(B)]  # ... and its lost stocks
    names: dict[str, dict[int, str]] = {}
    own_bar = bar is None
    if bar is None:
        bar = progress_bar(episodes, desc, unit="ep", enabled=progress)
    obs = env.reset()
    # step_async lets every environment decide on its own clock (no waiting on another's
    # macro); its per-macro values count where info.ready says the macro ended.
    while True:
        counting = done_count < quota
        if not bool(counting.any()):
            break
        obs, _, done, info = env.step_async(policy(obs))
        ready = info.ready
        for k in running:
            running[k] += torch.where(ready, info[k].float(), 0.0)
        new_hit = info.hit & ready & (first_hit == 0)
        first_hit = torch.where(new_hit, info.episode_frame.float(), first_hit)
        for who, tally, move, count in (("agent", causes, info.ko_move, info.stocks_taken),
                                        ("opponent", lost, info.lost_move, info.stocks_lost)):
            happened = ready & (count > 0)
            if bool(happened.any()):
                if who not in names:
                    names[who] = ko_cause_names(who)
                _count_causes(tally, happened, move, count, names[who])
        finished = done & counting
        # A whole game's episode that ended with no game's end (a Dolphin restart cut it) is cut
        # wherever its clock stood, and one more is played in its place (as many as asked, at most).
        cut_now = (info.truncated & ~info.game_over if whole_games else
                   info.truncated & ~reached_limit(info.truncated, info.episode_frame, env.max_frames))
        cut_game = finished & cut_now & (replayed < quota) if whole_games else torch.zeros_like(finished)
        if bool(finished.any()):
            idx = finished.nonzero().view(-1).tolist()
            ep_frames = info.episode_frame.tolist()
            levels = info.cpu_level.tolist()
            fh = first_hit.tolist()
            at_limit = reached_limit(info.truncated, info.episode_frame, env.max_frames).tolist()
            cut = cut_now.tolist()
            vals = {k: v.tolist() for k, v in running.items()}
            over = info.game_over.tolist()
            result = game_result(info.agent_stocks, info.opponent_stocks, info.agent_percent,
                                 info.opponent_percent).tolist()
            for i in idx:
                hit_frame = fh[i]
                rows.append({"cpu_level": int(levels[i]), "untouched": float(hit_frame == 0 and at_limit[i]),
                             "cut": float(cut[i]),
                             "seconds_to_first_hit": (hit_frame if hit_frame else ep_frames[i]) / FPS,
                             "game_over": float(over[i]), "result": float(result[i]) if over[i] else 0.0,
                             "ko_causes": causes[i], "lost_causes": lost[i], **{k: vals[k][i] for k in running}})
            bar.update(len(idx) - int(cut_game.sum()))
        replayed += cut_game.long()
        done_count += (done & ~cut_game).long()
        for k in running:
            running[k] = torch.where(done, 0.0, running[k])
        first_hit = torch.where(done, 0.0, first_hit)
        for i in done.nonzero().view(-1).tolist():
            causes[i], lost[i] = {}, {}
    if own_bar:
        bar.close()
    out = summarize(rows)
    levels = sorted({int(r["cpu_level"]) for r in rows})
    if len(levels) > 1:
        per_level = {lv: summarize([r for r in rows if r["cpu_level"] == lv]) for lv in levels}
        rates = [v.win_rate for v in per_level.values() if v.win_rate is not None]
        out = replace(out, per_level=per_level,
                      untouched_share_worst_level=min(v.untouched_share for v in per_level.values()),
                      win_rate_worst_level=min(rates) if len(rates) == len(per_level) else None)
    return out


def summarize(rows: list[dict[str, Any]]) -> EvalResult:
    """The reported means over per-episode rows (one row per counted episode)."""
    n = len(rows)
    mean = lambda k: sum(r[k] for r in rows) / n  # noqa: E731
    fights = None
    games = [r for r in rows if r.get("game_over")]
    if games:
        g = len(games)
        per_game = lambda k: sum(r[k] for r in games) / g  # noqa: E731
        wins, losses = sum(r["result"] > 0 for r in games), sum(r["result"] < 0 for r in games)
        fights = GameFigures(games=g, wins=wins, losses=losses, draws=g - wins - losses, win_rate=wins / g,
                             stocks_taken_per_game=per_game("stocks_taken"), stocks_lost_per_game=per_game("stocks_lost"),
                             damage_dealt_per_game=per_game("damage_dealt"),
                             damage_taken_per_game=per_game("damage_taken"),
                             ko_causes=sum_causes(r.get("ko_causes", {}) for r in games),
                             lost_causes=sum_causes(r.get("lost_causes", {}) for r in games))
    return EvalResult(episodes=n, untouched_share=mean("untouched"),
                      episodes_cut=int(sum(r.get("cut", 0.0) for r in rows)),
                      mean_seconds_to_first_hit=mean("seconds_to_first_hit"), damage_taken=mean("damage_taken"),
                      damage_dealt=mean("damage_dealt"), stocks_lost=mean("stocks_lost"),
                      stocks_taken=mean("stocks_taken"), fights=fights)


def sum_causes(counts: Iterable[dict[str, int]]) -> dict[str, int]:
    """Several ``ko_causes`` dicts added up, most KOs first."""
    total: dict[str, int] = {}
    for c in counts:
        for k, v in c.items():
            total[k] = total.get(k, 0) + int(v)
    return dict(sorted(total.items(), key=lambda kv: (-kv[1], kv[0])))


def merge_games(results: list[EvalResult]) -> tuple[GameFigures | None, float | None]:
    """The fight figures of several reports (one per CPU level) as one: counts added, per-game means
    weighted by games, ``ko_causes`` and ``lost_causes`` added; and the lowest win rate (``win_rate_worst_level``).
    ``(None, None)`` where none has games."""
    fs = [r.fights for r in results if r.fights is not None and r.fights.games]
    if not fs:
        return None, None
    g = sum(f.games for f in fs)
    wins, losses, draws = (sum(getattr(f, k) for f in fs) for k in ("wins", "losses", "draws"))
    means = {k: sum(getattr(f, k) * f.games for f in fs) / g for k in GAME_MEANS}
    merged = GameFigures(games=g, wins=wins, losses=losses, draws=draws, win_rate=wins / g, **means,
                         ko_causes=sum_causes(f.ko_causes for f in fs), lost_causes=sum_causes(f.lost_causes for f in fs))
    return merged, min(f.win_rate for f in fs)
