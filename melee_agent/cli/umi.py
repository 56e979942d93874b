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


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("umi", help="play a model as a Computer Melee Championship (UMI) bot, or export its zip",
                       description="Serve a model as a UMI bot (connects to $UMI_SOCKET), or `umi export` its zip.")
    p.add_argument("--policy", default=None, metavar="MODEL",
                   help="a model .safetensors file (as eval's and watch's --policy; its action set and delay are "
                        "the file's own)")
    hidden_alias(p, "--model", "policy")
    p.add_argument("--socket", default=None, help="the arena's socket (default: $UMI_SOCKET)")
    p.set_defaults(func=serve)
    actions = p.add_subparsers(dest="umi_action", metavar="ACTION")
    e = actions.add_parser("export", help="write the zip the championship takes (run.py, requirements.txt, weights)")
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


def _bot(path: str | None):
    from melee_agent.umi.bot import MeleeAgentBot  # noqa: PLC0415 (torch and umi load only when used)

    if not path:
        raise CommandError("--policy MODEL is required: a model .safetensors file")
    if not os.path.isfile(path):
        raise FileNotFoundError(f"model file not found: {path}")
    return MeleeAgentBot.from_file(path)


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
    from melee_agent.umi.export import export_zip  # noqa: PLC0415

    if not args.policy:
        raise CommandError("--policy MODEL is required: the model .safetensors file to export")
    info = export_zip(args.policy, args.out, name=args.name)
    print(f"wrote {info['out']} ({info['bytes']:,} bytes): run.py, requirements.txt, {info['files'][2]} "
          f"({info['action_set']} model, version {info['version']}) and {len(info['files']) - 3} melee_agent modules")
    return 0
