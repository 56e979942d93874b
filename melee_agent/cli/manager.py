"""`melee-agent manager`: the FastAPI manager (ingest, train, publish) under uvicorn."""

from __future__ import annotations

import argparse
import logging
import socket
from pathlib import Path

from melee_agent.cli.common import CommandError, add_common, config_from_args
from melee_agent.config import default_run_dir
from melee_agent.cli import flags


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("manager", help="serve the manager: experience in, training, models out")
    add_common(p, json=False)
    p.add_argument("--host", default=None, help="address to bind (default: the config's, 127.0.0.1)")
    p.add_argument("--port", type=flags.port, default=None, help="port (default: the config's, 8000)")
    p.add_argument("--resume", action="store_true", help="continue from the newest checkpoint in --run-dir")
    p.add_argument("--token-file", default=None, help="file holding the bearer token (else $MELEE_AGENT_TOKEN)")
    p.add_argument("--workers", type=flags.positive_int, default=1,
                   help=argparse.SUPPRESS)  # uvicorn's habit, refused unless 1: the process owns the device replay
    p.set_defaults(func=run)


def check_listen(host: str, port: int) -> None:
    """A :class:`CommandError` naming ``host``/``port`` where the server could not listen.

    As asyncio's ``create_server`` (uvicorn's) binds: every address the host resolves to ("" is every
    interface), an address family this machine lacks passed over.
    """
    try:
        infos = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as e:
        raise CommandError(f"--host {host}: not a name or address this machine can listen on ({e.strerror})") from None
    for family, kind, proto, _, address in infos:
        try:
            s = socket.socket(family, kind, proto)
        except OSError:
            continue
        with s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as asyncio does
            try:
                s.bind(address)
            except OSError as e:
                raise CommandError(f"--port {port}: cannot listen on {host}:{port} ({e.strerror}); another program "
                                   "may hold it: pick another --port (0: a free one)") from None


def run(args: argparse.Namespace) -> int:
    from melee_agent.manager.server import check_exposure, load_token, serve  # noqa: PLC0415
    from melee_agent.manager.trainer import check_run_dir  # noqa: PLC0415

    if args.workers != 1:
        raise ValueError(f"--workers {args.workers}: the manager must run as one process, because that process "
                         "owns the replay in device memory and the trainer; scale with more game workers instead")
    cfg = config_from_args(args)
    if args.resume and not args.run_dir:
        raise ValueError("--resume needs --run-dir: the run folder whose checkpoints to continue from")
    run_dir = Path(args.run_dir) if args.run_dir else default_run_dir(cfg)
    token = load_token(args.token_file)
    host = args.host or cfg.manager.host
    check_run_dir(run_dir, args.resume)
    port = cfg.manager.port if args.port is None else args.port
    check_listen(host, port)  # before the run folder is made: a busy port must not leave a run behind
    check_exposure(host, token)  # before anything is made or logged: no "serving on" for a server that never serves
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    logging.getLogger("melee_agent.manager").info("run folder %s, serving on http://%s:%d%s", run_dir, host, port,
                                                  " (token required)" if token else "")
    serve(cfg, run_dir, host, port, device=args.device, token=token, resume=args.resume)
    return 0
