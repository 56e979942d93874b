#!/usr/bin/env python
"""Hash arena trajectories, to check that a refactor plays bit-identical games.

Run it before and after a change and compare the lines: each is one case (CPU levels, action set,
reward, lockstep ``step`` or ``step_async``) played for 1,500 calls with seeded random actions,
hashing every observation, reward, done and info value and the final state (its fields stacked
in the column order of the arena's layout before the named state, commit d1adb30). Eager by
default (about 7 minutes on 2 cores); ``--compiled`` plays two cases through ``torch.compile``.
Each case names its CPU (``--cpu designed``, the default here whatever the arena's default is, or
``--cpu melee``); ``--calls N`` plays N calls per case instead (a quicker check).

    .venv/bin/python scripts/arena_hash.py > before.txt   # then again after, and diff
    .venv/bin/python scripts/arena_hash.py --cpu melee     # the melee CPU's hashes, beside
"""

from __future__ import annotations

import hashlib
import sys

import torch

from melee_agent.arena import Arena

PLAYER_ORDER = ("position_x position_y speed_x speed_y speed_x_attack speed_y_attack action facing on_ground "
                "jumps_left shield_strength percent stock move hit_done fast_falling jump_held action_frame "
                "hitstun_frames_left invulnerability_left busy_left").split()
GAME_ORDER = "episode_frame tick episode previous_action cpu_cooldown env_id episode_return cpu_level".split()
INFO = ("ready", "hit", "frames", "episode_frame", "final_obs", "cpu_level", "damage_taken", "damage_dealt",
        "stocks_lost", "stocks_taken", "terminal", "truncated")


def trajectory_hash(level, action_set: str, reward: str, mode: str, calls: int, compile: bool, B: int = 64,
                    cpu: str = "designed") -> str:
    env = Arena(B, cpu_level=level, seed=3, action_set=action_set, reward=reward, compile=compile, cpu=cpu)
    gen = torch.Generator().manual_seed(11)
    h = hashlib.sha256(env.reset().numpy().tobytes())
    for _ in range(calls):
        a = torch.randint(0, env.num_actions, (B,), generator=gen)
        obs, r, d, info = (env.step if mode == "step" else env.step_async)(a)
        for t in (obs, r, d, *(info[k] for k in INFO)):
            h.update(torch.as_tensor(t).float().numpy().tobytes())
    ps, g = env.state.players, env.state.game
    h.update(torch.stack([getattr(ps, n) for n in PLAYER_ORDER], -1).contiguous().numpy().tobytes())
    h.update(torch.stack([getattr(g, n) for n in GAME_ORDER], -1).contiguous().numpy().tobytes())
    return h.hexdigest()[:16]


def _option(name: str, default: str) -> str:
    args = sys.argv[1:]
    if name not in args:
        return default
    i = args.index(name)
    if i + 1 >= len(args):
        raise SystemExit(f"{name} needs a value")
    return args[i + 1]


def main() -> None:
    compiled = "--compiled" in sys.argv
    cpu = _option("--cpu", "designed")
    if cpu not in ("designed", "melee"):
        raise SystemExit(f"--cpu must be designed or melee, got {cpu!r}")
    calls = int(_option("--calls", "600" if compiled else "1500"))
    if calls < 1:
        raise SystemExit(f"--calls must be at least 1, got {calls}")
    cases = [(9, "untouchable", "untouchable", "step"), (9, "untouchable", "untouchable", "async"),
             (1, "untouchable", "untouchable", "async"), (5, "untouchable", "untouchable", "step"),
             ((1, 5, 9), "untouchable", "untouchable", "async"), (9, "basic", "damage", "async"),
             (tuple(range(1, 10)), "basic", "damage", "step")]
    if compiled:
        cases = [(9, "untouchable", "untouchable", "async"), ((1, 5, 9), "basic", "damage", "async")]
    for case in cases:
        print(case, trajectory_hash(*case, calls=calls, compile=compiled, cpu=cpu), flush=True)


if __name__ == "__main__":
    main()
