"""Running a module's ``>>>`` examples from a test, failing when none ran (a module whose examples were
deleted or all skipped would otherwise pass)."""

from __future__ import annotations

import doctest
import tempfile


def examples_failed(module) -> int:
    """``doctest.testmod(module).failed`` (an AssertionError when no example ran), the examples' ``tempfile.mkdtemp()`` folders made in one temp
    folder that is removed afterwards (run this way, outside pytest's doctest items, they were left in /tmp)."""
    saved = tempfile.tempdir
    with tempfile.TemporaryDirectory(prefix="melee-agent-examples-") as folder:
        tempfile.tempdir = folder
        try:
            result = doctest.testmod(module)
        finally:
            tempfile.tempdir = saved
    if result.attempted == 0:
        raise AssertionError(f"no example ran in {module.__name__}: its >>> examples are gone or all skipped")
    return result.failed
