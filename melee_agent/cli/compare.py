"""`melee-agent compare RUN...`: training runs side by side (an ablation's table and curves).

Prints the settings that differ between the runs, a row per run (train steps, every periodic check,
the model kept, the final report; for fights the level-9 games, stocks and the most used KO move) and
the mean of each group of runs sharing those settings. ``--json FILE`` writes the same document and
``--plot FILE.png`` every run's checks on one plot, both atomically. A folder that is not a finished
run (no ``eval.json``) is an error naming it; nothing is written then.
"""

from __future__ import annotations

import argparse

from melee_agent import compare
from melee_agent.files import atomic_write_json


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("compare", help="training runs side by side: the settings that differ, every check, the reports")
    p.add_argument("runs", nargs="+", metavar="RUN", help="run folders `melee-agent train` wrote (--run-dir)")
    p.add_argument("--json", default=None, metavar="FILE", help="also write the comparison here")
    p.add_argument("--plot", default=None, metavar="FILE", help="also draw every run's checks on one PNG")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        doc = compare.summarize([compare.load_run(p) for p in args.runs])
    except compare.CompareError as e:
        raise ValueError(str(e)) from None
    print(compare.format_table(doc))
    if args.json:
        atomic_write_json(args.json, doc)
        print(f"wrote {args.json}")
    if args.plot:
        compare.plot(doc, args.plot)
        print(f"wrote {args.plot}")
    return 0
