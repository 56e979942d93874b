"""The documentation site builds without a warning (`mkdocs build --strict`), and its pages say what the code
does: every TensorBoard tag the code writes is on the monitoring page."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("material") is None,
                    reason="mkdocs and mkdocs-material are not installed (they are in the test extra: "
                           "pip install -e '.[test]')")
def test_the_site_builds_strict(tmp_path):
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                          cwd=ROOT, capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert (tmp_path / "site" / "index.html").is_file()
    assert (tmp_path / "site" / "monitoring" / "index.html").is_file()


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
    assert len(text.splitlines()) <= 250
    assert "scripts/bootstrap && .venv/bin/melee-agent train" in text
    assert "scripts/bootstrap && .venv/bin/python -m pytest -q -n 2 --dist loadfile" in text
    assert not re.search(r"\bissue \d+|\.\./shared|this 2-core machine|\bat [0-9a-f]{7}\b|\([0-9a-f]{7}\)", text)
    for link in re.findall(r"\]\(([^)\s#]+)", text):
        assert link.startswith("http") or (ROOT / link).exists(), link
