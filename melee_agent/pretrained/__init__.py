"""Models shipped inside the package: ``pretrained:NAME`` stands for one wherever a model file is asked for.

``melee-agent eval --policy pretrained:fight`` and ``watch --policy pretrained:fight`` play right after
set-up, with no training. Each model is an ordinary ``.safetensors`` file beside this module, with the
game, action set and delay it was trained for in its header like any model a run keeps; docs/pretrained.md
says how each was trained and what it measured.

>>> from melee_agent import pretrained
>>> pretrained.resolve("runs/x/model.safetensors")  # anything else passes through unchanged
'runs/x/model.safetensors'
>>> pretrained.resolve("pretrained:nope")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
ValueError: pretrained:nope: no model of that name ships with melee-agent; shipped: ...
"""

from __future__ import annotations

from importlib.resources import as_file, files
from pathlib import Path

PREFIX = "pretrained:"


def names() -> list[str]:
    """The shipped models' names, sorted."""
    return sorted(p.name.removesuffix(".safetensors") for p in files(__name__).iterdir()
                  if p.name.endswith(".safetensors"))


def path(name: str) -> Path:
    """The file of the shipped model ``name``; a ValueError naming the shipped ones where there is none."""
    entry = files(__name__) / f"{name}.safetensors"
    if not name or "/" in name or not entry.is_file():
        raise ValueError(f"{PREFIX}{name}: no model of that name ships with melee-agent; "
                         f"shipped: {', '.join(names()) or 'none'}")
    with as_file(entry) as p:  # a plain file in any installed layout but a zip; then as_file copies it out
        return Path(p)


def resolve(spec: str) -> str:
    """``pretrained:NAME`` to its file's path; any other policy or path unchanged."""
    return str(path(spec.removeprefix(PREFIX))) if spec.startswith(PREFIX) else spec
