"""``env.stage`` from config to model file: names checked with a clear error, weights one per stage, Dolphin's older
``dolphin.stage`` kept in agreement, every published model recording its stages (old files meaning Final
Destination), and the commands that play a model playing its first stage unless told another."""

from __future__ import annotations

import pytest

from melee_agent.cli.common import config_for_policy, stage_override
from melee_agent.config import ConfigError, env_stages, load_config
from melee_agent.envs.make import arena_stage, stage_kwargs
from melee_agent.manager.trainer import Trainer
from melee_agent.rl.model import DuelingDQN, model_from_bytes, save_model, trained_stages


def test_the_default_is_final_destination_and_builds_the_arena_as_before():
    cfg = load_config("default")
    assert cfg.env.stage == "final_destination" and env_stages(cfg) == ("final_destination",)
    assert stage_kwargs(cfg) == {"stage": "final_destination", "stage_weights": None}
    assert arena_stage(**stage_kwargs(cfg)) == {}  # the arena's own default: nothing passed


@pytest.mark.parametrize("value, stages", [
    ("battlefield", ("battlefield",)), ("Yoshis_Story", ("yoshis_story",)),
    ('["battlefield", "dreamland"]', ("battlefield", "dreamland")),
    ("[battlefield, pokemon_stadium]", ("battlefield", "pokemon_stadium")),  # unquoted on a command line
])
def test_env_stage_takes_a_name_or_a_list(value, stages):
    cfg = load_config("fight", [f"env.stage={value}"])
    assert env_stages(cfg) == stages
    kw = stage_kwargs(cfg)
    assert kw["stage"] == (stages[0] if not value.startswith("[") else list(stages))
    assert arena_stage(**kw) == {"stage": kw["stage"], "stage_weights": None}


def test_stage_weights_go_with_the_stages():
    cfg = load_config("fight", ["env.stage=[battlefield, dreamland]", "env.stage_weights=[3, 1]"])
    assert stage_kwargs(cfg) == {"stage": ["battlefield", "dreamland"], "stage_weights": [3.0, 1.0]}


@pytest.mark.parametrize("overrides, says", [
    (["env.stage=batlefield"], "env.stage 'batlefield' is not a stage (did you mean battlefield?); use one of "
                               "final_destination, battlefield"),
    (["env.stage=corneria"], "env.stage 'corneria' is not a stage; use one of"),
    (["env.stage=[]"], "env.stage must name at least one stage"),
    (["env.stage=[battlefield, Battlefield]"], "env.stage names a stage twice"),
    (["env.stage=7"], "env.stage must be a stage name or a list of names"),
    (["env.stage=[battlefield, dreamland]", "env.stage_weights=[1]"],
     "env.stage_weights has 1 weights, one per stage of env.stage"),
    (["env.stage_weights=[2]", "env.stage=[battlefield, dreamland]"], "env.stage_weights has 1 weights"),
    (["env.stage=[battlefield, dreamland]", "env.stage_weights=[0, 0]"], "env.stage_weights must be weights of 0"),
    (["env.stage=[battlefield, dreamland]", "env.stage_weights=[1, -1]"], "env.stage_weights must be weights of 0"),
])
def test_bad_stages_are_refused_naming_the_field(overrides, says):
    with pytest.raises(ConfigError, match=None) as e:
        load_config("fight", overrides)
    assert says in str(e.value), str(e.value)


def test_dolphins_older_stage_setting_agrees_with_env_stage():
    # Set alone, it names the stage (env.stage follows it); set beside another env.stage, it is refused.
    cfg = load_config("dolphin", ["dolphin.stage=BATTLEFIELD"])
    assert cfg.env.stage == "battlefield"
    assert load_config("dolphin", ["env.stage=dreamland"]).dolphin.stage == ""  # the shipped config leaves it out
    assert load_config("dolphin", ["env.stage=dreamland", "dolphin.stage=DREAMLAND"]).env.stage == "dreamland"
    with pytest.raises(ConfigError, match="dolphin.stage 'BATTLEFIELD' and env.stage 'dreamland' name different"):
        load_config("dolphin", ["env.stage=dreamland", "dolphin.stage=BATTLEFIELD"])
    assert load_config("dolphin", ["dolphin.stage=RANDOM_STAGE"]).env.stage == "final_destination"


def test_published_models_record_the_configs_stages(tmp_path):
    cfg = load_config("fight", ["env.stage=[yoshis_story, battlefield]", "replay.capacity=1000"])
    t = Trainer(cfg, tmp_path / "run")
    _, meta = model_from_bytes(t.model.data, action_set="fight")
    assert meta["stages"] == ["yoshis_story", "battlefield"]
    t = Trainer(load_config("fight", ["replay.capacity=1000"]), tmp_path / "run-fd")
    assert model_from_bytes(t.model.data, action_set="fight")[1]["stages"] == ["final_destination"]


def test_a_model_file_without_stages_trained_on_final_destination(tmp_path):
    save_model(tmp_path / "old.safetensors", DuelingDQN(), version=1, train_step=0, action_set="untouchable")
    meta = model_from_bytes((tmp_path / "old.safetensors").read_bytes())[1]
    assert meta["stages"] == ["final_destination"] and "stages" not in _raw(tmp_path / "old.safetensors")
    with pytest.raises(ValueError, match="stages '7' is not a JSON list"):
        trained_stages({"stages": "7"}, "m")


def _raw(path):
    from melee_agent.io.safetensors_header import read_metadata

    return read_metadata(path.read_bytes())


@pytest.fixture
def models(tmp_path):
    out = {}
    for name, stages in (("bf", ["battlefield", "dreamland"]), ("old", None), ("odd", ["corneria"])):
        out[name] = str(tmp_path / f"{name}.safetensors")
        save_model(out[name], DuelingDQN(num_actions=30), version=1, train_step=0, action_set="basic", stages=stages)
    return out


def test_a_model_plays_its_first_stage_unless_the_command_names_one(models, tmp_path):
    assert env_stages(config_for_policy(None, [], models["bf"])[0]) == ("battlefield",)
    assert env_stages(config_for_policy(None, [], models["old"])[0]) == ("final_destination",)
    assert env_stages(config_for_policy(None, stage_override("Dreamland"), models["bf"])[0]) == ("dreamland",)
    assert env_stages(config_for_policy(None, ["env.stage=yoshis_story"], models["bf"])[0]) == ("yoshis_story",)
    assert env_stages(config_for_policy("default", ["env.action_set=basic"], models["bf"])[0]) == ("battlefield",)
    own = tmp_path / "pokemon.toml"  # a config that names its stage: played as the config says
    own.write_text('[env]\nstage = "pokemon_stadium"\naction_set = "basic"\n')
    assert env_stages(config_for_policy(str(own), [], models["bf"])[0]) == ("pokemon_stadium",)
    with pytest.raises(ValueError, match="--stage 'corneria' is not a stage; use one of final_destination"):
        stage_override("corneria")
    with pytest.raises(ValueError, match="odd.safetensors: the model trained on stage 'corneria', which this version "
                                         "does not know"):
        config_for_policy(None, [], models["odd"])


def test_the_config_builds_an_arena_on_its_stages():
    from melee_agent.envs.make import make_env, make_eval_env

    cfg = load_config("fight", ["env.stage=[battlefield, dreamland]", "env.stage_weights=[1, 0]"])
    env = make_env(cfg, num_envs=4)
    env.reset()
    assert env.stages == ("battlefield", "dreamland") and env.stage_names == ("battlefield",) * 4
    env, _ = make_eval_env(load_config("fight", ["env.stage=yoshis_story"]), 4, (1, 9))
    env.reset()
    assert env.stage_names == ("yoshis_story",) * 4
    assert make_env(load_config("fight"), num_envs=2).stages == ("final_destination",)


def test_the_designed_cpus_dodging_game_is_final_destination_only():
    load_config("default", ["env.stage=battlefield"])  # dodging against Melee's CPU: the fight's engine
    with pytest.raises(ConfigError, match="env.stage='battlefield' plays on the fight's engine; env.cpu = 'designed'"):
        load_config("default", ["env.stage=battlefield", "env.cpu=designed"])
    load_config("default", ["env.cpu=designed"])  # on Final Destination, as before


def test_a_runs_report_names_its_stages_where_not_final_destination():
    import dataclasses

    from melee_agent.report.run_report import RunReport
    from tests.run_reports import check, fight_result, report

    c = check(fight_result(0.9))
    base = report(c, [c])
    assert "trained_stages" not in base.to_json()
    bf = dataclasses.replace(base, trained_stages=["battlefield", "dreamland"])
    doc = bf.to_json()
    assert doc["trained_stages"] == ["battlefield", "dreamland"]
    assert RunReport.from_json(doc).trained_stages == ["battlefield", "dreamland"]
    assert "trained_stages" not in dataclasses.replace(base, trained_stages=["final_destination"]).to_json()
    with pytest.raises(ValueError, match="field 'trained_stages' must be a list of stage names"):
        RunReport.from_json({**doc, "trained_stages": "battlefield"})
