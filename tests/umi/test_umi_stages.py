"""A bot with a model per stage: each game played by its stage's model (the frame's ``stage``), the default model on
the stages none is named for; ``--policy STAGE=MODEL`` on the command line; the exported zip with a model per stage
passing the real `umi-conform` from an empty folder."""

from __future__ import annotations

import subprocess
import sys
import zipfile

import numpy as np
import pytest
import torch
from umi.frame import FRAME, STAGES

from melee_agent.cli import main as cli
from melee_agent.cli.umi import stage_policies
from melee_agent.envs.actions import ACTION_SETS
from melee_agent.rl.model import model_to_bytes, save_model
from melee_agent.umi.bot import MeleeAgentBot, ModelPlayer
from tests.umi.test_umi import BIN, Link, conform, fixed_choice_model, macro_rows

UNTOUCHABLE = ACTION_SETS["untouchable"]
# Three models that each always choose one action: which one played a game shows in its controller rows.
CHOICES = {"default": "noop", "battlefield": "shine", "dreamland": "spot_dodge"}


def player(action: str, stages: list[str] | None = None) -> ModelPlayer:
    net = fixed_choice_model(5, UNTOUCHABLE.index(action))
    return ModelPlayer.from_bytes(model_to_bytes(net, version=1, train_step=0, action_set="untouchable", stages=stages),
                                  origin=f"{action}.safetensors")


def frames_on(*stages: str) -> np.ndarray:
    f = np.zeros(len(stages), FRAME)
    f["players"]["character"] = 1  # FOX
    f["stage"] = [STAGES[s.upper()] for s in stages]
    return f


@pytest.fixture
def stage_bot():
    threads = torch.get_num_threads()
    bot = MeleeAgentBot.for_stages(player("noop"), {"battlefield": player("shine"), "dreamland": player("spot_dodge")})
    link = Link(bot, max_games=8)
    yield link
    link.close()
    torch.set_num_threads(threads)


def test_each_game_plays_its_stages_model_in_one_batch(stage_bot):
    games = {1: "battlefield", 2: "final_destination", 3: "dreamland", 4: "yoshis_story", 5: "battlefield"}
    stage_bot.new_games(*games)
    want = {g: macro_rows(UNTOUCHABLE, CHOICES.get(s, "noop")) for g, s in games.items()}
    for t in range(6):  # shine's six frames: every game's macro runs on, frame by frame, mixed in one batch
        order = list(games)[::-1] if t % 2 else list(games)
        rows = stage_bot.step(order, [t == 0] * len(order), frames=frames_on(*(games[g] for g in order)))
        for g, row in zip(order, rows):
            np.testing.assert_array_equal(row, want[g][t % len(want[g])], err_msg=f"game {g} on {games[g]}, frame {t}")


def test_the_bot_says_the_stages_its_model_trained_on(capsys):
    link = Link(MeleeAgentBot.from_player(player("noop", ["battlefield", "dreamland"])), max_games=1)
    link.close()
    assert "trained on battlefield, dreamland), delay 18" in capsys.readouterr().err


def test_the_bot_names_which_model_plays_where():
    bot = MeleeAgentBot.for_stages(player("noop"), {"battlefield": player("shine")})
    assert bot.stage_models() == {"battlefield": "shine.safetensors (untouchable)",
                                  "every other stage": "noop.safetensors (untouchable)"}
    assert len(MeleeAgentBot.for_stages(player("noop"), {}).players) == 1
    with pytest.raises(ValueError, match="'corneria' is not a stage"):
        MeleeAgentBot.for_stages(player("noop"), {"corneria": player("shine")})


def test_policy_flags_read_as_stage_models(tmp_path):
    a, b = tmp_path / "a.safetensors", tmp_path / "fd=b.safetensors"  # a file whose name has an "=" is a file
    a.write_bytes(b""), b.write_bytes(b"")
    assert stage_policies([str(a)], "") == (str(a), {})
    assert stage_policies([f"Battlefield={a}", f"dreamland={b}"], "") == (str(a), {"battlefield": str(a),
                                                                                   "dreamland": str(b)})
    assert stage_policies([f"battlefield={b}", str(a)], "") == (str(a), {"battlefield": str(b)})
    assert stage_policies([str(b)], "") == (str(b), {})


@pytest.mark.parametrize("argv, says", [
    (["--policy", "corneria=A"], "'corneria' is not a stage; use STAGE=MODEL with one of battlefield"),
    (["--policy", "A", "--policy", "A"], "2 plain models"),
    (["--policy", "battlefield=A", "--policy", "battlefield=A"], "battlefield already plays"),
    (["--policy", "battlefield=missing.safetensors"], "--policy battlefield= missing.safetensors: model file not found"),
])
def test_bad_stage_policies_get_one_line_errors(tmp_path, capsys, monkeypatch, argv, says):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "A").write_bytes(model_to_bytes(fixed_choice_model(5, 0), version=1, train_step=0,
                                                action_set="untouchable"))
    for cmd in (["umi"], ["umi", "export", "--out", "b.zip"]):
        assert cli.main([*cmd, *argv]) == 2
        err = capsys.readouterr().err.strip()
        assert says in err and "\n" not in err, err
    assert not (tmp_path / "b.zip").exists()


@pytest.fixture(scope="module")
def stage_models(tmp_path_factory):
    d = tmp_path_factory.mktemp("stage-models")
    out = {}
    for name, action, stages in (("fd", "noop", None), ("bf", "shine", ["battlefield"]),
                                 ("ys", "spot_dodge", ["yoshis_story", "battlefield"])):
        out[name] = d / f"{name}.safetensors"
        save_model(out[name], fixed_choice_model(5, UNTOUCHABLE.index(action)), version=1, train_step=0,
                   action_set="untouchable", stages=stages)
    return out


def test_export_bundles_a_model_per_stage_and_notes_a_mismatch(stage_models, tmp_path, capsys):
    out = tmp_path / "bot.zip"
    assert cli.main(["umi", "export", "--policy", f"battlefield={stage_models['bf']}", "--policy",
                     f"dreamland={stage_models['ys']}", "--policy", str(stage_models["fd"]), "--out", str(out)]) == 0
    printed = capsys.readouterr()
    assert "battlefield: " in printed.out and "every other stage: " in printed.out
    # ys trained on Yoshi's Story and Battlefield, and is asked to play Dream Land: said, not refused.
    assert "dreamland plays" in printed.err and "trained on yoshis_story, battlefield" in printed.err
    assert "battlefield plays" not in printed.err
    with zipfile.ZipFile(out) as z:
        assert z.read("model.safetensors") == stage_models["fd"].read_bytes()
        assert z.read("stages/battlefield.safetensors") == stage_models["bf"].read_bytes()
        assert z.read("stages/dreamland.safetensors") == stage_models["ys"].read_bytes()
        assert "A model per stage: battlefield: bf.safetensors" in z.read("run.py").decode()
        z.extractall(tmp_path / "unpacked")
    bot = MeleeAgentBot.from_folder(tmp_path / "unpacked")
    assert bot.stage_models() == {"battlefield": "battlefield.safetensors (untouchable)",
                                  "dreamland": "dreamland.safetensors (untouchable)",
                                  "every other stage": "model.safetensors (untouchable)"}


@pytest.mark.slow
def test_an_exported_zip_with_a_model_per_stage_passes_umi_conform(stage_models, tmp_path):
    """umi-conform's fixture games are on all six stages, so every stage's model answers in its run."""
    out = tmp_path / "bot.zip"
    assert cli.main(["umi", "export", "--policy", f"battlefield={stage_models['bf']}", "--policy",
                     f"yoshis_story={stage_models['ys']}", "--policy", str(stage_models["fd"]), "--out", str(out)]) == 0
    folder = tmp_path / "unpacked"
    with zipfile.ZipFile(out) as z:
        z.extractall(folder)
    where = subprocess.run([sys.executable, "-c", "import runpy; g = runpy.run_path('run.py', run_name='x'); "
                            "b = g['Bot'].from_folder('.'); print(len(b.players))"],
                           cwd=folder, capture_output=True, text=True, timeout=120)
    assert where.returncode == 0 and where.stdout.split() == ["3"], where.stderr
    report = conform(f"{sys.executable} run.py", folder)
    assert "0 warnings" in report


@pytest.mark.slow
def test_umi_conform_passes_melee_agent_umi_with_a_model_per_stage(stage_models, tmp_path):
    conform(f"{BIN / 'melee-agent'} umi --policy battlefield={stage_models['bf']} --policy {stage_models['fd']}",
            tmp_path)
