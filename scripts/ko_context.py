#!/usr/bin/env python
"""Which moves Fox hits Marth with, and what each KO's last hit found Marth doing: arena fights, frame by frame.

Usage::

    python scripts/ko_context.py --policy runs/fight-<time>/model.safetensors [--cpu-level 9] [--games 30]
                                 [--seed 4242] [--delay-frames 0 --action-set fight] [--json FILE]

A ``fight-d18`` model plays with ``--delay-frames 18 --action-set fight:18``.

The evaluation report counts KOs by the move credited with them (``ko_causes``); this looks one step
further back. It plays ``--games`` whole games side by side (op by op, following every frame through
``Arena.on_frame``) and counts:

* every hit Fox lands on Marth (Marth's percent rises, his stock does not fall), by the move credited
  (``ko_credit``: Fox's latest move that hit since Marth last stood), with the damage it dealt;
* for each KO credited to a move, the hit that gave it: the move, whether Marth stood or was in the air
  the frame before, and whether he was above Fox, level with him or below (more than 8 units apart);
* the share of each of the policy's decisions (its macros).

Exactly ``--games`` games are counted: each environment's first game, to its end (the next game an
environment starts while others play on is not counted). ``arena_totals`` is the arena's own account of
the same games (damage dealt and stocks taken, from each decision's ``info``), which the hit and KO
counts must agree with.
"""

from __future__ import annotations

import argparse
import collections
import sys

import torch

from melee_agent.envs.actions import get_action_set
from melee_agent.arena import Arena
from melee_agent.arena.env_state import AGENT, CPU, EnvState
from melee_agent.report.fidelity import ATTACK_NAMES
from melee_agent.io.files import atomic_write_json
from melee_agent.rl.policies import make_policy
from melee_agent.report.text_table import text_table

LEVEL_APART = 8.0  # units of height between the two fighters' positions that count as "above" / "below"


class Counts:
    """What the frame hook saw, across every environment."""

    def __init__(self, num_envs: int):
        self.hits: collections.Counter[str] = collections.Counter()
        self.damage: collections.Counter[str] = collections.Counter()
        self.kos: collections.Counter[str] = collections.Counter()
        self.ko_context: collections.Counter[tuple[str, str, str]] = collections.Counter()
        self.last_hit: list[tuple[str, str, str] | None] = [None] * num_envs
        self.prev: EnvState | None = None
        #: environments still playing the game that is counted (their first)
        self.counting = torch.ones(num_envs, dtype=torch.bool)

    def on_frame(self, s: EnvState) -> None:
        p = self.prev
        self.prev = s
        if p is None or s.fight is None:
            return
        pct, stock = s.players.percent[:, CPU], s.players.stock[:, CPU]
        hit = (pct > p.players.percent[:, CPU] + 1e-3) & (stock == p.players.stock[:, CPU]) & self.counting
        for i in hit.nonzero().view(-1).tolist():
            move = _name(s.fight.ko_credit[i, CPU])
            dy = float(p.players.position_y[i, CPU] - p.players.position_y[i, AGENT])
            where = "above" if dy > LEVEL_APART else "below" if dy < -LEVEL_APART else "level"
            self.hits[move] += 1
            self.damage[move] += float(pct[i] - p.players.percent[i, CPU])
            self.last_hit[i] = (move, "ground" if p.players.on_ground[i, CPU] > 0 else "air", where)
        for i in ((stock < p.players.stock[:, CPU]) & self.counting).nonzero().view(-1).tolist():
            cause = s.fight.ko_cause[i, CPU]
            self.kos["self_destruct" if cause < 0 else _name(cause)] += 1
            if cause >= 0:
                seen = self.last_hit[i]
                # The credited move's last hit, as seen; a hit this hook did not see is named as such.
                self.ko_context[seen if seen is not None and seen[0] == _name(cause) else (_name(cause), "?", "?")] += 1
            self.last_hit[i] = None


def _name(attack_id: torch.Tensor) -> str:
    return str(ATTACK_NAMES.get(int(attack_id), int(attack_id)))


def play(policy: str, cpu_level: int, games: int, seed: int, clock_frames: int | None = None,
         delay_frames: int = 0, action_set: str = "fight") -> dict:
    """Play ``games`` games side by side to their ends and count (``clock_frames``: a shorter clock, for tests)."""
    env = Arena(games, cpu_level=cpu_level, seed=seed, game="fight", max_frames=clock_frames, delay_frames=delay_frames,
                action_set=action_set)
    act = make_policy(policy, env.action_set, seed=seed, delay_frames=delay_frames)
    counts = Counts(games)
    env.on_frame = counts.on_frame
    names = get_action_set(env.action_set).names
    decisions: collections.Counter[str] = collections.Counter()
    dealt, taken = 0.0, 0
    obs = env.reset()
    while bool(counts.counting.any()):
        actions = act(obs)
        counting = counts.counting.clone()
        decisions.update(names[a] for a in actions[counting].tolist())
        obs, _, done, info = env.step(actions)
        dealt += float(info.damage_dealt[counting].sum())
        taken += int(info.stocks_taken[counting].sum())
        counts.counting &= ~done.cpu()
    share = lambda c: {k: round(v / max(1, sum(c.values())), 4) for k, v in c.most_common()}  # noqa: E731
    return {"policy": policy, "cpu_level": cpu_level, "games": games, "seed": seed, "delay_frames": delay_frames,
            "arena_totals": {"damage_dealt": round(dealt, 1), "stocks_taken": taken},
            "hits": dict(counts.hits.most_common()), "hit_share": share(counts.hits),
            "damage": {k: round(v, 1) for k, v in counts.damage.most_common()}, "kos": dict(counts.kos.most_common()),
            "ko_context": [{"move": m, "marth": g, "marth_vs_fox": w, "kos": n}
                           for (m, g, w), n in counts.ko_context.most_common()],
            "decisions": share(decisions)}


def report(r: dict) -> str:
    lines = [f"{r['policy']} against level {r['cpu_level']}, {r['games']} games (seed {r['seed']})", ""]
    rows = [["move", "hits", "share", "damage"]]
    rows += [[m, str(n), f"{100 * r['hit_share'][m]:.1f}%", f"{r['damage'][m]:.0f}"] for m, n in r["hits"].items()]
    lines += [text_table(rows), ""]
    kos = sum(r["kos"].values())
    rows = [["KO's last hit", "Marth", "Marth vs Fox", "KOs", "share"]]
    rows += [[c["move"], c["marth"], c["marth_vs_fox"], str(c["kos"]), f"{100 * c['kos'] / max(1, kos):.1f}%"]
             for c in r["ko_context"]]
    lines += [text_table(rows), "", "KOs by credit: " + ", ".join(f"{k} {v}" for k, v in r["kos"].items()),
                                 "decisions: " + ", ".join(f"{k} {100 * v:.1f}%" for k, v in
                                                          list(r["decisions"].items())[:12])]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--policy", required=True, help="a .safetensors model file (fight action set) or fighter, random...")
    ap.add_argument("--cpu-level", type=int, default=9)
    ap.add_argument("--games", type=int, default=30)
    ap.add_argument("--seed", type=int, default=4242)
    ap.add_argument("--delay-frames", type=int, default=0, help="input delay (a fight-d18 model plays at 18)")
    ap.add_argument("--action-set", default="fight", help="the model's action set (fight-d18: fight:18)")
    ap.add_argument("--json", help="also write the counts here")
    args = ap.parse_args(argv)
    if not 1 <= args.cpu_level <= 9 or args.games < 1:
        ap.error("--cpu-level must be 1-9 and --games >= 1")
    r = play(args.policy, args.cpu_level, args.games, args.seed, delay_frames=args.delay_frames,
             action_set=args.action_set)
    print(report(r))
    if args.json:
        atomic_write_json(args.json, r)
    return 0


if __name__ == "__main__":
    sys.exit(main())
