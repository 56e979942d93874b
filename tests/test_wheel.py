"""The package installs like a library: a wheel holds one `melee_agent` namespace with its configs,
and `melee-agent train` runs from an empty folder of a fresh venv with that wheel installed."""

from __future__ import annotations

import json
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(ROOT)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    (whl,) = out.glob("melee_agent-*.whl")
    return whl


@pytest.mark.slow
def test_wheel_holds_one_namespace_and_the_configs(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    top = {n.split("/")[0] for n in names if not n.split("/")[0].endswith((".dist-info", ".data"))}
    assert top == {"melee_agent"}, f"top-level names in site-packages: {sorted(top)}"
    for part in ("melee_agent/manager/app.py", "melee_agent/workers/worker.py", "melee_agent/cli/main.py",
                 "melee_agent/umi/bot.py", "melee_agent/umi/frames.py",
                 "melee_agent/configs/default.toml", "melee_agent/configs/small.toml",
                 "melee_agent/configs/dolphin.toml", "melee_agent/pretrained/fight.safetensors",
                 "melee_agent/pretrained/fight-d18.safetensors", "melee_agent/pretrained/dodge.safetensors"):
        assert part in names


@pytest.mark.slow
def test_wheel_in_a_fresh_venv_trains_from_an_empty_folder(wheel, tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    py = venv / "bin" / "python"
    site = Path(subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    r = subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install", "--no-deps", "-q", str(wheel)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    # The dependencies (torch, fastapi, ...) come from this environment, appended after the fresh venv's
    # own site-packages; a path added by a .pth line gets no .pth processing of its own, so the
    # checkout's editable install stays out of the fresh venv.
    (site / "deps-from-test-env.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    empty = tmp_path / "empty"
    empty.mkdir()
    where = subprocess.run([str(py), "-c", "import melee_agent, melee_agent.manager.app; print(melee_agent.__file__)"],
                           cwd=empty, capture_output=True, text=True, timeout=120)
    assert where.returncode == 0, where.stderr[-3000:]
    assert Path(where.stdout.strip()).is_relative_to(site)
    assert not (site / "manager").exists() and not (site / "workers").exists()

    # The report's baselines and a long check of the last model test nothing about the install: left out.
    r = subprocess.run([str(venv / "bin" / "melee-agent"), "train", "--minutes", "0.3", "--config", "small",
                        "--set", "train.final_baselines=false", "--set", "train.progress_eval_episodes=9",
                        "--no-progress"], cwd=empty, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, (r.stdout[-3000:], r.stderr[-3000:])
    (run_dir,) = (empty / "runs").glob("small-*")
    assert (run_dir / "model.safetensors").stat().st_size > 0
    result = json.loads((run_dir / "eval.json").read_text())
    # small.toml: 4 episodes at each CPU level 1-9 in the final report.
    assert result["policy"] == "model" and result["episodes"] == 36 and len(result["per_level"]) == 9
    assert (run_dir / "learning_curve.png").exists()
    assert "[train]" in (run_dir / "config.toml").read_text()
