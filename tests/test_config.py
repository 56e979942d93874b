import dataclasses

import pytest

from melee_agent.config import ConfigError, load_config


def test_small_config_overrides_defaults():
    cfg = load_config("small")
    assert cfg.name == "small"
    assert cfg.replay.capacity == 20_000
    assert cfg.learner.gamma == 0.99  # untouched key keeps its default


def test_command_line_override_parses_types():
    cfg = load_config("default", ["learner.batch_size=64", "learner.lr=3e-4", "env.reward=damage"])
    assert cfg.learner.batch_size == 64 and cfg.learner.lr == pytest.approx(3e-4)
    assert cfg.env.reward == "damage"


@pytest.mark.parametrize("bad", ["learner.bogus=1", "nosuch.key=1", "learner.batch_size=abc", "oops"])
def test_bad_override_names_the_problem(bad):
    with pytest.raises(ConfigError) as e:
        load_config("default", [bad])
    assert bad.split("=")[0].split(".")[-1] in str(e.value) or "section.key=value" in str(e.value)


def test_unknown_key_in_file_is_an_error(tmp_path):
    f = tmp_path / "x.toml"
    f.write_text("[replay]\ncapasity = 5\n")
    with pytest.raises(ConfigError, match="capasity"):
        load_config(f)


def test_every_shipped_config_loads() -> None:
    from importlib import resources

    names = sorted(p.name[:-5] for p in resources.files("melee_agent.configs").iterdir() if p.name.endswith(".toml"))
    assert {"default", "small", "gpu", "dolphin"} <= set(names)
    for name in names:
        assert load_config(name).name == name
    gpu = load_config("gpu")
    assert gpu.learner.cuda_graph and gpu.env.compile and gpu.worker.envs == 1_024


def test_an_evaluation_needs_at_least_one_environment():
    assert load_config("fight", ["train.eval_envs=1"]).train.eval_envs == 1
    with pytest.raises(ConfigError, match="train.eval_envs must be an integer of at least 1, got 0"):
        load_config("default", ["train.eval_envs=0"])


def test_the_network_width_and_reward_scale_are_checked_when_the_config_loads():
    cfg = load_config("fight", ["learner.shared=64", "learner.stream=256", "learner.reward_scale=0.1"])
    assert (cfg.learner.shared, cfg.learner.stream, cfg.learner.reward_scale) == (64, 256, 0.1)
    with pytest.raises(ConfigError, match="learner.stream must be an integer of at least 1, got 0"):
        load_config("fight", ["learner.stream=0"])
    with pytest.raises(ConfigError, match="learner.reward_scale must be a positive number, got -1"):
        load_config("fight", ["learner.reward_scale=-1"])


@pytest.mark.parametrize(("override", "message"), [
    ("learner.lr=-1", "learner.lr must be a positive number, got -1.0"),
    ("learner.lr=nan", "learner.lr must be a positive number, got nan"),
    ("learner.gamma=5", "learner.gamma must be a number from 0 to 1"),
    ("learner.batch_size=0", "learner.batch_size must be an integer of at least 1"),
    ("learner.target_sync=0", "learner.target_sync must be an integer of at least 1"),
    ("replay.capacity=0", "replay.capacity must be an integer of at least 1"),
    ("replay.alpha=nan", "replay.alpha must be 0 or more"),
    ("env.cpu_level=10", "env.cpu_level must be a CPU level 1-9"),
    ("env.level_weights=[0, 0, 0, 0, 0, 0, 0, 0, 0]", "env.level_weights must be weights of 0 or more"),
    ("worker.epsilon_base=1.5", "worker.epsilon_base must be a number from 0 to 1"),
    ("manager.port=70000", "manager.port must be a port 0-65535"),
])
def test_a_value_no_run_can_use_is_refused_when_the_config_loads(override, message):
    """Before: a NaN or negative rate failed at the manager's start, a zero batch or target sync was taken."""
    with pytest.raises(ConfigError, match=message.replace("(", ".").replace(")", ".").replace("[", ".")):
        load_config("fight", [override])


def test_the_delayed_fight_config_is_the_fight_config_with_18_frames_of_delay_and_macros_as_long():
    fight, d18 = load_config("fight"), load_config("fight-d18")
    assert d18.env.delay_frames == 18 and fight.env.delay_frames == 0
    assert d18.env.action_set == "fight:18" and fight.env.action_set == "fight"
    d18.env.delay_frames, d18.env.action_set, d18.name = 0, "fight", "fight"
    assert d18 == fight


def test_fights_compile_their_workers_and_evaluations_and_dodging_does_neither():
    from melee_agent.envs.make import eval_config

    fight = load_config("fight")
    assert fight.env.compile_eval and fight.env.compile and eval_config(fight).env.compile
    workers_eager = dataclasses.replace(fight, env=dataclasses.replace(fight.env, compile=False))
    assert eval_config(workers_eager).env.compile and not workers_eager.env.compile  # left as it was
    default = load_config("default")
    assert eval_config(default) is default and not default.env.compile
