"""The zip the Computer Melee Championship takes: ``run.py``, ``requirements.txt`` and the weights.

The zip also carries the few ``melee_agent`` modules the bot runs on (the state table, the action
sets, the model and this package), so it plays from an empty folder with only PyPI packages
installed; ``run.py`` puts its own folder first on ``sys.path``, so the bundled modules (the ones the
weights were exported with) are the ones used. ``requirements.txt`` pins what those modules import,
as ``melee-agent`` itself depends on them.

A bot may carry a model per stage: ``stages/STAGE.safetensors`` plays games on STAGE (``battlefield`` ...),
``model.safetensors`` every other stage (:meth:`~melee_agent.umi.bot.MeleeAgentBot.from_folder`).
"""

from __future__ import annotations

import io
import json
import os
import re
import zipfile
from importlib import metadata
from pathlib import Path

from melee_agent.io.files import atomic_output
from melee_agent.umi.bot import STAGE_FOLDER, WEIGHTS, MeleeAgentBot, ModelPlayer, stage_id
#: The melee_agent modules the bot imports, relative to the package folder.
BUNDLED = ("__init__.py", "envs/__init__.py", "envs/state.py", "envs/actions.py", "rl/__init__.py", "rl/model.py",
           "io/__init__.py", "io/files.py", "io/safetensors_header.py",
           "umi/__init__.py", "umi/frames.py", "umi/bot.py")
#: PyPI distributions those modules import (libmelee for its action table, read as a file).
REQUIREMENTS = ("umi-melee", "torch", "numpy", "safetensors", "melee")

RUN_PY = '''"""melee-agent as a Computer Melee Championship bot (UMI v1): `python run.py` plays until shutdown.

A Dueling DQN ({action_set} action set, model version {version}, trained at {delay} frames of input delay)
playing Fox: each frame encoded to melee-agent's 27-float state, greedy macros played frame by frame, one
memory per game. The arena applies the input delay (the session's); the bot never queues its own.
{stage_lines}"""
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # the melee_agent modules shipped beside this file

import umi  # noqa: E402

from melee_agent.umi.bot import MeleeAgentBot  # noqa: E402


class Bot(MeleeAgentBot):
    name = {name}
    characters = "FOX"
    deterministic = True


if __name__ == "__main__":
    umi.serve(Bot.from_folder(HERE))
'''


def requirements() -> str:
    """``requirements.txt``: the bundled modules' PyPI dependencies, with melee-agent's own version bounds."""
    try:
        declared = metadata.requires("melee-agent") or []
    except metadata.PackageNotFoundError:
        declared = []
    spec = {}
    for line in declared:
        if "extra ==" in line and 'extra == "umi"' not in line:  # umi-melee comes with the umi extra
            continue
        m = re.match(r"\s*([A-Za-z0-9_.-]+)", line)
        if m:
            spec[m.group(1).lower()] = line.split(";")[0].strip()
    return "".join(f"{spec.get(name, name)}\n" for name in REQUIREMENTS)


def export_zip(model_path: str | os.PathLike, out: str | os.PathLike, name: str = "melee-agent",
               stages: dict[str, str | os.PathLike] | None = None) -> dict:
    """Write the bot's zip to ``out`` atomically; returns what it holds. A bad model file is a ValueError.

    ``model_path`` plays on every stage that ``stages`` (stage name -> model file) does not name.
    """
    model_path = Path(model_path)
    if not name or not name.isprintable():
        raise ValueError(f"bot name {name!r}: use a non-empty printable name")
    data = _read(model_path)
    default = ModelPlayer.from_bytes(data, origin=str(model_path))  # refuses what the bot could not play
    files = {WEIGHTS: data}
    by_stage = {}
    for stage, path in (stages or {}).items():
        stage_id(stage)  # a stage the championship plays, or a ValueError naming it
        key = stage.strip().lower()
        files[f"{STAGE_FOLDER}/{key}.safetensors"] = _read(Path(path))
        by_stage[key] = ModelPlayer.from_bytes(files[f"{STAGE_FOLDER}/{key}.safetensors"], origin=str(path))
    bot = MeleeAgentBot.for_stages(default, by_stage)
    package = Path(__file__).resolve().parent.parent
    delay = bot.trained_delay
    stage_lines = "" if not by_stage else "\nA model per stage: " + "; ".join(
        f"{k}: {v}" for k, v in bot.stage_models().items()) + ".\n"
    run_py = RUN_PY.format(action_set=bot.action_set.name, version=bot.meta.get("version", "?"), name=json.dumps(name),
                           delay="an unrecorded number of" if delay is None else delay, stage_lines=stage_lines)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("run.py", run_py)
        z.writestr("requirements.txt", requirements())
        for arcname, blob in files.items():
            z.writestr(arcname, blob)
        for rel in BUNDLED:
            z.writestr(f"melee_agent/{rel}", (package / rel).read_bytes())
    with atomic_output(out) as tmp:
        tmp.write_bytes(buf.getvalue())
    return {"out": str(out), "bytes": len(buf.getvalue()), "action_set": bot.action_set.name,
            "version": bot.meta.get("version"), "delay_frames": delay,
            "files": ["run.py", "requirements.txt", *files] + [f"melee_agent/{rel}" for rel in BUNDLED],
            "stage_models": bot.stage_models() if by_stage else {}, "mismatches": stage_mismatches(by_stage)}


def stage_mismatches(by_stage: dict[str, ModelPlayer]) -> list[str]:
    """One line for each stage whose model records other stages than it (it may be meant: a Final Destination model
    on Battlefield), so that a slip in the mapping shows."""
    from melee_agent.rl.model import trained_stages  # noqa: PLC0415

    out = []
    for stage, player in by_stage.items():
        trained = trained_stages(player.meta)
        if stage not in trained:
            out.append(f"{stage} plays {player.meta.get('origin')}, which trained on {', '.join(trained)}")
    return out


def _read(path: Path) -> bytes:
    if not path.is_file():
        raise FileNotFoundError(f"model file not found: {path}")
    return path.read_bytes()
