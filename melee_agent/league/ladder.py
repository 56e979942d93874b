"""A round robin in the arena: models (either port, their own characters) and CPU levels, rated by Elo.

``melee-agent ladder MODEL... [--cpu-levels L...]`` plays every pair of members: two models play half their
games with each on port 0 (DESIGN.md "Ports": each model reads the game from its own port's view); a model
plays a CPU level from port 0 against the CPU's Marth on port 1 (the CPU plays Marth only). Every game is
a whole fight (or one cut by ``clock_frames``: the clock's end decides it by stocks, then percent). The
records go through :func:`melee_agent.league.ratings.fit`, with half a virtual draw per pair so a clean sweep
stays finite.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from melee_agent.league import ratings
from melee_agent.report.text_table import text_table

if TYPE_CHECKING:
    from tqdm import tqdm

#: Virtual draws per pair in the fit (a guess: enough to keep a 100% record finite, small beside 100 games).
PRIOR_GAMES = 0.5


@dataclass(frozen=True)
class Member:
    """One entrant: a model file (``path``, playing ``character``) or the CPU at ``level`` (Marth)."""

    name: str
    path: str | None = None
    level: int | None = None
    character: str = "marth"


def model_member(path: str | Path, action_set: str, character: str | None = None, full_path: bool = False) -> Member:
    """A model file as an entrant; its character from the file's metadata (Fox where the file predates it),
    or ``character`` where given (a model plays any character's port; its name then says which). The name is
    the file's stem, or its whole path where that is ``model`` or ``full_path`` asks."""
    from melee_agent.rl.model import load_model  # noqa: PLC0415

    _, meta = load_model(path, action_set=action_set, state_layout=None)  # any layout: play() builds the arena in it
    name = str(path) if full_path or Path(path).stem == "model" else Path(path).stem
    own = meta.get("character", "fox")
    if character is not None and character != own:
        return Member(f"{name} as {character}", path=str(path), character=character)
    return Member(name, path=str(path), character=own)


def split_model_arg(arg: str) -> tuple[str, str | None]:
    """``MODEL[:CHARACTER]`` as (path, character or None): ``a.safetensors:marth`` plays Marth whatever the file
    records; a suffix that names no character stays part of the path.

    >>> split_model_arg("runs/a/model.safetensors:marth")
    ('runs/a/model.safetensors', 'marth')
    >>> split_model_arg("runs/a/model.safetensors")
    ('runs/a/model.safetensors', None)
    """
    from melee_agent.arena.ports import CHARACTER_NAMES  # noqa: PLC0415

    head, sep, tail = arg.rpartition(":")
    if sep and tail.lower() in CHARACTER_NAMES:
        return head, tail.lower()
    return arg, None


def _layout(a: Member, b: Member) -> str:
    """The state layout both models read (the arena shows both ports the same one); a ValueError where they differ."""
    from melee_agent.envs.state import STATE_LAYOUT  # noqa: PLC0415
    from melee_agent.io.safetensors_header import read_metadata  # noqa: PLC0415

    layouts = {}
    for m in (a, b):
        if m.path is not None:
            with open(m.path, "rb") as f:
                layouts[m.name] = read_metadata(f.read()).get("state_layout", STATE_LAYOUT)
    if len(set(layouts.values())) > 1:
        raise ValueError(f"{a.name} and {b.name} read different state layouts ({layouts}): they cannot share an arena")
    return next(iter(layouts.values()), STATE_LAYOUT)


def _policy(member: Member, action_set: str, device: str):
    from melee_agent.rl.policies import model_policy  # noqa: PLC0415

    return model_policy(member.path, action_set, device)


def play(a: Member, b: Member, games: int, action_set: str = "fight", clock_frames: int | None = None,
         seed: int = 0, device: str = "cpu", tally: dict[str, int] | None = None,
         bar: tqdm | None = None) -> tuple[int, int, int]:
    """``a`` (port 0) against ``b`` (port 1) for ``games`` games side by side: ``a``'s wins, losses, draws.
    ``bar``, where given, counts the games as they end.

    ``tally``, where given, gains ``at_time``: the games the clock ended with both sides still holding a stock
    (decided by stocks, then percent, as Melee's timeout does), so a short clock's results can be read for what
    they are.
    """
    from melee_agent.arena import Arena  # noqa: PLC0415
    from melee_agent.arena.ports import Opponents  # noqa: PLC0415

    if a.path is None:
        raise ValueError(f"{a.name}: the CPU plays port 1 only (Marth)")
    kw: dict[str, Any] = dict(game="fight", action_set=action_set, reward="fight", seed=seed, device=device,
                              max_frames=clock_frames, state_layout=_layout(a, b))
    if b.path is None:
        env = Arena(games, cpu_level=int(b.level), characters=(a.character, "marth"), **kw)
    else:
        env = Arena(games, characters=(a.character, b.character), **kw)
        env.set_opponents(Opponents.split([_policy(b, action_set, device)], games, env, names=[b.name]))
    act = _policy(a, action_set, device)
    obs = env.reset()
    result = torch.zeros(games, dtype=torch.long)  # 0 playing, 1 won, 2 lost, 3 drawn
    ready = torch.ones(games, dtype=torch.bool)
    actions = torch.zeros(games, dtype=torch.long)
    at_time = 0
    while bool((result == 0).any()):
        actions = torch.where(ready, act(obs), actions)
        obs, _, done, info = env.step_async(actions)
        ready = info.ready
        over = info.game_over.cpu() & (result == 0)
        if bool(over.any()):
            mine, theirs = info.agent_stocks.cpu(), info.opponent_stocks.cpu()
            pa, pb = info.agent_percent.cpu(), info.opponent_percent.cpu()
            won = (mine > theirs) | ((mine == theirs) & (pa < pb))
            lost = (mine < theirs) | ((mine == theirs) & (pa > pb))
            result = torch.where(over, torch.where(won, 1, torch.where(lost, 2, 3)), result)
            at_time += int((over & (mine > 0) & (theirs > 0)).sum())
            if bar is not None:
                bar.update(int(over.sum()))
    if tally is not None:
        tally["at_time"] = tally.get("at_time", 0) + at_time
    return int((result == 1).sum()), int((result == 2).sum()), int((result == 3).sum())


def round_robin(members: list[Member], games: int, action_set: str = "fight", clock_frames: int | None = None,
                seed: int = 0, device: str = "cpu", progress: bool = True) -> dict[str, Any]:
    """Every pair's record and every member's rating (the report ``ladder --json`` writes). ``progress``: a bar
    over every pair's games, with the time left, where stderr is a terminal."""
    from melee_agent.report.progress import progress_bar  # noqa: PLC0415

    if len({m.name for m in members}) != len(members):
        raise ValueError(f"entrant names must differ: {[m.name for m in members]}")
    if games < 2:
        raise ValueError(f"games must be at least 2 (one per port between two models), got {games}")
    records: dict[tuple[str, str], tuple[int, int, int]] = {}
    by_port: dict[tuple[str, str], dict[str, dict[str, int]]] = {}  # two models: a's record from each port
    at_time: dict[tuple[str, str], dict[str, int]] = {}  # each pair's games the clock decided
    # Two CPUs play no game (the CPU plays port 1 only).
    pairs = [(a, b) for a, b in combinations(members, 2) if a.path is not None or b.path is not None]
    bar = progress_bar(games * len(pairs), "ladder", enabled=progress)
    for a, b in pairs:
        if a.path is None:
            a, b = b, a
        bar.set_description(f"ladder: {a.name} vs {b.name}")
        tally = at_time[(a.name, b.name)] = {}
        if b.path is None:
            records[(a.name, b.name)] = play(a, b, games, action_set, clock_frames, seed, device, tally, bar)
            by_port[(a.name, b.name)] = {"a_on_port_0": _record(*records[(a.name, b.name)])}
            continue
        half = games // 2
        w1, l1, d1 = play(a, b, half, action_set, clock_frames, seed, device, tally, bar)
        w2, l2, d2 = play(b, a, games - half, action_set, clock_frames, seed + 1, device, tally, bar)
        records[(a.name, b.name)] = (w1 + l2, l1 + w2, d1 + d2)
        by_port[(a.name, b.name)] = {"a_on_port_0": _record(w1, l1, d1), "a_on_port_1": _record(l2, w2, d2)}
    bar.close()
    elo = ratings.fit(records, prior_games=PRIOR_GAMES)
    rows = [{"name": m.name, "kind": "model" if m.path else "cpu", "character": m.character,
             "path": m.path, "cpu_level": m.level, "elo": round(elo.get(m.name, ratings.ANCHOR), 1)}
            for m in members]
    rows.sort(key=lambda r: -r["elo"])
    return {"games_per_pair": games, "seed": seed, "clock_frames": clock_frames, "action_set": action_set, "ratings": rows,
            "records": [{"a": a, "b": b, "wins": w, "losses": lo, "draws": d, "by_port": by_port[(a, b)],
                         "at_time": at_time[(a, b)].get("at_time", 0)}
                        for (a, b), (w, lo, d) in records.items()]}


def _record(wins: int, losses: int, draws: int) -> dict[str, int]:
    return {"wins": wins, "losses": losses, "draws": draws}


def _share(r: dict[str, int]) -> str:
    n = r["wins"] + r["losses"] + r["draws"]
    return f"{r['wins']}-{r['losses']}-{r['draws']} ({100.0 * r['wins'] / n:.1f}%)" if n else "-"


def format_table(doc: dict[str, Any]) -> str:
    """The ratings, then every pair's record from ``a``'s side: in all and from each port (W-L-D, won %)."""
    rows = [["entrant", "kind", "character", "Elo"]]
    rows += [[r["name"], r["kind"] + (f" {r['cpu_level']}" if r["cpu_level"] else ""), r["character"], f"{r['elo']:.0f}"]
             for r in doc["ratings"]]
    pairs = [["a", "b", "a's record", "a on port 0", "a on port 1", "at time"]]
    for r in doc["records"]:
        ports = r.get("by_port", {})
        n = r["wins"] + r["losses"] + r["draws"]
        timed = f"{r['at_time']} ({100.0 * r['at_time'] / n:.0f}%)" if "at_time" in r and n else "-"
        pairs.append([r["a"], r["b"], _share(r),
                      *(_share(ports[k]) if k in ports else "-" for k in ("a_on_port_0", "a_on_port_1")), timed])
    return text_table(rows) + "\n\n" + text_table(pairs)


def plot(doc: dict[str, Any], path: str | Path) -> None:
    """The ratings as bars, best first."""
    from melee_agent.report.plots import figure  # noqa: PLC0415

    names = [r["name"] for r in doc["ratings"]]
    elo = [r["elo"] for r in doc["ratings"]]
    with figure(path, (max(4.0, 0.8 * len(names) + 2), 3.5), "ladder: Elo from a round robin") as ax:
        ax.bar(range(len(names)), elo, color=["#3b7dd8" if r["kind"] == "model" else "#999999" for r in doc["ratings"]])
        ax.set_xticks(range(len(names)), names, rotation=30, ha="right", fontsize=8)
        ax.set_ylabel("Elo")
        lo = min(elo)
        ax.set_ylim(lo - 50, max(elo) + 50)
        ax.grid(axis="y", alpha=0.3)


def plot_league(league: dict[str, Any], path: str | Path, final_step: int | None = None) -> None:
    """A league run's ratings (``eval.json``'s ``league``): each snapshot's Elo at the train step it was taken,
    the main's at ``final_step`` (its last train step; the last snapshot's where not given), and each CPU
    level's Elo as a labelled grey line. A league that improves draws a rising line of snapshots climbing
    through the CPU levels."""
    from melee_agent.report.plots import figure  # noqa: PLC0415

    snaps = sorted((m["joined_at_step"], m["elo"]) for m in league["members"]
                   if m["kind"] == "snapshot" and m["joined_at_step"] is not None)
    cpus = [(m["cpu_level"], m["elo"]) for m in league["members"] if m["kind"] == "cpu"]
    last = final_step if final_step is not None else max([s for s, _ in snaps], default=0)
    with figure(path, (6.5, 3.8), "league: Elo of the main's snapshots and of the CPU levels") as ax:
        for level, elo in cpus:
            ax.axhline(elo, color="#999999", lw=0.8, ls="--")
            ax.text(1.01, elo, f"cpu{level}", color="#666666", fontsize=7, va="center",
                    transform=ax.get_yaxis_transform())
        if snaps:
            ax.plot([s for s, _ in snaps], [e for _, e in snaps], "o-", color="#3b7dd8", label="snapshots")
        ax.plot([last], [league["main_elo"]], "*", color="#d62728", ms=12, label="main at the end")
        ax.set_xlabel("train step the snapshot was taken at")
        ax.set_ylabel("Elo (from the league's games)")
        ax.grid(alpha=0.3)
        ax.legend(loc="lower right", fontsize=8)
