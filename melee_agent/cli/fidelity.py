"""`melee-agent fidelity REPLAY...`: the arena's hit predictions beside real replays (issue 22); with
``--motion``, its movement from the replays' own controller frames (issue 49, :mod:`melee_agent.report.motion`);
with ``--intangibility``, the frames on which Fox and Marth cannot be hit, beside the arena's
(:mod:`melee_agent.report.intangibility`).

Prints a table per move (hits, damage exact share, hitstun within 1 frame, launch speed within 5%)
and, with ``--json FILE``, writes every hit and the summary shares (atomically). A replay libmelee
cannot read gets a one-line note naming it and is skipped whole; when no replay can be read the command
is one error line naming the first (exit 2). On a terminal a progress bar counts the replays read.
"""

from __future__ import annotations

import argparse
import sys
from typing import Iterable

from melee_agent.report import fidelity
from melee_agent.report.progress import progress_iter
from melee_agent.io.files import atomic_write_json


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("fidelity", help="compare the arena's damage, hitstun and launch speed with real .slp replays")
    p.add_argument("replays", nargs="+", metavar="REPLAY", help="Slippi .slp files")
    p.add_argument("--json", default=None, metavar="FILE", help="also write every hit and the summary here")
    p.add_argument("--motion", action="store_true",
                   help="instead: re-play every Fox and Marth free-movement stretch from its own inputs and report "
                        "how long the arena stays within 1 unit (docs/motion.md)")
    p.add_argument("--intangibility", action="store_true",
                   help="instead: the action frames on which Fox and Marth were intangible in the replays (Slippi "
                        "2.1.0 on) beside the arena's windows (docs/intangibility.md)")
    p.set_defaults(func=run)


def replays(args: argparse.Namespace) -> Iterable[str]:
    """The replays, counted by a progress bar with the time left on a terminal (reading is most of the work)."""
    return progress_iter(args.replays, desc="replays", unit="replay")


def skipped(args: argparse.Namespace, errors: list[str]) -> None:
    """Say each replay passed over; where none could be read, that is the command's one error line (exit 2)."""
    if len(errors) >= len(args.replays):
        more = f" (and {len(errors) - 1} more replay(s) unreadable)" if len(errors) > 1 else ""
        raise ValueError(f"no replay could be read: {errors[0]}{more}")
    for e in errors:
        print(f"melee-agent fidelity: skipped {e}", file=sys.stderr)


def run_intangibility(args: argparse.Namespace) -> int:
    from melee_agent.report import intangibility  # noqa: PLC0415

    found, errors = intangibility.run(replays(args))
    skipped(args, errors)
    rows = intangibility.compare(found)
    print(f"{len(args.replays) - len(errors)} replay(s) read, {len(errors)} skipped; {len(found)} Fox/Marth action "
          f"instances, {len(rows)} actions")
    if rows:
        print(intangibility.format_table(rows))
        wrong = [f"{r.character} {r.action}" for r in rows if r.match is False]
        print("the arena differs on: " + ", ".join(wrong) if wrong else "the arena agrees on every action it plays")
    if args.json:
        atomic_write_json(args.json, intangibility.report(rows, errors))
        print(f"wrote {args.json}")
    return 0


def run_motion(args: argparse.Namespace) -> int:
    from melee_agent.report import motion  # noqa: PLC0415

    results, errors = motion.run(replays(args))
    skipped(args, errors)
    print(f"{len(args.replays) - len(errors)} replay(s) read, {len(errors)} skipped; {len(results)} Fox/Marth "
          "free-movement stretches")
    summary = motion.summarize(results)
    if results:
        print(motion.format_table(summary))
    if args.json:
        atomic_write_json(args.json, motion.report(results, errors))
        print(f"wrote {args.json}")
    return 0


def run(args: argparse.Namespace) -> int:
    if args.motion and args.intangibility:
        print("melee-agent fidelity: --motion and --intangibility are two reports; give one", file=sys.stderr)
        return 2
    if args.motion:
        return run_motion(args)
    if args.intangibility:
        return run_intangibility(args)
    results, errors = fidelity.run(replays(args))
    skipped(args, errors)
    hits = [h for r in results for h in r.hits]
    unattributed = sum(len(r.unattributed) for r in results)
    print(f"{len(results)} replay(s) read, {len(errors)} skipped; {len(hits)} Fox/Marth hits"
          + (f", {unattributed} percent rise(s) with no Fox/Marth attack out (listed in --json)" if unattributed else ""))
    if hits:
        print(fidelity.format_table(hits))
    if args.json:
        atomic_write_json(args.json, fidelity.report(results, errors))
        print(f"wrote {args.json}")
    return 0
