"""The package's metadata: every folder that installs is in pyproject's package list (one left out, the league,
made `ladder` and `exploit` fail in an installed copy), one version everywhere, the extras' one-line message."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

import melee_agent
from melee_agent.cli.main import main
from melee_agent.extras import MissingExtra, require_extra

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def _installed_folders() -> set[str]:
    """Each folder of the checkout that installs, as the package name it installs under."""
    setup = PYPROJECT["tool"]["setuptools"]
    roots = {"melee_agent": ROOT / "melee_agent",
             **{name: ROOT / folder for name, folder in setup["package-dir"].items()}}
    out = set()
    for name, folder in roots.items():
        for d in [folder, *(p for p in folder.rglob("*") if p.is_dir())]:
            if d.name == "__pycache__" or not any(f.is_file() for f in d.iterdir()):
                continue
            if name == "melee_agent" and d.relative_to(folder).parts[:1] in {(p,) for p in ("manager", "workers")}:
                continue
            out.add(".".join([name, *d.relative_to(folder).parts]))
    return out


def test_every_folder_that_installs_is_listed():
    listed = set(PYPROJECT["tool"]["setuptools"]["packages"])
    assert _installed_folders() == listed


def test_one_version_in_the_package_the_citation_and_the_changelog(capsys):
    version = melee_agent.__version__
    assert PYPROJECT["project"]["dynamic"] == ["version"]  # read from melee_agent.__version__
    cff = re.search(r"^version: (\S+)$", (ROOT / "CITATION.cff").read_text(), re.M)
    assert cff and cff.group(1) == version
    changelog = (ROOT / "CHANGELOG.md").read_text()
    headings = re.findall(r"^## \[([^\]]+)\]", changelog, re.M)
    assert headings[0] == "Unreleased" and headings[1] == version
    assert len(headings) == len(set(headings)), "one section per version"
    assert all(re.fullmatch(r"\d+\.\d+\.\d+", h) for h in headings[1:])
    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0 and capsys.readouterr().out.strip() == f"melee-agent {version}"


def test_a_missing_extra_is_one_line_naming_it(monkeypatch, tmp_path, capsys):
    with pytest.raises(MissingExtra, match=r"needs the 'umi' extra.*pip install 'melee-agent\[umi\]'"):
        require_extra("no_such_module_here", "umi", "this")
    # `umi export` where umi-melee is not installed: one line, exit 2, before reading the model.
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "umi" else real(name, *a))
    assert main(["umi", "export", "--policy", str(tmp_path / "m.safetensors"), "--out", str(tmp_path / "b.zip")]) == 2
    err = capsys.readouterr().err
    assert err == "melee-agent umi: error: `melee-agent umi export` needs the 'umi' extra, which is not installed: " \
                  "pip install 'melee-agent[umi]'\n"


def test_the_test_extra_holds_the_other_extras():
    extras = PYPROJECT["project"]["optional-dependencies"]
    assert {"umi", "video", "docs", "test"} <= set(extras)
    assert "melee-agent[umi,video,docs]" in extras["test"]
    core = " ".join(PYPROJECT["project"]["dependencies"])
    for optional in ("umi-melee", "imageio-ffmpeg", "mkdocs", "selenium", "stable-baselines3"):
        assert optional not in core


def test_mp4_without_ffmpeg_names_the_video_extra(monkeypatch, tmp_path, capsys):
    import melee_agent.cli.watch as watch

    monkeypatch.setattr(watch, "ffmpeg_available", lambda: False)  # no ffmpeg on PATH, the extra not installed
    assert main(["watch", "--policy", "noop", "--out", str(tmp_path / "x.mp4")]) == 2
    err = capsys.readouterr().err
    assert "pip install 'melee-agent[video]'" in err and err.count("\n") == 1
