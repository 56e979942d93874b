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


def pytest_configure(config: pytest.Config) -> None:
    # xdist's loadfile hands out files with the most tests first; the order below (slowest first) is kept
    # instead, so the suite's two processes end together rather than one waiting on a late long file.
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Files holding the most ``slow`` tests run first (a stable sort: each file's tests stay together and
    in order). Under ``-n 2 --dist loadfile`` a long file handed out last would run alone at the end."""
    def file_of(item: pytest.Item) -> str:
        return item.nodeid.split("::")[0]

    slow: dict[str, int] = {}
    first: dict[str, int] = {}
    for i, item in enumerate(items):
        slow[file_of(item)] = slow.get(file_of(item), 0) + (item.get_closest_marker("slow") is not None)
        first.setdefault(file_of(item), i)
    items.sort(key=lambda item: (-slow[file_of(item)], first[file_of(item)]))
