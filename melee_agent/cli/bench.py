"""`melee-agent bench KIND`: benchmarks that print a table and write JSON.

Each kind lives in its own module ``melee_agent.benchmarks.<kind>`` with ``add_args(parser)`` and
``run(args) -> dict`` (the results; this module prints nothing itself, the kind prints its table).
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys

from melee_agent.cli.common import add_common, add_unavailable, import_or_explain
from melee_agent.io.files import atomic_write_json

KINDS = {
    "replay": "replay storage, sampling and train-step speed (the paper's Table 1 and Figure 3)",
    "arena": "arena game frames per second, with random and with Dueling DQN actions",
    "ingest": "manager ingest rows/s over loopback HTTP while training",
    "learn": "minutes to 95%% untouched at every level: melee-agent train against Stable-Baselines3's DQN",
}

#: The shared flags each kind uses (the others it would take and ignore): ingest's manager runs a config,
#: learn keeps its runs in a folder.
USES = {"replay": {"config": False, "run_dir": False}, "arena": {"config": False, "run_dir": False},
        "ingest": {"config": True, "run_dir": False}, "learn": {"config": False, "run_dir": True}}


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("bench", help="run a benchmark, print a table, write JSON")
    kinds = p.add_subparsers(dest="kind", metavar="KIND", required=True)
    for kind, help_text in KINDS.items():
        mod, why = import_or_explain(f"melee_agent.benchmarks.{kind}")
        if mod is None:
            add_unavailable(kinds, kind, why or "unknown error")
            continue
        kp = kinds.add_parser(kind, help=help_text)
        add_common(kp, **USES[kind])
        mod.add_args(kp)
        kp.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    mod = importlib.import_module(f"melee_agent.benchmarks.{args.kind}")
    results = mod.run(args)
    if args.json:
        atomic_write_json(args.json, results)
        print(f"results written to {args.json}", file=sys.stderr)
    return 0


def dumps(results: dict) -> str:
    return json.dumps(results, indent=2)
