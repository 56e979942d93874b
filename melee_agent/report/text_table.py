"""Plain-text tables for the commands that print one (`fidelity`, `compare`): columns padded to line up.

Example::

    >>> print(text_table([["move", "hits"], ["usmash", "5"]]))
    move    hits
    usmash  5
"""

from __future__ import annotations

from collections.abc import Sequence


def text_table(rows: Sequence[Sequence[str]]) -> str:
    """The rows (the first one the header) with each column as wide as its widest cell, two spaces apart."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows)
