"""`melee-agent ladder MODEL... [--cpu-levels L...]`: a round robin in the arena, rated by Elo.

Prints the ratings as a table; ``--json FILE`` writes every pair's record and every rating, ``--plot FILE``
the ratings as bars (:mod:`melee_agent.league.ladder`).
"""

from __future__ import annotations

import argparse

from melee_agent.cli import flags

from melee_agent.io.files import atomic_write_json


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("ladder", help="a round robin of models (either port) and CPU levels in the arena, rated by Elo")
    p.add_argument("models", nargs="*", metavar="MODEL",
                   help="model files (.safetensors); each plays its own character, or the one a ':fox' or ':marth' "
                        "suffix names (MODEL:marth)")
    p.add_argument("--cpu-levels", type=int, nargs="*", default=[], metavar="L", help="CPU levels 1-9 to enter (Marth)")
    p.add_argument("--games", type=int, default=100, help="games per pair, side by side (default 100)")
    p.add_argument("--clock-frames", type=int, default=0,
                   help="each game's clock in frames (0: Melee's 8:00); at time stocks, then percent, decide")
    p.add_argument("--action-set", default="fight", help="the models' action set (default fight)")
    p.add_argument("--seed", type=flags.seed, default=0, help="the seed its games play from (default: %(default)s)")
    p.add_argument("--device", default="cpu", help="torch device (default cpu)")
    p.add_argument("--json", default=None, metavar="FILE", help="also write the records and ratings here")
    p.add_argument("--plot", default=None, metavar="FILE", help="also draw the ratings here (PNG)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path  # noqa: PLC0415

    from melee_agent.league import ladder  # noqa: PLC0415 (torch loads only when the command runs)

    if any(not 1 <= lv <= 9 for lv in args.cpu_levels):
        raise ValueError(f"--cpu-levels must be in 1-9, got {args.cpu_levels}")
    if args.games < 2 or args.clock_frames < 0:
        raise ValueError("--games must be at least 2 and --clock-frames 0 or more")
    if not args.models:
        raise ValueError("give at least one model file")
    models = [ladder.split_model_arg(m) for m in args.models]
    for m, _ in models:
        if not Path(m).is_file():
            raise FileNotFoundError(f"model file not found: {m}")
    if len(args.models) + len(args.cpu_levels) < 2:
        raise ValueError("a ladder needs two entrants: more model files or --cpu-levels")
    members = [ladder.model_member(m, args.action_set, character) for m, character in models]
    if len({m.name for m in members}) != len(members):  # two files of one stem in different folders
        members = [ladder.model_member(m, args.action_set, character, full_path=True) for m, character in models]
    members += [ladder.Member(f"cpu{lv}", level=lv) for lv in args.cpu_levels]
    doc = ladder.round_robin(members, args.games, args.action_set, args.clock_frames or None, args.seed, args.device)
    print(ladder.format_table(doc))
    if args.json:
        atomic_write_json(args.json, doc)
        print(f"wrote {args.json}")
    if args.plot:
        ladder.plot(doc, args.plot)
        print(f"wrote {args.plot}")
    return 0
