"""The documentation site builds without a warning (`mkdocs build --strict`), and its pages say what the code
does: every TensorBoard tag the code writes is on the monitoring page. The pages a user reads hold no lab notes
(issue numbers, commit hashes, words about how the work was organised) and none is over 3,000 words."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(any(importlib.util.find_spec(m) is None for m in ("mkdocs", "material", "mkdocstrings")),
                    reason="mkdocs, mkdocs-material and mkdocstrings are not installed (they are in the docs extra: "
                           "pip install -e '.[docs]')")
def test_the_site_builds_strict(tmp_path):
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                          cwd=ROOT, capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert (tmp_path / "site" / "index.html").is_file()
    assert (tmp_path / "site" / "monitoring" / "index.html").is_file()
    # The API reference is generated from the docstrings: Arena's own methods are on its page.
    arena = (tmp_path / "site" / "api" / "arena" / "index.html").read_text()
    for name in ("step", "step_pads", "place", "reset"):
        assert f'id="melee_agent.arena.env.Arena.{name}"' in arena, name
    # Sphinx roles in the docstrings are shown as code (scripts/docs_hooks.py), not as ":class:".
    assert not re.search(r":(class|meth|mod):<code>", arena)


def code_tags() -> set[str]:
    """The TensorBoard tags the manager and `train` write, as the code spells them (a tag made per level or per
    counter is given by its pattern: ``eval/win_rate_level_N``, ``workers/dolphin_restarts``)."""
    from manager.metrics import WORKER_COUNTERS
    from melee_agent.rl.replay import ReplayStats

    tags: set[str] = set()
    families = "loss|q|replay|ingest|train|model|workers|uploads|episode|eval"
    for path in [*(ROOT / "manager").glob("*.py"), ROOT / "melee_agent" / "run" / "training.py"]:
        text = path.read_text()
        tags |= set(re.findall(rf'"((?:{families})/[a-z_]+)"', text))
        tags |= {f"{head}N" for head in re.findall(rf'f"((?:{families})/[a-z_]+_level_)\{{', text)}
        tags |= {f"eval/{k}" for k in re.findall(r'"([a-z_]+)": (?:res|g)\.', text)} if path.name == "training.py" else set()
    tags |= {f"workers/{k}" for k in WORKER_COUNTERS} | {f"replay/{k}" for k in ReplayStats._fields}
    return tags


def test_every_tensorboard_tag_is_documented():
    tags = code_tags()
    assert {"loss/td", "eval/untouched_share_level_N", "eval/win_rate_level_N", "workers/dolphin_restarts",
            "replay/beta", "eval/stocks_taken_per_game"} <= tags  # the scan finds what it looks for
    page = (ROOT / "docs" / "monitoring.md").read_text()
    missing = sorted(t for t in tags if f"`{t}`" not in page)
    assert not missing, f"docs/monitoring.md does not list {missing}"


def test_the_readme_is_short_and_holds_no_run_log():
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) < 150
    assert "scripts/bootstrap && .venv/bin/melee-agent train" in text
    assert "scripts/bootstrap && .venv/bin/python -m pytest -q -n 2 --dist loadfile" in text
    assert not re.search(r"\bissue \d+|\.\./shared|this 2-core machine|\bat [0-9a-f]{7}\b|\([0-9a-f]{7}\)", text)
    for link in re.findall(r"\]\(([^)\s#]+)", text):
        assert link.startswith("http") or (ROOT / link).exists(), link


# The contributors' page (marked so at its top) may cite issues and commits; every other page is for users.
CONTRIBUTORS_PAGES = {"docs/design.md", "docs/design-2.md"}
MAX_WORDS = 3000

ISSUE = re.compile(r"\b(?:issues?|PRs?|pull requests?)\s*#?\d+\b|(?<![\w&/#\]])#\d+\b", re.IGNORECASE)
# A commit hash: 7-40 lowercase hex digits holding a digit and a letter. Not one inside a URL, a path or a file
# name (docs/bench/bench-learn-3dd067f.json), nor a colour (#ff00ffcc), nor a figure such as 1e5.
HASH = re.compile(r"(?<![\w/.#@-])(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}(?![\w/-])(?!\.\w)")
URL = re.compile(r"https?://\S+")
ORGANISATION = re.compile(
    r"\bhelper(?:s|'s|s')?\s+(?:sessions?|commands?|tests?|edits?|work)\b"
    r"|\b(?:other|helper|this|that|these|those|same|one|two|three|four|five|six|seven|eight)\s+sessions?\b"
    r"|\b(?:this|the|a|that|my) branch(?:'s)?\s+(?:head|start)\b|\bthis branch\b|\bon the branch\b"
    r"|\bworktrees?\b|(?<![/\w-])(?:my|mine|of my own)\b(?![/\w-])"
    r"|\bI\s+(?:ran|run|measured|took|used|kept|found|saw|had|have|was|did|made|checked|tried|think)\b",
    re.IGNORECASE)


def user_pages() -> list[Path]:
    """README.md and every page under docs/ but the contributors' page."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    return [p for p in pages if p.relative_to(ROOT).as_posix() not in CONTRIBUTORS_PAGES]


def lab_notes(text: str) -> list[str]:
    """Each issue number, commit hash or word about how the work was organised in ``text``, with its line."""
    found = []
    for n, line in enumerate(text.splitlines(), 1):
        bare = URL.sub(" ", line)
        for pattern, kind in ((ISSUE, "issue"), (HASH, "commit hash"), (ORGANISATION, "organisation")):
            hits = [m.group(0) for m in pattern.finditer(bare)]
            found += [f"line {n}: {kind} {h!r}" for h in hits]
    return found


@pytest.mark.parametrize("text", [
    "trained at ff035f3, where the CPU", "before (237b743): a victim", "issue 49's motion", "(issues 45 and 47)",
    "see #12", "the machine shared with helper sessions' tests", "while four other sessions used it",
    "the start of this branch", "a few of my tests ran beside it", "I ran it twice", "doldecomp/melee at e7844caa6 the CPU's",
])
def test_lab_notes_are_found(text):
    assert lab_notes(text), text


@pytest.mark.parametrize("text", [
    "`docs/bench/bench-learn-3dd067f.json`", "[log](../gpu/train-A.log)", "colour #ff00ffcc", "lr 1e-4, 2.5e5 rows",
    "262,144 games", "https://github.com/doldecomp/melee/blob/e7844caa6/src/melee/ft/ftcommon.c",
    "a checksum " + "ab12" * 16, "a person's session", "the UMI session applies the delay", "environment i of N",
    "decided by the lead at one minute", "`ftCo_800AA42C`", "Fox's `deadbeef` frames", "ikneedata's calculator",
    "--run-dir runs/mine", "keys I Z, U or O shield",
])
def test_ordinary_text_is_not_a_lab_note(text):
    assert not lab_notes(text), lab_notes(text)


def test_the_contributors_page_says_it_is_for_contributors():
    for page in CONTRIBUTORS_PAGES:
        assert "for contributors" in (ROOT / page).read_text()[:600].lower(), page


@pytest.mark.parametrize("page", user_pages(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_a_users_page_holds_no_lab_notes(page):
    notes = lab_notes(page.read_text())
    assert not notes, f"{page.relative_to(ROOT)}: " + "; ".join(notes[:20])


@pytest.mark.parametrize("page", sorted((ROOT / "docs").rglob("*.md")), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_page_is_over_the_word_limit(page):
    words = len(page.read_text().split())
    assert words <= MAX_WORDS, f"{page.relative_to(ROOT)} has {words} words (at most {MAX_WORDS}: split it)"
