"""Fixtures for every test path, the modules' ``>>>`` examples included (``tests/conftest.py`` has the tests' own).

The examples make their folders with ``tempfile.mkdtemp()``, as a user pasting them would; run as tests,
those folders go under pytest's own temp tree (cleaned by pytest, the last few runs kept) instead of
piling up in /tmp.
"""

from __future__ import annotations

import tempfile

import pytest
from _pytest.doctest import DoctestItem


@pytest.fixture(autouse=True)
def _examples_temp_under_pytest(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    if isinstance(request.node, DoctestItem):
        temp = request.getfixturevalue("tmp_path") / "temp"
        temp.mkdir()
        monkeypatch.setattr(tempfile, "tempdir", str(temp))
