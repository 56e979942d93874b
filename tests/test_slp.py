import numpy as np
import pytest

from melee_agent.slp import ReplayError, encode_replay, read_gamestates
from tests.conftest import BROKEN_REPLAYS, replay_path


@pytest.mark.parametrize("name", BROKEN_REPLAYS)
def test_broken_replays_give_a_clear_error_naming_the_file(name):
    path = replay_path(name)
    with pytest.raises(ReplayError) as e:
        encode_replay(path)
    assert name in str(e.value)
    assert "Traceback" not in str(e.value)


def test_missing_file_is_a_replay_error(tmp_path):
    with pytest.raises(ReplayError, match="no such replay file"):
        read_gamestates(tmp_path / "nope.slp")


def test_encode_replay_returns_every_frame():
    enc = encode_replay(replay_path("peppi_v3.13.slp"))  # ports 1 and 3
    assert enc.shape == (148, 27) and np.isfinite(enc).all()
    with pytest.raises(ReplayError, match="port 2 is not in this game"):
        encode_replay(replay_path("peppi_v3.13.slp"), 1, 2)


def test_cli_style_error_for_a_broken_replay_is_one_line():
    with pytest.raises(ReplayError) as e:
        read_gamestates(replay_path("pyslippi_v0.1.slp"))
    assert "\n" not in str(e.value)
