"""`melee-agent umi --policy FILE`: serve a model as a Computer Melee Championship bot (UMI v1);
`melee-agent umi export --policy FILE --out bot.zip`: the zip the championship takes.

Serving connects to ``UMI_SOCKET`` (or ``--socket``) and plays until the arena shuts the session down, as
``umi.serve`` does (its few lines repeated in :func:`play`, so that a socket that fails is named in one
line); check it with the package's own conformance test::

    umi-conform --cmd "melee-agent umi --policy model.safetensors" --delay 18 --characters FOX --realtime

A model per stage: ``--policy STAGE=MODEL`` (repeatable) plays MODEL in games on STAGE; a plain ``--policy MODEL``
beside them plays every other stage (without one, the first STAGE=MODEL's model does).
"""

from __future__ import annotations

import argparse
import os
import socket
import sys

from melee_agent.cli.common import CommandError, hidden_alias
from melee_agent.extras import require_extra

# Written out: argparse would show the export ACTION as required, though serving takes none, and --policy as
# optional, though both forms need it (it is optional to argparse only so that the hidden --model alias works).
USAGE = ("%(prog)s [-h] --policy [STAGE=]MODEL [--policy STAGE=MODEL ...] [--socket SOCKET]\n"
         "       %(prog)s export [-h] --policy [STAGE=]MODEL [--policy STAGE=MODEL ...] --out ZIP [--name NAME]")
EXPORT_USAGE = "%(prog)s [-h] --policy [STAGE=]MODEL [--policy STAGE=MODEL ...] --out ZIP [--name NAME]"
POLICY_HELP = ("a model .safetensors file (required; its action set and delay are the file's own), or STAGE=MODEL: "
               "repeat it for a model per stage (STAGE: final_destination, battlefield, yoshis_story, dreamland, "
               "fountain_of_dreams, pokemon_stadium); each game is played by its stage's model, and the plain "
               "MODEL (else the first one given) plays every stage not named")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("umi", help="play a model as a Computer Melee Championship (UMI) bot, or export its zip",
                       description="Serve a model as a UMI bot (connects to $UMI_SOCKET), or `umi export` its zip.",
                       usage=USAGE)
    p.add_argument("--policy", action="append", default=None, metavar="[STAGE=]MODEL", help=POLICY_HELP)
    hidden_alias(p, "--model", "policy", action="append")
    p.add_argument("--socket", default=None, help="the arena's socket (default: $UMI_SOCKET)")
    p.set_defaults(func=serve)
    # prog: the parent's usage above is two lines; the export usage starts from its name alone.
    actions = p.add_subparsers(dest="umi_action", metavar="ACTION", title="actions (none: serve the model)", prog=p.prog)
    e = actions.add_parser("export", help="write the zip the championship takes (run.py, requirements.txt, weights)",
                           usage=EXPORT_USAGE)
    e.add_argument("--policy", action="append", default=None, metavar="[STAGE=]MODEL", help=POLICY_HELP)
    hidden_alias(e, "--model", "policy", action="append")
    e.add_argument("--out", required=True, metavar="ZIP", type=zip_name,
                   help="where to write the zip, NAME.zip (atomically)")
    e.add_argument("--name", default="melee-agent", help="the bot's name in the zip's run.py (default: %(default)s)")
    e.set_defaults(func=export)


def zip_name(text: str) -> str:
    """``--out``: the championship takes a zip, and the file is one whatever its name; a name that says otherwise
    is refused."""
    if not text.lower().endswith(".zip"):
        raise argparse.ArgumentTypeError(f"the bot is written as a zip archive; name it .zip, got {text!r}")
    return text


def _model_file(path: str | None, what: str, flag: str = "--policy") -> str:
    """``--policy``'s file, there and a file; otherwise the one-line error naming the flag."""
    if not path:
        raise CommandError(f"--policy MODEL is required: {what}")
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{flag} {path}: model file not found")
    return path


def stage_policies(values: list[str] | None, what: str) -> tuple[str, dict[str, str]]:
    """``--policy`` values as (the model of every stage not named, {stage: model}); one-line errors naming the flag.

    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp()); _ = (d / "a").write_bytes(b""), (d / "b").write_bytes(b"")
    >>> default, named = stage_policies([f"battlefield={d / 'b'}", str(d / "a")], "")
    >>> default == str(d / "a"), named == {"battlefield": str(d / "b")}
    (True, True)
    """
    from umi.frame import STAGES  # noqa: PLC0415

    known = sorted(k.lower() for k in STAGES)
    plain: list[str] = []
    named: dict[str, str] = {}
    for text in values or []:
        stage, sep, path = text.partition("=")
        if not sep or os.path.isfile(text):
            plain.append(_model_file(text, what))
            continue
        key = stage.strip().lower()
        if key not in known:
            raise CommandError(f"--policy {text}: {stage!r} is not a stage; use STAGE=MODEL with one of "
                               f"{', '.join(known)}, or a plain MODEL")
        if key in named:
            raise CommandError(f"--policy {text}: {key} already plays {named[key]}; name each stage once")
        named[key] = _model_file(path, what, f"--policy {key}=")
    if len(plain) > 1:
        raise CommandError(f"--policy: {len(plain)} plain models ({', '.join(plain)}); give one for the stages not "
                           "named and STAGE=MODEL for each other")
    if not plain and not named:
        _model_file(None, what)
    default = plain[0] if plain else next(iter(named.values()))
    return default, named


def _bot(values: list[str] | None):
    require_extra("umi", "umi", "`melee-agent umi`")
    from melee_agent.umi.bot import MeleeAgentBot, ModelPlayer  # noqa: PLC0415 (torch and umi load only when used)

    default, named = stage_policies(values, "a model .safetensors file")
    if not named:
        return MeleeAgentBot.from_file(default)
    players: dict[str, ModelPlayer] = {}  # one player per file, however many stages it plays
    for path in (default, *named.values()):
        if path not in players:
            with open(path, "rb") as f:
                players[path] = ModelPlayer.from_bytes(f.read(), origin=path)
    return MeleeAgentBot.for_stages(players[default], {k: players[v] for k, v in named.items()})


def serve(args: argparse.Namespace) -> int:
    bot = _bot(args.policy)  # a bad model file fails here, in one line, before any connection
    socket_path = args.socket or os.environ.get("UMI_SOCKET")
    if not socket_path:
        raise CommandError("no arena socket: set UMI_SOCKET or pass --socket (umi-conform sets it)")
    play(bot, socket_path)
    return 0


def play(bot, socket_path: str) -> None:
    """``umi.serve``'s connect-and-play (send the arena an ``error`` when the bot fails, then raise), with the
    connection's own failures said in one line naming the socket; the bot's other errors keep their traceback."""
    import umi  # noqa: PLC0415

    bot.check()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        try:
            sock.connect(socket_path)
        except OSError as e:  # no such socket, not a socket, nothing listening
            raise CommandError(f"--socket {socket_path}: cannot connect to the arena ({e.strerror or e})") from None
        try:
            bot.run(sock)
        except Exception as e:
            try:
                umi.protocol.send(sock, {"t": "error", "code": type(e).__name__, "msg": str(e)[:2000]})
            except OSError:
                pass  # the arena is gone: it cannot be told
            if isinstance(e, (BrokenPipeError, ConnectionResetError)):
                raise CommandError(f"--socket {socket_path}: the arena closed the connection") from None
            if isinstance(e, umi.protocol.ProtocolError):
                raise CommandError(f"--socket {socket_path}: the arena broke the UMI protocol ({e})") from None
            raise
    finally:
        sock.close()


def export(args: argparse.Namespace) -> int:
    require_extra("umi", "umi", "`melee-agent umi export`")
    from melee_agent.umi.export import BUNDLED, export_zip  # noqa: PLC0415

    default, named = stage_policies(args.policy, "the model .safetensors file to export")
    info = export_zip(default, args.out, name=args.name, stages=named)
    models = len(info["files"]) - 2 - len(BUNDLED)
    print(f"wrote {info['out']} ({info['bytes']:,} bytes): run.py, requirements.txt, {info['files'][2]} "
          f"({info['action_set']} model, version {info['version']})"
          + (f", {models - 1} stage model(s)" if models > 1 else "") + f" and {len(BUNDLED)} melee_agent modules")
    for stage, model in info["stage_models"].items():
        print(f"  {stage}: {model}")
    for line in info["mismatches"]:
        print(f"melee-agent umi export: note: {line}", file=sys.stderr)
    return 0
