"""`launch gce`: the gcloud commands, a startup script that parses, and no secret anywhere."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from melee_agent.cli.main import build_parser
from melee_agent.workers.gce import GceSettings, gcloud_commands, plan, render_startup_script

SENTINEL = "tok-SENTINEL-9f8e7d"
ROOT = Path(__file__).resolve().parents[2]


def args(*extra: str):
    return build_parser().parse_args(["launch", "gce", "--count", "3", "--project", "proj", "--zone", "us-east1-b",
                                      "--manager", "http://10.1.2.3:8000", "--bucket", "gs://my-bucket", *extra])


def test_commands_create_a_template_and_a_managed_group_of_n():
    commands, script = plan(args(), "/tmp/s.sh", "/tmp/w.whl")
    upload, template, group, *instances = commands
    assert upload[:3] == ["gsutil", "cp", "/tmp/w.whl"] and upload[3].startswith("gs://my-bucket/melee-agent/")
    assert "--boot-disk-size=30GB" in template
    # Named VMs, each with its own fleet index: worker indices cannot collide across VMs.
    assert [i[6] for i in instances] == ["create-instance"] * 3
    assert [i[-1] for i in instances] == [f"--stateful-metadata=vm-index={k},fleet-size=3" for k in range(3)]
    assert template[:7] == ["gcloud", "compute", "--project", "proj", "instance-templates", "create",
                            "melee-agent-workers-template"]
    assert "--metadata-from-file=startup-script=/tmp/s.sh" in template
    assert group[4:7] == ["instance-groups", "managed", "create"] and "--size=0" in group
    assert "--zone=us-east1-b" in group and "--template=melee-agent-workers-template" in group
    assert not any("SPOT" in c for c in template)
    assert script is not None and "gs://my-bucket/melee.iso" in script


def test_spot_resize_and_delete():
    template = plan(args("--spot"), "/tmp/s.sh")[0][1]
    assert "--provisioning-model=SPOT" in template
    grow, script = plan(args("--resize", "5"), "/tmp/s.sh")
    # The new VMs carry the size they join: the template (baked for 3) needs no change.
    assert [c[-1] for c in grow] == ["--stateful-metadata=vm-index=3,fleet-size=5",
                                     "--stateful-metadata=vm-index=4,fleet-size=5"]
    assert script is None
    (shrink,), _ = plan(args("--resize", "1"), "/tmp/s.sh")
    assert shrink[6] == "delete-instances" and shrink[-1] == "--instances=melee-agent-workers-1,melee-agent-workers-2"
    delete, _ = plan(args("--delete"), "/tmp/s.sh")
    assert [c[4] for c in delete] == ["instance-groups", "instance-templates"] and all("--quiet" in c for c in delete)


def test_startup_script_parses_and_runs_k_workers_under_systemd(tmp_path):
    s = GceSettings(count=3, project="proj", zone="z", manager="http://m:8000", bucket="gs://b", workers_per_vm=4)
    script = render_startup_script(s)
    path = tmp_path / "startup.sh"
    path.write_text(script)
    assert subprocess.run(["bash", "-n", str(path)], capture_output=True).returncode == 0
    assert "melee-agent-worker@.service" in script and "Restart=always" in script
    assert "--num-workers ${TOTAL}" in script and "seq 0 $(( 4 - 1 ))" in script and "curl -sf" in script
    assert "gcloud secrets versions access latest --secret=melee-agent-token" in script
    assert "xvfb" in script and "--env dolphin" in script
    # A stop reaches the worker alone, in time to spool its segment; its /tmp goes with it.
    assert "KillMode=mixed" in script and "TimeoutStopSec=60" in script and "PrivateTmp=true" in script


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
    assert len(gcloud_commands(GceSettings(1, "p", "z"), "/x")) == 4
    small = build_parser().parse_args(["launch", "gce", "--count", "1", "--project", "p", "--zone", "z", "--manager",
                                       "http://m", "--bucket", "gs://b", "--boot-disk-gb", "10"])
    with pytest.raises(ValueError, match="--boot-disk-gb 10 is too small"):
        plan(small, "/tmp/s.sh")


STUBS = {
    # The metadata server: this VM's index, or a 404 body (curl -f turns it into an error).
    "curl": 'case "$4" in */vm-index) v="${VM_INDEX_META:-}";; */fleet-size) v="${FLEET_SIZE_META:-}";; *) v=;; esac; '
            'if [ -n "$v" ]; then printf %s "$v"; else echo "<h1>404</h1>"; [ "$1" = "-sf" ] && exit 22; fi',
    "gcloud": 'echo "gcloud $*" >> "$STUB_LOG"; printf %s "$SECRET_VALUE"',
    # The bucket holds the wheel, Slippi_Online-x86_64.AppImage and melee.iso; any other object is missing.
    "gsutil": 'echo "gsutil $*" >> "$STUB_LOG"; for a in "$@"; do dst="$a"; done; '
              'case "$3" in */melee-agent/*.whl|*/Slippi_Online-x86_64.AppImage|*/melee.iso) ;; '
              '*) echo "CommandException: No URLs matched: $3" >&2; exit 1;; esac; '
              'case "$dst" in */) touch "$dst/$(basename "$3")";; *) touch "$dst";; esac',
    "apt-get": 'echo "apt-get $*" >> "$STUB_LOG"',
    "systemctl": 'echo "systemctl $*" >> "$STUB_LOG"',
    "python3": 'echo "python3 $*" >> "$STUB_LOG"; d="$3"; mkdir -p "$d/bin"; '
               'printf "#!/bin/sh\\necho pip \\"\\$*\\" >> $STUB_LOG\\n" > "$d/bin/pip"; chmod +x "$d/bin/pip"',
}


def run_startup(tmp_path: Path, script: str, vm_index: str | None, name: str,
                fleet_size: str | None = None) -> tuple[subprocess.CompletedProcess, Path]:
    root, bin_dir = tmp_path / name / "root", tmp_path / name / "bin"
    bin_dir.mkdir(parents=True)
    root.mkdir()
    for tool, body in STUBS.items():
        (bin_dir / tool).write_text(f"#!/bin/sh\n{body}\n")
        (bin_dir / tool).chmod(0o755)
    (tmp_path / name / "startup.sh").write_text(script)
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "MELEE_AGENT_ROOT": str(root), "STUB_LOG": str(tmp_path / name / "log"),
           "SECRET_VALUE": SENTINEL}
    if vm_index is not None:
        env["VM_INDEX_META"] = vm_index
    if fleet_size is not None:
        env["FLEET_SIZE_META"] = fleet_size
    proc = subprocess.run(["bash", str(tmp_path / name / "startup.sh")], capture_output=True, text=True, env=env,
                          timeout=60)
    return proc, root


def test_startup_script_runs_on_two_vms_with_unique_worker_indices_and_a_private_token(tmp_path):
    s = GceSettings(count=2, project="proj", zone="z", manager="http://m:8000", bucket="gs://b", workers_per_vm=2)
    script = render_startup_script(s)
    enabled = []
    for vm in ("0", "1"):
        proc, root = run_startup(tmp_path, script, vm, f"vm{vm}", fleet_size="2")
        assert proc.returncode == 0, proc.stderr
        assert SENTINEL not in proc.stdout + proc.stderr  # the token is never printed
        token = root / "opt/melee-agent/token"
        assert token.read_text() == SENTINEL and (token.stat().st_mode & 0o777) == 0o600
        env_file = root / "opt/melee-agent/worker.env"
        assert env_file.read_text() == f"MELEE_AGENT_TOKEN={SENTINEL}\n" and (env_file.stat().st_mode & 0o777) == 0o600
        unit = (root / "etc/systemd/system/melee-agent-worker@.service").read_text()
        assert "--worker-index %i --num-workers 4" in unit and "EnvironmentFile=/opt/melee-agent/worker.env" in unit
        assert SENTINEL not in unit
        log = (tmp_path / f"vm{vm}" / "log").read_text()
        assert "libasound2" in log and "fuse" in log and "download.pytorch.org/whl/cpu" in log
        assert "gs://b/melee-agent/melee_agent-" in log and "melee_agent-" in log.split("pip install -q")[-1]
        # Reinstalled at every boot: a redeployed wheel of the same version replaces the installed one.
        assert "pip install -q --force-reinstall --no-deps" in log
        enabled += [line.split("@")[1].split(".")[0] for line in log.splitlines()
                    if line.startswith("systemctl restart --no-block melee-agent-worker@")]
    assert sorted(enabled) == ["0", "1", "2", "3"]  # 2 VMs x 2 workers, no index twice


def test_startup_script_stops_with_a_clear_message_without_its_vm_index(tmp_path):
    s = GceSettings(count=2, project="proj", zone="z", manager="http://m:8000", bucket="gs://b")
    proc, root = run_startup(tmp_path, render_startup_script(s), None, "novm")
    assert proc.returncode == 1 and "no vm-index metadata" in proc.stderr
    assert not (root / "etc/systemd/system").exists()


def test_a_vm_added_by_resize_runs_from_the_same_template_with_a_valid_worker_index(tmp_path):
    # The template was rendered for 2 VMs x 2 workers; --resize 3 adds vm-index=2 with fleet-size=3.
    s = GceSettings(count=2, project="proj", zone="z", manager="http://m:8000", bucket="gs://b", workers_per_vm=2)
    proc, root = run_startup(tmp_path, render_startup_script(s), "2", "grown", fleet_size="3")
    assert proc.returncode == 0, proc.stderr
    unit = (root / "etc/systemd/system/melee-agent-worker@.service").read_text()
    assert "--num-workers 6" in unit  # workers 4 and 5 are within [0, 6): no crash loop
    from melee_agent.workers.play import ape_x_epsilon

    assert 0 < ape_x_epsilon(5, 6) < ape_x_epsilon(4, 6)
    # A VM made before fleet-size existed (or with a stale one) still gets an index inside the fleet.
    proc, root = run_startup(tmp_path, render_startup_script(s), "3", "old")
    assert proc.returncode == 0, proc.stderr
    assert "--num-workers 8" in (root / "etc/systemd/system/melee-agent-worker@.service").read_text()


def test_bucket_object_names_are_flags_and_a_missing_object_is_named(tmp_path):
    a = args("--dolphin-object", "slippi/Slippi_Online-x86_64.AppImage", "--iso-object", "isos/ssbm-1.02.iso")
    _, script = plan(a, "/tmp/s.sh")
    assert "gs://my-bucket/slippi/Slippi_Online-x86_64.AppImage" in script
    assert "gs://my-bucket/isos/ssbm-1.02.iso" in script
    with pytest.raises(ValueError, match="--iso-object 'gs://b/x.iso' must be an object name"):
        plan(args("--iso-object", "gs://b/x.iso"), "/tmp/s.sh")
    # An object the bucket lacks stops the script with one line naming it and the flag (not gsutil's words alone).
    s = GceSettings(count=1, project="p", zone="z", manager="http://m", bucket="gs://b", iso_object="SSBM.iso")
    proc, root = run_startup(tmp_path, render_startup_script(s), "0", "noiso")
    assert proc.returncode == 1
    assert "cannot copy gs://b/SSBM.iso" in proc.stderr and "--iso-object" in proc.stderr
    assert not (root / "etc/systemd/system").exists()


def test_service_account_and_redeploy():
    template = plan(args("--service-account", "workers@proj.iam.gserviceaccount.com"), "/tmp/s.sh")[0][1]
    assert "--service-account=workers@proj.iam.gserviceaccount.com" in template
    (upload, restart), script = plan(args("--redeploy"), "/tmp/s.sh", "/tmp/w.whl")
    assert script is None and upload[:3] == ["gsutil", "cp", "/tmp/w.whl"]
    assert restart[4:8] == ["instance-groups", "managed", "rolling-action", "restart"]


def test_the_vms_workers_play_the_runs_config_not_always_dolphin(tmp_path):
    """Before: every VM's worker ran `--config dolphin`, so a fleet could not train fights."""
    import re

    from melee_agent.config import load_config

    _, script = plan(args("--config", "fight-d18", "--set", "learner.lr=0.0002"), "/tmp/s.sh")
    assert "--config dolphin " not in script and "--config /opt/melee-agent/config.toml" in script
    toml = re.search(r"<<'MELEE_AGENT_CONFIG'\n(.*?)MELEE_AGENT_CONFIG\n", script, re.S).group(1)
    (tmp_path / "c.toml").write_text(toml)
    cfg = load_config(str(tmp_path / "c.toml"))
    assert (cfg.env.env, cfg.env.game, cfg.env.action_set, cfg.env.delay_frames) == ("dolphin", "fight", "fight:18", 18)
    assert cfg.learner.lr == 0.0002
    # The script still runs where the config is written (the stubbed VM of the tests above).
    proc, root = run_startup(tmp_path, script, "0", "vm")
    assert proc.returncode == 0, proc.stderr
    assert load_config(str(root / "opt/melee-agent/config.toml")).env.game == "fight"


def test_a_redeploy_reaches_running_workers_and_a_refused_worker_is_not_restarted_for_ever(tmp_path):
    """(b) Before: the units could start before the startup script reinstalled the wheel (no ordering),
    `enable --now` left a running unit on the old wheel, and `--no-deps` never installed a changed dependency.
    (c) Before: `Restart=always` with no start limit restarted a refused worker every 5 s for ever."""
    _, script = plan(args(), "/tmp/s.sh")
    unit = script.split("<<UNIT", 1)[1].split("\nUNIT\n", 1)[0]
    assert "After=network-online.target google-startup-scripts.service" in unit
    assert "StartLimitIntervalSec=600" in unit and "StartLimitBurst=5" in unit
    assert "RestartPreventExitStatus=2" in unit
    proc, root = run_startup(tmp_path, script, "0", "vm")
    assert proc.returncode == 0, proc.stderr
    log = (tmp_path / "vm" / "log").read_text().splitlines()
    stop = log.index("systemctl stop melee-agent-worker@*.service")
    pips = [i for i, line in enumerate(log) if line.startswith("pip install -q") and "torch" not in line
            and "--upgrade pip" not in line]
    restarts = [i for i, line in enumerate(log) if line.startswith("systemctl restart --no-block melee-agent-worker@")]
    assert stop < min(pips) and max(pips) < min(restarts) and len(restarts) == 2
    assert any(line.startswith("pip install -q /") or ("--no-deps" not in line and line.endswith(".whl"))
               for line in (log[i] for i in pips))  # the wheel once more with its dependencies
    assert not any("enable --now" in line for line in log)
