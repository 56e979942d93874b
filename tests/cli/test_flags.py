"""Every command's flags are checked when parsed: a value that can never work ends the command with
one line naming the flag and what it accepts (exit 2), before anything starts."""

from __future__ import annotations

import subprocess
import sys

import pytest

from melee_agent.cli.main import main

BAD = [
    (["manager", "--port", "70000"], "--port: must be a port number 1-65535"),
    (["manager", "--port", "http"], "--port: must be a port number"),
    (["manager", "--workers", "0"], "--workers: must be a positive integer"),
    (["worker", "--manager", "notaurl"], "--manager: must be an http(s) URL"),
    (["worker", "--manager", "ftp://host:21"], "--manager: must be an http(s) URL"),
    (["worker", "--manager", "http://host:99999"], "--manager: must be an http(s) URL"),
    (["worker", "--manager", "http://h:1", "--envs", "-3"], "--envs: must be a positive integer"),
    (["worker", "--manager", "http://h:1", "--worker-index", "-1"], "--worker-index: must be an integer >= 0"),
    (["worker", "--manager", "http://h:1", "--device", "gpu9"], "--device: must be a torch device"),
    (["launch", "local", "--count", "0", "--manager", "http://h:1"], "--count: must be a positive integer"),
    (["train", "--minutes", "-1"], "--minutes: must be a positive number"),
    (["train", "--minutes", "nan"], "--minutes: must be a positive number"),
    (["train", "--port", "65536"], "--port: must be a port number 1-65535 (or 0: a free one)"),
    (["eval", "--episodes", "0"], "--episodes: must be a positive integer"),
    (["bench", "replay", "--capacity", "0"], "--capacity: must be a positive integer"),
    (["bench", "arena", "--seconds", "0"], "--seconds: must be a positive number"),
    (["eval", "--seed", "99999999999999999999999"], "--seed: must be an integer from 0 to 2^62"),
    (["watch", "--out", "w.gif", "--seed", "-1"], "--seed: must be an integer from 0 to 2^62"),
    (["launch", "gce", "--count", "0", "--project", "p", "--zone", "z"], "--count: must be a positive integer"),
    (["launch", "gce", "--count", "1", "--project", "p", "--zone", "z", "--cpu-level", "12"],
     "--cpu-level: must be a CPU level 1-9"),
    (["launch", "gce", "--count", "1", "--project", "p", "--zone", "z", "--workers-per-vm", "0"],
     "--workers-per-vm: must be a positive integer"),
]


@pytest.mark.parametrize("argv,expected", BAD, ids=[" ".join(a) for a, _ in BAD])
def test_a_bad_flag_is_one_line_naming_it(argv: list[str], expected: str, capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert expected in err and err.count("\n") == 1 and "Traceback" not in err


def test_worker_index_must_be_below_the_fleet_size(capsys: pytest.CaptureFixture) -> None:
    assert main(["worker", "--manager", "http://127.0.0.1:9", "--worker-index", "2", "--num-workers", "2"]) == 2
    assert "--worker-index 2 must be below --num-workers 2" in capsys.readouterr().err


def test_the_manager_refuses_a_bad_port_before_starting() -> None:
    # Through the real entry point: nothing binds, nothing is written, one line comes back.
    out = subprocess.run([sys.executable, "-m", "melee_agent.cli", "manager", "--port", "70000"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and out.stderr.strip().startswith("melee-agent manager: error: argument --port")
