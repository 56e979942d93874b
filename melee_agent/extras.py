"""The optional parts of the install (pyproject's extras) and the one line that says which to add.

The core install trains and evaluates on the arena and runs the manager and workers; ``umi`` (the
championship bot), ``video`` (a bundled ffmpeg for MP4), ``docs`` and ``test`` are extras. A command that
needs one that is missing stops with :class:`MissingExtra`, a one-line error (exit 2) naming the extra:

>>> install_hint("umi")
"pip install 'melee-agent[umi]'"
>>> require_extra("json", "umi", "serving a bot")  # importable: nothing to say
"""

from __future__ import annotations

import importlib.util


class MissingExtra(RuntimeError):
    """A command needs an extra that is not installed; the message is one line naming it."""


def install_hint(extra: str) -> str:
    """The command that adds ``extra`` (quoted: the brackets are a glob to the shell)."""
    return f"pip install 'melee-agent[{extra}]'"


def require_extra(module: str, extra: str, what: str) -> None:
    """Raise :class:`MissingExtra` where ``module`` (from ``extra``) cannot be imported; ``what`` needs it."""
    if importlib.util.find_spec(module) is None:
        raise MissingExtra(f"{what} needs the '{extra}' extra, which is not installed: {install_hint(extra)}")
