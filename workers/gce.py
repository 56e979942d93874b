"""`melee-agent launch gce`: a fleet of Dolphin worker VMs on Google Compute Engine.

Renders an instance template whose startup script installs melee-agent, fetches the Slippi
Dolphin AppImage and the user's ISO from the user's bucket, reads the manager token from Secret
Manager at boot (it never appears in a command, the template or the script), and runs K workers
under systemd (``melee-agent-worker@i``, restarted when they die, on an Xvfb display because the
Slippi AppImage wants one); then a managed instance group of N VMs from that template.
``--dry-run`` prints the gcloud commands and the script; otherwise they run.

Example::

    >>> cmds = gcloud_commands(GceSettings(count=4, project="p", zone="us-central1-a", manager="http://10.0.0.2:8000",
    ...                                    bucket="gs://b"), "/tmp/startup.sh")
    >>> [c[3] for c in cmds]
    ['instance-templates', 'instance-groups']
"""

from __future__ import annotations

import argparse
import shlex
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path


@dataclass
class GceSettings:
    count: int
    project: str
    zone: str
    manager: str = ""
    bucket: str = ""
    name: str = "melee-agent-workers"
    machine_type: str = "e2-standard-4"
    workers_per_vm: int = 2
    spot: bool = False
    token_secret: str = "melee-agent-token"
    package: str = "melee-agent"
    dolphin_object: str = "Slippi_Online-x86_64.AppImage"
    iso_object: str = "melee.iso"
    cpu_level: int = 9
    image_family: str = "debian-12"
    image_project: str = "debian-cloud"

    @property
    def template(self) -> str:
        return f"{self.name}-template"


def render_startup_script(s: GceSettings) -> str:
    """The VM's boot script: bash, idempotent, no secret inside (the token is fetched at boot)."""
    total = s.count * s.workers_per_vm
    q = shlex.quote
    return f"""#!/usr/bin/env bash
# melee-agent worker VM: install, fetch Dolphin and the ISO, read the token, start {s.workers_per_vm} workers.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q python3-venv xvfb libfuse2 libgl1 libegl1 libusb-1.0-0 libgtk-3-0 curl
install -d -m 0755 /opt/melee-agent
if [ ! -x /opt/melee-agent/venv/bin/melee-agent ]; then
  python3 -m venv /opt/melee-agent/venv
  /opt/melee-agent/venv/bin/pip install -q --upgrade pip
  /opt/melee-agent/venv/bin/pip install -q {q(s.package)}
fi
gsutil -q cp {q(s.bucket.rstrip('/') + '/' + s.dolphin_object)} /opt/melee-agent/dolphin.AppImage
chmod 0755 /opt/melee-agent/dolphin.AppImage
gsutil -q cp {q(s.bucket.rstrip('/') + '/' + s.iso_object)} /opt/melee-agent/melee.iso
# The manager token comes from Secret Manager into a root-only file; it is never in this script.
umask 077
gcloud secrets versions access latest --secret={q(s.token_secret)} --project={q(s.project)} > /opt/melee-agent/token
printf 'MELEE_AGENT_TOKEN=%s\\n' "$(cat /opt/melee-agent/token)" > /opt/melee-agent/worker.env
umask 022
INDEX_BASE=$(( $(curl -s -H 'Metadata-Flavor: Google' \\
  http://metadata.google.internal/computeMetadata/v1/instance/attributes/worker-base 2>/dev/null || echo 0) ))
cat > /etc/systemd/system/xvfb.service <<'UNIT'
[Unit]
Description=Virtual display for Slippi Dolphin
[Service]
ExecStart=/usr/bin/Xvfb :99 -screen 0 640x480x24
Restart=always
[Install]
WantedBy=multi-user.target
UNIT
cat > /etc/systemd/system/melee-agent-worker@.service <<UNIT
[Unit]
Description=melee-agent Dolphin worker %i
After=network-online.target xvfb.service
Wants=network-online.target xvfb.service
[Service]
Environment=DISPLAY=:99
EnvironmentFile=/opt/melee-agent/worker.env
ExecStart=/opt/melee-agent/venv/bin/melee-agent worker --manager {q(s.manager)} --env dolphin --config dolphin \\
  --set dolphin.dolphin_path=/opt/melee-agent/dolphin.AppImage --set dolphin.iso_path=/opt/melee-agent/melee.iso \\
  --set env.cpu_level={s.cpu_level} --worker-index %i --num-workers {total}
Restart=always
RestartSec=5
[Install]
WantedBy=multi-user.target
UNIT
systemctl daemon-reload
systemctl enable --now xvfb.service
HOST_INDEX=$(hostname | grep -oE '[0-9]+$' || echo 0)
for k in $(seq 0 $(( {s.workers_per_vm} - 1 ))); do
  i=$(( (INDEX_BASE + HOST_INDEX * {s.workers_per_vm} + k) % {total} ))
  systemctl enable --now "melee-agent-worker@${{i}}.service"
done
"""


def gcloud_commands(s: GceSettings, script_path: str) -> list[list[str]]:
    template = ["gcloud", "compute", "--project", s.project, "instance-templates", "create", s.template,
                f"--machine-type={s.machine_type}", f"--image-family={s.image_family}",
                f"--image-project={s.image_project}", "--scopes=cloud-platform",
                f"--metadata-from-file=startup-script={script_path}"]
    if s.spot:
        template += ["--provisioning-model=SPOT", "--instance-termination-action=STOP"]
    group = ["gcloud", "compute", "--project", s.project, "instance-groups", "managed", "create", s.name,
             f"--zone={s.zone}", f"--template={s.template}", f"--size={s.count}", f"--base-instance-name={s.name}"]
    return [template, group]


def resize_command(s: GceSettings, size: int) -> list[str]:
    return ["gcloud", "compute", "--project", s.project, "instance-groups", "managed", "resize", s.name,
            f"--zone={s.zone}", f"--size={size}"]


def delete_commands(s: GceSettings) -> list[list[str]]:
    return [["gcloud", "compute", "--project", s.project, "instance-groups", "managed", "delete", s.name,
             f"--zone={s.zone}", "--quiet"],
            ["gcloud", "compute", "--project", s.project, "instance-templates", "delete", s.template, "--quiet"]]


def add_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--count", type=int, required=True, help="number of VMs in the managed instance group")
    p.add_argument("--project", required=True, help="GCP project")
    p.add_argument("--zone", required=True, help="GCE zone, e.g. us-central1-a")
    p.add_argument("--manager", default="", help="the manager's URL as the VMs reach it")
    p.add_argument("--bucket", default="", help="gs:// bucket holding the Dolphin AppImage and your ISO")
    p.add_argument("--workers-per-vm", type=int, default=2, help="Dolphin workers per VM (default: %(default)s)")
    p.add_argument("--machine-type", default="e2-standard-4", help="(default: %(default)s)")
    p.add_argument("--token-secret", default="melee-agent-token", help="Secret Manager secret with the token")
    p.add_argument("--name", default="melee-agent-workers", help="group name (default: %(default)s)")
    p.add_argument("--cpu-level", type=int, default=9, help="the built-in CPU's level (default: %(default)s)")
    p.add_argument("--spot", action="store_true", help="spot VMs (cheaper, may be preempted)")
    p.add_argument("--dry-run", action="store_true", help="print the gcloud commands and the script; run nothing")
    p.add_argument("--resize", type=int, default=None, metavar="N", help="resize the existing group to N VMs")
    p.add_argument("--delete", action="store_true", help="delete the group and its template")


def settings_from_args(args: argparse.Namespace) -> GceSettings:
    if args.count < 1 or args.workers_per_vm < 1:
        raise ValueError("--count and --workers-per-vm must be at least 1")
    return GceSettings(count=args.count, project=args.project, zone=args.zone, manager=args.manager,
                       bucket=args.bucket, name=args.name, machine_type=args.machine_type,
                       workers_per_vm=args.workers_per_vm, spot=args.spot, token_secret=args.token_secret,
                       cpu_level=args.cpu_level)


def plan(args: argparse.Namespace, script_path: str) -> tuple[list[list[str]], str | None]:
    """The commands (and the startup script, when creating) this invocation means."""
    s = settings_from_args(args)
    if args.delete:
        return delete_commands(s), None
    if args.resize is not None:
        return [resize_command(s, args.resize)], None
    if not args.manager or not args.bucket.startswith("gs://"):
        raise ValueError("creating the fleet needs --manager URL and --bucket gs://BUCKET (with the Dolphin AppImage "
                         "and your ISO in it)")
    return gcloud_commands(s, script_path), render_startup_script(s)


def run(args: argparse.Namespace) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        script_path = str(Path(tmp) / "startup.sh")
        commands, script = plan(args, script_path)
        if args.dry_run:
            if script is not None:
                print(f"# startup script ({script_path})\n{script}")
            for c in commands:
                print(shlex.join(c))
            return 0
        if shutil.which("gcloud") is None:
            raise FileNotFoundError("gcloud is not installed or not on PATH: install the Google Cloud SDK, or use "
                                    "--dry-run to see the commands")
        if script is not None:
            Path(script_path).write_text(script)
        for c in commands:
            print(f"$ {shlex.join(c)}", file=sys.stderr)
            subprocess.run(c, check=True)
    return 0
