"""`melee-agent cpu-report --cpu C --level L`: what a fight CPU does against scripted Fox policies.

Plays four scenarios in the arena (Fox standing, Fox approaching and attacking, Fox off stage, Marth off
stage) and prints Marth's choices by share, shield hits and perfect shields, reaction frames, throws and
recovery options (:mod:`melee_agent.arena.cpu_report`), then each behaviour the sources name beside the
arena's figure (:mod:`melee_agent.arena.cpu.sources`); ``--json FILE`` writes the same figures.
"""

from __future__ import annotations

import argparse

from melee_agent.cli import flags

from melee_agent.io.files import atomic_write_json


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("cpu-report", help="what a fight CPU (designed or melee) does against scripted Fox policies")
    p.add_argument("--cpu", default="melee", choices=("designed", "melee"), help="which CPU plays Marth (default: melee)")
    p.add_argument("--level", type=int, default=9, choices=range(1, 10), metavar="L", help="CPU level 1-9 (default 9)")
    p.add_argument("--envs", type=int, default=32, help="games per scenario, played side by side (default 32)")
    p.add_argument("--frames", type=int, default=600, help="frames per scenario (default 600: ten seconds)")
    p.add_argument("--seed", type=flags.seed, default=0, help="the seed its games play from (default: %(default)s)")
    p.add_argument("--device", default="cpu", help="torch device (default cpu)")
    p.add_argument("--json", default=None, metavar="FILE", help="also write the figures here")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from melee_agent.arena import cpu_report  # noqa: PLC0415 (torch loads only when the command runs)
    from melee_agent.arena.cpu import sources as cpu_sources  # noqa: PLC0415

    if args.envs < 1 or args.frames < 1:
        raise ValueError("--envs and --frames must be at least 1")
    doc = cpu_report.report(args.cpu, args.level, envs=args.envs, frames=args.frames, seed=args.seed,
                            device=args.device)
    doc["perfect_shield_probe"] = cpu_sources.perfect_shield_probe(args.cpu, args.level, device=args.device)
    doc["di_probe"] = cpu_sources.di_probe(args.cpu, args.level, device=args.device)
    doc["beside_sources"] = cpu_sources.beside_sources(doc, doc["perfect_shield_probe"], doc["di_probe"])
    print(cpu_report.format_table(doc))
    print("\nbeside the sources:")
    print(cpu_sources.format_rows(doc["beside_sources"]))
    if args.json:
        atomic_write_json(args.json, doc)
        print(f"wrote {args.json}")
    return 0
