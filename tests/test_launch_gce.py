"""`launch gce`: the gcloud commands, a startup script that parses, and no secret anywhere."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from melee_agent.cli.main import build_parser
from melee_agent.workers.gce import GceSettings, gcloud_commands, plan, render_startup_script

SENTINEL = "tok-SENTINEL-9f8e7d"
ROOT = Path(__file__).resolve().parent.parent


def args(*extra: str):
    return build_parser().parse_args(["launch", "gce", "--count", "3", "--project", "proj", "--zone", "us-east1-b",
                                      "--manager", "http://10.1.2.3:8000", "--bucket", "gs://my-bucket", *extra])


def test_commands_create_a_template_and_a_managed_group_of_n():
    commands, script = plan(args(), "/tmp/s.sh")
    template, group = commands
    assert template[:7] == ["gcloud", "compute", "--project", "proj", "instance-templates", "create",
                            "melee-agent-workers-template"]
    assert "--metadata-from-file=startup-script=/tmp/s.sh" in template
    assert group[4:7] == ["instance-groups", "managed", "create"] and "--size=3" in group
    assert "--zone=us-east1-b" in group and "--template=melee-agent-workers-template" in group
    assert not any("SPOT" in c for c in template)
    assert script is not None and "gs://my-bucket/melee.iso" in script


def test_spot_resize_and_delete():
    template = plan(args("--spot"), "/tmp/s.sh")[0][0]
    assert "--provisioning-model=SPOT" in template
    (resize,), script = plan(args("--resize", "7"), "/tmp/s.sh")
    assert resize[4:7] == ["instance-groups", "managed", "resize"] and "--size=7" in resize and script is None
    delete, _ = plan(args("--delete"), "/tmp/s.sh")
    assert [c[4] for c in delete] == ["instance-groups", "instance-templates"] and all("--quiet" in c for c in delete)


def test_startup_script_parses_and_runs_k_workers_under_systemd(tmp_path):
    s = GceSettings(count=3, project="proj", zone="z", manager="http://m:8000", bucket="gs://b", workers_per_vm=4)
    script = render_startup_script(s)
    path = tmp_path / "startup.sh"
    path.write_text(script)
    assert subprocess.run(["bash", "-n", str(path)], capture_output=True).returncode == 0
    assert "melee-agent-worker@.service" in script and "Restart=always" in script
    assert "--num-workers 12" in script and "seq 0 $(( 4 - 1 ))" in script
    assert "gcloud secrets versions access latest --secret=melee-agent-token" in script
    assert "Xvfb" in script and "--env dolphin" in script


def test_no_token_or_secret_value_appears_in_commands_or_script(monkeypatch):
    monkeypatch.setenv("MELEE_AGENT_TOKEN", SENTINEL)
    commands, script = plan(args("--spot"), "/tmp/s.sh")
    assert SENTINEL not in script and all(SENTINEL not in part for c in commands for part in c)
    proc = subprocess.run([sys.executable, "-m", "melee_agent.cli.main", "launch", "gce", "--count", "2", "--project",
                           "p", "--zone", "z", "--manager", "http://m:8000", "--bucket", "gs://b", "--dry-run"],
                          capture_output=True, text=True, cwd=ROOT, env={"MELEE_AGENT_TOKEN": SENTINEL,
                                                                         "PATH": "/usr/bin:/bin"}, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "instance-templates create" in proc.stdout and "#!/usr/bin/env bash" in proc.stdout
    assert SENTINEL not in proc.stdout + proc.stderr


def test_creating_without_manager_or_bucket_is_a_clear_error():
    bad = build_parser().parse_args(["launch", "gce", "--count", "1", "--project", "p", "--zone", "z"])
    with pytest.raises(ValueError, match="--manager URL and --bucket gs://"):
        plan(bad, "/tmp/s.sh")
    assert gcloud_commands(GceSettings(1, "p", "z"), "/x")[1][-2] == "--size=1"
