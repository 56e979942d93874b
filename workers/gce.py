"""`melee-agent launch gce`: a fleet of Dolphin worker VMs on Google Compute Engine.

Builds a wheel of this checkout and uploads it to the user's bucket (melee-agent is not on
PyPI), renders an instance template whose startup script installs it with the CPU build of torch
(reinstalled at every boot, so a redeployed wheel replaces the old one), fetches the Slippi Dolphin
AppImage and the user's ISO from the bucket (``--dolphin-object``, ``--iso-object``), reads the
manager token from Secret Manager at boot (it never appears in a command, the template or the
script), and runs K workers under systemd (``melee-agent-worker@i``, restarted when they die; each
starts its own Xvfb display, because stock Slippi Dolphin wants one); then a managed instance
group with N named VMs, each given its fleet index and the fleet's size as stateful metadata
(``vm-index``, ``fleet-size``), so worker indices never collide and a VM added by ``--resize``
knows the size it joined (the template holds neither). ``--dry-run`` prints the commands and the
script; otherwise they run.

The VMs' service account needs read access to the bucket (``roles/storage.objectViewer``) and
``roles/secretmanager.secretAccessor`` on the token's secret; the README shows the two grants.

Example::

    >>> cmds = gcloud_commands(GceSettings(count=2, project="p", zone="us-central1-a", manager="http://10.0.0.2:8000",
    ...                                    bucket="gs://b"), "/tmp/startup.sh")
    >>> [c[0] if c[0] == "gsutil" else c[4] + " " + c[5] for c in cmds][1:]
    ['instance-templates create', 'instance-groups managed', 'instance-groups managed', 'instance-groups managed']
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

from melee_agent.cli.flags import manager_url, nonneg_int, positive_int


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
    dolphin_object: str = "Slippi_Online-x86_64.AppImage"
    iso_object: str = "melee.iso"
    cpu_level: int = 9
    image_family: str = "debian-12"
    image_project: str = "debian-cloud"
    boot_disk_gb: int = 30  # Debian + torch (CPU) + Slippi AppImage + a 1.4 GB ISO, with room for logs
    service_account: str = ""  # the VMs' service account (empty: the project's default compute one)
    config_toml: str = ""  # the run's resolved config, written on the VM for its workers (empty: shipped `dolphin`)
    config_name: str = "dolphin"  # what the config was called (--config), for the script's comments

    @property
    def template(self) -> str:
        return f"{self.name}-template"


def wheel_name() -> str:
    """The wheel ``launch gce`` builds from this checkout and uploads (pure Python: one for every VM)."""
    from importlib.metadata import version  # noqa: PLC0415

    return f"melee_agent-{version('melee-agent')}-py3-none-any.whl"


def render_startup_script(s: GceSettings) -> str:
    """The VM's boot script: bash, idempotent, no secret inside (the token is fetched at boot).

    Every path is under ``$MELEE_AGENT_ROOT`` (empty on a VM), so tests run it in a temporary root
    with stand-ins for the metadata server, gcloud, gsutil, apt-get and systemctl.
    """
    config_block, config_arg = _script_config(s)
    return (_script_fleet_index(s) + _script_install(s) + _script_assets(s) + config_block
            + _script_units(s, config_arg))


def _fetch(s: GceSettings, obj: str, dest: str, fix: str) -> str:
    """gsutil cp from the bucket that, under set -e, stops with one line naming the object instead of gsutil's."""
    bucket = s.bucket.rstrip("/")
    src = shlex.quote(f"{bucket}/{obj}")
    return (f'gsutil -q cp {src} "{dest}" || {{ echo "melee-agent: cannot copy {bucket}/{obj}: {fix}, or grant '
            'this VM\'s service account roles/storage.objectViewer on the bucket" >&2; exit 1; }')


def _script_config(s: GceSettings) -> tuple[str, str]:
    """The script's lines writing the run's config on the VM, and the ``--config`` its workers are given."""
    if not s.config_toml:
        return "", "dolphin"
    if "MELEE_AGENT_CONFIG" in s.config_toml:
        raise ValueError("the config holds the text MELEE_AGENT_CONFIG, which ends the startup script's here-document")
    # The run's config, resolved (--config and --set) where `launch gce` runs: the VMs' workers play what the
    # manager trains, fights included, whatever file the user named on their own machine.
    config_block = (f"# The run's config (--config {s.config_name}, resolved): the workers play what the manager "
                    f"trains.\ncat > \"$R/opt/melee-agent/config.toml\" <<'MELEE_AGENT_CONFIG'\n{s.config_toml}"
                    "MELEE_AGENT_CONFIG\n")
    return config_block, "/opt/melee-agent/config.toml"


def _script_fleet_index(s: GceSettings) -> str:
    """The script's start: strict bash, then this VM's index and the fleet's size from its metadata."""
    return f"""#!/usr/bin/env bash
# melee-agent worker VM: install, fetch Dolphin and the ISO, read the token, start {s.workers_per_vm} workers.
set -euo pipefail
R="${{MELEE_AGENT_ROOT:-}}"
export DEBIAN_FRONTEND=noninteractive
METADATA=${{MELEE_AGENT_METADATA_URL:-http://metadata.google.internal/computeMetadata/v1}}
meta() {{ curl -sf -H 'Metadata-Flavor: Google' "$METADATA/instance/attributes/$1"; }}
# This VM's index in the fleet, set per instance by `launch gce`; -f: a 404 is an error.
if ! VM_INDEX=$(meta vm-index); then
  echo "melee-agent: this VM has no vm-index metadata; create it with melee-agent launch gce" >&2
  exit 1
fi
case "$VM_INDEX" in ''|*[!0-9]*) echo "melee-agent: vm-index metadata '$VM_INDEX' is not a number" >&2; exit 1;; esac
# The fleet's size when this VM joined it (per instance, so `--resize` needs no new template).
FLEET=$(meta fleet-size) || FLEET={s.count}
case "$FLEET" in ''|*[!0-9]*) echo "melee-agent: fleet-size metadata '$FLEET' is not a number" >&2; exit 1;; esac
if [ "$VM_INDEX" -ge "$FLEET" ]; then FLEET=$(( VM_INDEX + 1 )); fi
TOTAL=$(( FLEET * {s.workers_per_vm} ))
"""


def _script_install(s: GceSettings) -> str:
    """The script's packages, and the wheel fetched and installed (reinstalled at every boot) in a venv."""
    wheel = f"$R/opt/melee-agent/{wheel_name()}"
    return f"""apt-get update -q
# fuse/libfuse2 run the AppImage; libasound2, GL and GTK are what Slippi Dolphin links against;
# each worker starts its own Xvfb display for it.
apt-get install -y -q python3-venv xvfb fuse libfuse2 libasound2 libgl1 libegl1 libusb-1.0-0 libgtk-3-0 curl
install -d -m 0755 "$R/opt/melee-agent"
{_fetch(s, 'melee-agent/' + wheel_name(), '$R/opt/melee-agent/', 'run melee-agent launch gce --redeploy')}
# No worker runs the installed wheel while it is replaced (the units wait for this script at boot; a worker
# started by hand or left from before is stopped here).
systemctl stop 'melee-agent-worker@*.service' || true
if [ ! -x "$R/opt/melee-agent/venv/bin/melee-agent" ]; then
  python3 -m venv "$R/opt/melee-agent/venv"
  "$R/opt/melee-agent/venv/bin/pip" install -q --upgrade pip
  # The CPU build of torch: a worker acts with a small model; the CUDA wheels need GBs of disk.
  "$R/opt/melee-agent/venv/bin/pip" install -q torch --index-url https://download.pytorch.org/whl/cpu
  "$R/opt/melee-agent/venv/bin/pip" install -q "{wheel}"
fi
# The wheel keeps its version's name across redeploys: reinstall it at every boot, so a redeployed
# checkout replaces the one installed before; then its dependencies,
# so a changed requirement is installed too (those already satisfied are left as they are).
"$R/opt/melee-agent/venv/bin/pip" install -q --force-reinstall --no-deps "{wheel}"
"$R/opt/melee-agent/venv/bin/pip" install -q "{wheel}"
"""


def _script_assets(s: GceSettings) -> str:
    """The script's Dolphin and ISO fetched from the bucket, and the token read into root-only files."""
    q = shlex.quote
    return f"""{_fetch(s, s.dolphin_object, '$R/opt/melee-agent/dolphin.AppImage', 'upload Slippi Dolphin there or pass --dolphin-object')}
chmod 0755 "$R/opt/melee-agent/dolphin.AppImage"
{_fetch(s, s.iso_object, '$R/opt/melee-agent/melee.iso', 'upload your NTSC 1.02 ISO there or pass --iso-object')}
# The manager token comes from Secret Manager into root-only files; it is never in this script or printed.
umask 077
gcloud secrets versions access latest --secret={q(s.token_secret)} --project={q(s.project)} > "$R/opt/melee-agent/token" \\
  || {{ echo "melee-agent: cannot read secret {s.token_secret}: create it, or grant this VM's service account roles/secretmanager.secretAccessor on it" >&2; exit 1; }}
{{ printf 'MELEE_AGENT_TOKEN='; cat "$R/opt/melee-agent/token"; echo; }} > "$R/opt/melee-agent/worker.env"
umask 022
"""


def _script_units(s: GceSettings, config_arg: str) -> str:
    """The script's systemd unit for a worker, and this VM's ``workers_per_vm`` workers enabled and (re)started."""
    q = shlex.quote
    return f"""install -d -m 0755 "$R/etc/systemd/system"
# SIGTERM goes to the worker alone (KillMode=mixed): it ends its segment within a few frames,
# spools and tries to send the rows, and stops its Dolphin and Xvfb itself; what is left is killed
# after TimeoutStopSec. PrivateTmp gives each worker a /tmp (libmelee's user folders) that systemd
# empties when it stops, whatever killed it.
cat > "$R/etc/systemd/system/melee-agent-worker@.service" <<UNIT
[Unit]
Description=melee-agent Dolphin worker %i
# After the startup script, which installs the wheel: at boot a worker starts on the newly installed one.
After=network-online.target google-startup-scripts.service
Wants=network-online.target
# A worker that keeps dying (a config the manager refuses, a bad flag) is not restarted for ever: 5 starts
# in 10 minutes, then the unit fails and says so (systemctl status, the journal).
StartLimitIntervalSec=600
StartLimitBurst=5
[Service]
EnvironmentFile=/opt/melee-agent/worker.env
ExecStart=/opt/melee-agent/venv/bin/melee-agent worker --manager {q(s.manager)} --env dolphin --config {config_arg} \\
  --set dolphin.dolphin_path=/opt/melee-agent/dolphin.AppImage --set dolphin.iso_path=/opt/melee-agent/melee.iso \\
  --set env.cpu_level={s.cpu_level} --worker-index %i --num-workers ${{TOTAL}} --spool-dir /var/lib/melee-agent/spool/%i
Restart=always
RestartSec=5
# Exit status 2 is a refusal that restarting cannot fix (a one-line error: the manager refused this worker's
# config or token, a bad flag or path, too many Dolphin restarts): the unit stops there.
RestartPreventExitStatus=2
KillMode=mixed
TimeoutStopSec=60
PrivateTmp=true
[Install]
WantedBy=multi-user.target
UNIT
systemctl daemon-reload
for k in $(seq 0 $(( {s.workers_per_vm} - 1 ))); do
  i=$(( VM_INDEX * {s.workers_per_vm} + k ))
  systemctl enable "melee-agent-worker@${{i}}.service"
  # restart, not start: a running worker (the previous wheel's) is replaced; --no-block, because the unit is
  # ordered after this script's own service, and waiting here for it would wait for ever.
  systemctl restart --no-block "melee-agent-worker@${{i}}.service"
done
"""


def instance_command(s: GceSettings, index: int, fleet_size: int | None = None) -> list[str]:
    """One named VM of the group, with its fleet index and the fleet's size as stateful metadata.

    The size is the VM's own (the fleet it joined), so VMs added by a resize work from the same
    template; VMs already running keep the epsilons of the size they joined.
    """
    size = s.count if fleet_size is None else fleet_size
    return ["gcloud", "compute", "--project", s.project, "instance-groups", "managed", "create-instance", s.name,
            f"--zone={s.zone}", f"--instance={s.name}-{index}",
            f"--stateful-metadata=vm-index={index},fleet-size={size}"]


def gcloud_commands(s: GceSettings, script_path: str, wheel_path: str = "WHEEL") -> list[list[str]]:
    upload = ["gsutil", "cp", wheel_path, f"{s.bucket.rstrip('/')}/melee-agent/{wheel_name()}"]
    template = ["gcloud", "compute", "--project", s.project, "instance-templates", "create", s.template,
                f"--machine-type={s.machine_type}", f"--image-family={s.image_family}",
                f"--image-project={s.image_project}", "--scopes=cloud-platform",
                f"--boot-disk-size={s.boot_disk_gb}GB", f"--metadata-from-file=startup-script={script_path}"]
    if s.service_account:
        template.append(f"--service-account={s.service_account}")
    if s.spot:
        template += ["--provisioning-model=SPOT", "--instance-termination-action=STOP"]
    group = ["gcloud", "compute", "--project", s.project, "instance-groups", "managed", "create", s.name,
             f"--zone={s.zone}", f"--template={s.template}", "--size=0"]
    return [upload, template, group] + [instance_command(s, i) for i in range(s.count)]


def resize_commands(s: GceSettings, size: int) -> list[list[str]]:
    """From ``--count`` VMs to ``size``: new VMs get the next indices; the highest indices go first."""
    if size > s.count:
        return [instance_command(s, i, size) for i in range(s.count, size)]
    gone = ",".join(f"{s.name}-{i}" for i in range(size, s.count))
    return [["gcloud", "compute", "--project", s.project, "instance-groups", "managed", "delete-instances", s.name,
             f"--zone={s.zone}", f"--instances={gone}"]] if gone else []


def redeploy_commands(s: GceSettings, wheel_path: str = "WHEEL") -> list[list[str]]:
    """Upload this checkout's wheel and restart every VM: each boot reinstalls the wheel it finds."""
    upload = ["gsutil", "cp", wheel_path, f"{s.bucket.rstrip('/')}/melee-agent/{wheel_name()}"]
    restart = ["gcloud", "compute", "--project", s.project, "instance-groups", "managed", "rolling-action",
               "restart", s.name, f"--zone={s.zone}"]
    return [upload, restart]


def delete_commands(s: GceSettings) -> list[list[str]]:
    return [["gcloud", "compute", "--project", s.project, "instance-groups", "managed", "delete", s.name,
             f"--zone={s.zone}", "--quiet"],
            ["gcloud", "compute", "--project", s.project, "instance-templates", "delete", s.template, "--quiet"]]


def build_wheel(out_dir: str) -> str:
    """This checkout as a wheel (what the VMs install: melee-agent is not on PyPI)."""
    root = Path(__file__).resolve().parents[1]
    if not (root / "pyproject.toml").is_file():
        raise FileNotFoundError(f"no melee-agent checkout at {root} to build the VMs' wheel from: run launch gce "
                                "from a git checkout")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", out_dir, str(root)], check=True)
    path = Path(out_dir) / wheel_name()
    if not path.is_file():
        raise FileNotFoundError(f"pip built no {path.name} in {out_dir}")
    return str(path)


def cpu_level(text: str) -> int:
    """``--cpu-level``: Melee's CPU levels are 1-9."""
    try:
        level = int(text)
    except ValueError:
        level = 0
    if not 1 <= level <= 9:
        raise argparse.ArgumentTypeError(f"must be a CPU level 1-9, got {text!r}")
    return level


def add_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--count", type=positive_int, required=True, help="number of VMs in the managed instance group")
    p.add_argument("--project", required=True, help="GCP project")
    p.add_argument("--zone", required=True, help="GCE zone, e.g. us-central1-a")
    p.add_argument("--manager", default=None, type=manager_url, metavar="URL",
                   help="the manager's URL as the VMs reach it, e.g. http://10.128.0.2:8000")
    p.add_argument("--bucket", default="", help="gs:// bucket holding the Dolphin AppImage and your ISO")
    p.add_argument("--config", default="dolphin",
                   help="the run's config, as the manager was started with (a shipped name or a TOML file; written "
                        "onto the VMs resolved, so dolphin-fight or fight trains fights) (default: %(default)s)")
    p.add_argument("--set", action="append", default=[], metavar="SECTION.KEY=VALUE",
                   help="override one config value (repeatable), as given to the manager")
    p.add_argument("--workers-per-vm", type=positive_int, default=2, help="Dolphin workers per VM (default: %(default)s)")
    p.add_argument("--machine-type", default="e2-standard-4", help="(default: %(default)s)")
    p.add_argument("--token-secret", default="melee-agent-token", help="Secret Manager secret with the token")
    p.add_argument("--dolphin-object", default="Slippi_Online-x86_64.AppImage",
                   help="the Slippi Dolphin AppImage's object name in --bucket (default: %(default)s)")
    p.add_argument("--iso-object", default="melee.iso",
                   help="your NTSC 1.02 Melee ISO's object name in --bucket (default: %(default)s)")
    p.add_argument("--service-account", default="",
                   help="the VMs' service account e-mail (default: the project's compute default); it needs "
                        "roles/storage.objectViewer on the bucket and roles/secretmanager.secretAccessor on the secret")
    p.add_argument("--name", default="melee-agent-workers", help="group name (default: %(default)s)")
    p.add_argument("--cpu-level", type=cpu_level, default=9, help="the built-in CPU's level (default: %(default)s)")
    p.add_argument("--boot-disk-gb", type=int, default=30,
                   help="boot disk per VM in GB: torch, Dolphin and the ISO (default: %(default)s)")
    p.add_argument("--spot", action="store_true", help="spot VMs (cheaper, may be preempted)")
    p.add_argument("--dry-run", action="store_true", help="print the gcloud commands and the script; run nothing")
    p.add_argument("--resize", type=nonneg_int, default=None, metavar="N",
                   help="resize the existing group from --count VMs to N (new VMs get the next indices)")
    p.add_argument("--redeploy", action="store_true",
                   help="upload this checkout's wheel again and restart the VMs, which reinstall it")
    p.add_argument("--delete", action="store_true", help="delete the group and its template")


def settings_from_args(args: argparse.Namespace) -> GceSettings:
    if args.count < 1 or args.workers_per_vm < 1:
        raise ValueError("--count and --workers-per-vm must be at least 1")
    if args.boot_disk_gb < 20:
        raise ValueError(f"--boot-disk-gb {args.boot_disk_gb} is too small for torch, Dolphin and an ISO (20 at least)")
    from melee_agent.config import config_to_toml, load_config  # noqa: PLC0415

    cfg = load_config(args.config, [*args.set, "env.env=dolphin"])  # the VMs play Dolphin, whatever the config's env
    return GceSettings(count=args.count, project=args.project, zone=args.zone, manager=args.manager or "",
                       config_toml=config_to_toml(cfg), config_name=str(args.config),
                       bucket=args.bucket, name=args.name, machine_type=args.machine_type,
                       workers_per_vm=args.workers_per_vm, spot=args.spot, token_secret=args.token_secret,
                       cpu_level=args.cpu_level, boot_disk_gb=args.boot_disk_gb, dolphin_object=args.dolphin_object,
                       iso_object=args.iso_object, service_account=args.service_account)


def check_bucket(bucket: str) -> None:
    """``--bucket`` is a Cloud Storage URL, ``gs://NAME``; a bare name is named with the fix."""
    if not bucket:
        raise ValueError("--bucket is missing: the gs://BUCKET holding the Dolphin AppImage and your ISO")
    if not bucket.startswith("gs://") or not bucket[5:].strip("/"):
        fix = f"gs://{bucket}" if "://" not in bucket and bucket else "gs://BUCKET"
        raise ValueError(f"--bucket {bucket}: must be a Cloud Storage URL starting gs://, e.g. {fix}")


def plan(args: argparse.Namespace, script_path: str, wheel_path: str = "WHEEL") -> tuple[list[list[str]], str | None]:
    """The commands (and the startup script, when creating) this invocation means."""
    s = settings_from_args(args)
    if args.delete:
        return delete_commands(s), None
    for flag, obj in (("--dolphin-object", s.dolphin_object), ("--iso-object", s.iso_object)):
        if not obj or obj.startswith(("/", "gs://")) or any(c.isspace() for c in obj):
            raise ValueError(f"{flag} {obj!r} must be an object name inside --bucket, like 'melee.iso'")
    if args.resize is not None:
        return resize_commands(s, args.resize), None
    if args.redeploy:
        if not args.bucket:
            raise ValueError("--redeploy needs --bucket gs://BUCKET (where the VMs fetch the wheel)")
        check_bucket(args.bucket)
        return redeploy_commands(s, wheel_path), None
    if not args.manager and not args.bucket:
        raise ValueError("creating the fleet needs --manager URL and --bucket gs://BUCKET (with the Dolphin AppImage "
                         "and your ISO in it)")
    if not args.manager:
        raise ValueError("creating the fleet needs --manager URL: the manager's address as the VMs reach it")
    check_bucket(args.bucket)
    return gcloud_commands(s, script_path, wheel_path), render_startup_script(s)


def run(args: argparse.Namespace) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        script_path = str(Path(tmp) / "startup.sh")
        creating = not (args.delete or args.resize is not None) or args.redeploy
        wheel = str(Path(tmp) / wheel_name())
        commands, script = plan(args, script_path, wheel)
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
        if creating:
            build_wheel(tmp)
        for c in commands:
            print(f"$ {shlex.join(c)}", file=sys.stderr)
            subprocess.run(c, check=True)
    return 0
