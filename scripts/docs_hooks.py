"""MkDocs hooks for the API reference: the docstrings cross-reference in Sphinx's roles (``:class:`~x.Y```),
which mkdocstrings leaves as written; show them as code, named as Sphinx would (``~`` keeps the last part)."""

from __future__ import annotations

import re

ROLE = re.compile(r":(?:class|meth|func|mod|attr|data|obj|exc):<code>(~?)\.?([^<]*)</code>")


def bare_name(match: re.Match[str]) -> str:
    """One role as code: ``~a.b.C`` becomes ``C``, ``a.b.C`` stays whole."""
    short, name = match.group(1), match.group(2)
    return f"<code>{name.rsplit('.', 1)[-1] if short else name}</code>"


def on_page_content(html: str, **kwargs: object) -> str:
    return ROLE.sub(bare_name, html)
