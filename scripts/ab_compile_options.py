"""Two sets of inductor options for the compiled arena, timed side by side in one process.

Usage::

    python scripts/ab_compile_options.py --game fight --base '{"max_fusion_size": 64}' [--json FILE]

Compiles the arena twice (``--base``: ``CPU_OPTIONS`` with these keys changed; the candidate: ``CPU_OPTIONS``
as shipped, or with ``--candidate``'s keys changed), then plays noop frames at ``--envs`` environments in
interleaved windows (fresh games each window, the order alternating per round), so that the shared
machine's drift falls on both alike. Prints each variant's frames/s per window, their medians and the
median of the per-round ratios; ``--json`` writes them. CPU only (``compiled.CPU_OPTIONS`` is CPU's).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import torch

from melee_agent.arena import Arena
from melee_agent.arena import compiled as C
from melee_agent.io.files import atomic_write_json


def _arena(options: dict, game: str, envs: int) -> Arena:
    shipped = dict(C.CPU_OPTIONS)
    C._CACHE.clear()  # a fresh torch.compile (a new code object: dynamo compiles it anew under these options)
    C.CPU_OPTIONS.clear()
    C.CPU_OPTIONS.update(options)
    try:
        env = Arena(envs, cpu_level=9, device="cpu", seed=0, compile=True, game=game)
        env.reset()
        for _ in range(5):  # compiles now, under these options
            env.step_async(torch.zeros(envs, dtype=torch.long))
    finally:
        C.CPU_OPTIONS.clear()
        C.CPU_OPTIONS.update(shipped)
    return env


@torch.inference_mode()
def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--game", default="fight", choices=("dodge", "fight"))
    p.add_argument("--envs", type=int, default=4096)
    p.add_argument("--base", type=json.loads, required=True, help="JSON: the keys of CPU_OPTIONS the base changes")
    p.add_argument("--candidate", type=json.loads, default={}, help="JSON: the keys the candidate changes (default none)")
    p.add_argument("--rounds", type=int, default=12)
    p.add_argument("--seconds", type=float, default=1.0, help="length of one window")
    p.add_argument("--json", default=None, help="also write the results here")
    args = p.parse_args()
    variants = {"base": {**C.CPU_OPTIONS, **args.base}, "candidate": {**C.CPU_OPTIONS, **args.candidate}}
    envs = {name: _arena(opts, args.game, args.envs) for name, opts in variants.items()}
    noop = torch.zeros(args.envs, dtype=torch.long)
    rates: dict[str, list[float]] = {name: [] for name in envs}
    for rnd in range(args.rounds):
        for name in (("base", "candidate") if rnd % 2 == 0 else ("candidate", "base")):
            env = envs[name]
            env.reset()
            for _ in range(3):
                env.step_async(noop)
            n, t0 = 0, time.perf_counter()
            while time.perf_counter() - t0 < args.seconds:
                env.step_async(noop)
                n += 1
            rates[name].append(args.envs * n / (time.perf_counter() - t0))
    ratios = [c / b for b, c in zip(rates["base"], rates["candidate"])]
    for name, r in rates.items():
        print(f"{name:>9} {json.dumps(variants[name])}: median {statistics.median(r):,.0f} noop frames/s; "
              + " ".join(f"{x / 1e3:,.0f}k" for x in r))
    print(f"candidate / base, per round: median {statistics.median(ratios):.3f}; " + " ".join(f"{x:.2f}" for x in ratios))
    if args.json:
        out = {"game": args.game, "envs": args.envs, "torch": torch.__version__, "threads": torch.get_num_threads(),
               "variants": variants, "frames_per_s": rates, "ratio_per_round": ratios,
               "median_ratio": statistics.median(ratios)}
        atomic_write_json(args.json, out)


if __name__ == "__main__":
    main()
