"""`melee-agent compare RUN...`: training runs side by side (an ablation's table and curves).

Prints the settings that differ between the runs, a row per run (train steps, every periodic check,
the model kept, the final report; for fights the level-9 games, stocks and the most used KO move) and
the mean of each group of runs sharing those settings. ``--json FILE`` writes the same document and
``--plot FILE.png`` every run's checks on one plot. Both are made before either is written (each
atomically); a folder that is not a finished run, or an output that cannot be written, is an error
naming it.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from melee_agent.report import compare
from melee_agent.cli.common import require_png
from melee_agent.io.files import atomic_write_bytes, atomic_write_json


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("compare", help="training runs side by side: the settings that differ, every check, the reports")
    p.add_argument("runs", nargs="+", metavar="RUN", help="run folders `melee-agent train` wrote (--run-dir)")
    p.add_argument("--ignore", action="append", default=[], metavar="KEY",
                   help="a setting not to tell runs apart by (section.key, or a section such as dolphin.); repeatable")
    p.add_argument("--json", default=None, metavar="FILE", help="also write the comparison here")
    p.add_argument("--plot", default=None, metavar="FILE.png", help="also draw every run's checks on one PNG")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.plot:
        require_png(args.plot)
    # The outputs were checked before this ran (cli/main.py: not a folder, not a run's own file, writable).
    targets = {k: Path(v) for k, v in {"--json": args.json, "--plot": args.plot}.items() if v}
    try:
        doc = compare.summarize(compare.load_runs(args.runs), tuple(args.ignore))
    except compare.CompareError as e:
        raise ValueError(str(e)) from None
    print(compare.format_table(doc))
    image = compare.plot_png(doc) if args.plot else None
    # A write that fails still fails here (a full disk): its OSError names the file (melee_agent.io.files).
    if "--json" in targets:
        atomic_write_json(targets["--json"], doc)
        print(f"wrote {targets['--json']}")
    if image is not None:
        atomic_write_bytes(targets["--plot"], image)
        print(f"wrote {targets['--plot']}")
    return 0
