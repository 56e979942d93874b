"""`melee-agent umi --policy FILE`: serve a model as a Computer Melee Championship bot (UMI v1);
`melee-agent umi export --policy FILE --out bot.zip`: the zip the championship takes.

Serving connects to ``UMI_SOCKET`` (or ``--socket``) and plays until the arena shuts the session down, as
``umi.serve`` does (its few lines repeated in :func:`play`, so that a socket that fails is named in one
line); check it with the package's own conformance test::

    umi-conform --cmd "melee-agent umi --policy model.safetensors" --delay 18 --characters FOX --realtime
"""

from __future__ import annotations

import argparse
import os
import socket

from melee_agent.cli.common import CommandError, hidden_alias
from melee_agent.extras import require_extra

# Written out: argparse would show the export ACTION as required, though serving takes none, and --policy as
# optional, though both forms need it (it is optional to argparse only so that the hidden --model alias works).
USAGE = ("%(prog)s [-h] --policy MODEL [--socket SOCKET]\n"
         "       %(prog)s export [-h] --policy MODEL --out ZIP [--name NAME]")
EXPORT_USAGE = "%(prog)s [-h] --policy MODEL --out ZIP [--name NAME]"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("umi", help="play a model as a Computer Melee Championship (UMI) bot, or export its zip",
                       description="Serve a model as a UMI bot (connects to $UMI_SOCKET), or `umi export` its zip.",
                       usage=USAGE)
    p.add_argument("--policy", default=None, metavar="MODEL",
                   help="a model .safetensors file (required; as eval's and watch's --policy; its action set and "
                        "delay are the file's own)")
    hidden_alias(p, "--model", "policy")
    p.add_argument("--socket", default=None, help="the arena's socket (default: $UMI_SOCKET)")
    p.set_defaults(func=serve)
    # prog: the parent's usage above is two lines; the export usage starts from its name alone.
    actions = p.add_subparsers(dest="umi_action", metavar="ACTION", title="actions (none: serve the model)", prog=p.prog)
    e = actions.add_parser("export", help="write the zip the championship takes (run.py, requirements.txt, weights)",
                           usage=EXPORT_USAGE)
    e.add_argument("--policy", default=None, metavar="MODEL", help="a model .safetensors file (required)")
    hidden_alias(e, "--model", "policy")
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


def _model_file(path: str | None, what: str) -> str:
    """``--policy``'s file, there and a file; otherwise the one-line error naming the flag."""
    if not path:
        raise CommandError(f"--policy MODEL is required: {what}")
    if not os.path.isfile(path):
        raise FileNotFoundError(f"--policy {path}: model file not found")
    return path


def _bot(path: str | None):
    require_extra("umi", "umi", "`melee-agent umi`")
    from melee_agent.umi.bot import MeleeAgentBot  # noqa: PLC0415 (torch and umi load only when used)

    return MeleeAgentBot.from_file(_model_file(path, "a model .safetensors file"))


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
    from melee_agent.umi.export import export_zip  # noqa: PLC0415

    info = export_zip(_model_file(args.policy, "the model .safetensors file to export"), args.out, name=args.name)
    print(f"wrote {info['out']} ({info['bytes']:,} bytes): run.py, requirements.txt, {info['files'][2]} "
          f"({info['action_set']} model, version {info['version']}) and {len(info['files']) - 3} melee_agent modules")
    return 0
