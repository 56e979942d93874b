"""scripts/noop_first_hit.py: noop's first hit from the dodging start and from Final Destination's spawn points."""

import importlib.util
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "noop_first_hit.py"


def _load():
    spec = importlib.util.spec_from_file_location("noop_first_hit", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_from_the_spawn_points_marth_walks_further_and_hits_later():
    s = _load()
    own = s.first_hit_seconds(9, 8, seed=11, spawn=False)
    spawn = s.first_hit_seconds(9, 8, seed=11, spawn=True)
    assert (own < 60).all() and (spawn < 60).all()  # level 9 hits a noop in every episode
    # The spawn points are 120 apart, the dodging start at most 90: the walk is longer in every game.
    assert float(spawn.min()) > float(own.max())
