#!/usr/bin/env python
"""noop's mean time to the first hit in the dodging game: from its own start, or from Final Destination's spawn points.

Usage::

    python scripts/noop_first_hit.py [--cpu-level 9 | --paper-mix] [--episodes 200] [--seed 11] [--cpu melee]

The calibration point of docs/results/dodging.md ("The paper's setup"). Each environment plays one episode of
noop; its first hit's time (or the minute) is averaged. ``--paper-mix`` draws each episode's level with the
Untouchable paper's weights. Both starts are printed: the dodging game's own (its episode reset), and both
fighters placed at Final Destination's spawn points, facing each other, before the first frame.
"""

from __future__ import annotations

import argparse

import torch

from melee_agent.arena import Arena
from melee_agent.arena.env_state import AGENT, CPU, with_player

#: Final Destination's spawn points, x (measured: the two FD replays of the tests, slippi-js lCancel.slp and peppi
#: v3.13.slp, start their players at -60 and +60; the game reads them from the stage file, Stage_80224E64). The
#: paper's agent plays port 2 (+60), its Marth port 1 (-60).
FD_SPAWN_AGENT, FD_SPAWN_CPU = 60.0, -60.0
#: The paper's level weights, levels 1-9 (bparr/melee-ai cpu.py).
PAPER_WEIGHTS = [6, 4, 3, 3, 3, 3, 3, 5, 70]
MINUTE = 3600  # frames: the dodging game's episode


def first_hit_seconds(levels: int | list[int], episodes: int, seed: int, spawn: bool, cpu: str = "melee",
                      weights: list[float] | None = None) -> torch.Tensor:
    """``[episodes]``: each environment's first episode of noop, seconds to its first hit (60 if never hit)."""
    env = Arena(episodes, cpu_level=levels, seed=seed, cpu=cpu, level_weights=weights)
    env.reset()
    if spawn:
        env.state = with_player(env.state, AGENT, position_x=FD_SPAWN_AGENT, facing=-1.0)
        env.state = with_player(env.state, CPU, position_x=FD_SPAWN_CPU, facing=1.0)
    noop = torch.full((episodes,), env.noop_index, dtype=torch.long)
    frames = torch.zeros(episodes)
    hit_at = torch.full((episodes,), float(MINUTE))
    playing = torch.ones(episodes, dtype=torch.bool)
    while bool(playing.any()):
        _, _, done, info = env.step(noop)
        frames += torch.where(playing, info.frames.float(), 0.0)
        hit = info["hit"] & playing
        hit_at = torch.where(hit, frames, hit_at)
        playing &= ~done
    return hit_at / 60.0


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cpu-level", type=int, default=9)
    p.add_argument("--paper-mix", action="store_true", help="levels 1-9 drawn with the paper's weights")
    p.add_argument("--episodes", type=int, default=200)
    p.add_argument("--seed", type=int, default=11)
    p.add_argument("--cpu", default="melee", choices=("melee", "designed"))
    a = p.parse_args(argv)
    levels, weights = (list(range(1, 10)), PAPER_WEIGHTS) if a.paper_mix else (a.cpu_level, None)
    what = "the paper's level mix" if a.paper_mix else f"level {a.cpu_level}"
    for spawn, start in ((False, "the dodging game's start"), (True, "Final Destination's spawn points")):
        t = first_hit_seconds(levels, a.episodes, a.seed, spawn, a.cpu, weights)
        print(f"noop vs {what}, from {start}: {t.mean():.2f} s to the first hit ({a.episodes} episodes)")


if __name__ == "__main__":
    main()
