"""Serve the manager with uvicorn in this one process (it owns the device replay and trainer)."""

from __future__ import annotations

import ipaddress
import os
from pathlib import Path

from melee_agent.config import Config

TOKEN_ENV = "MELEE_AGENT_TOKEN"


def load_token(token_file: str | None) -> str | None:
    """The bearer token from ``--token-file`` or ``MELEE_AGENT_TOKEN`` (never the command line)."""
    if token_file:
        path = Path(token_file)
        if path.is_dir():
            raise ValueError(f"--token-file {token_file}: a folder, not a file")
        if not path.is_file():
            raise FileNotFoundError(f"--token-file {token_file}: no such file")
        try:
            token = path.read_text(encoding="utf-8").strip()
        except UnicodeDecodeError:
            raise ValueError(f"--token-file {token_file}: not a text file (a token is one line of text)") from None
        if not token:
            raise ValueError(f"--token-file {token_file} is empty")
        return token
    return os.environ.get(TOKEN_ENV) or None


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:  # a host name: it may resolve to anything
        return False


def check_exposure(host: str, token: str | None) -> None:
    """Refuse to serve beyond this machine without a token: anyone could upload rows or read models."""
    if token is None and not is_loopback(host):
        raise ValueError(f"--host {host} is reachable from other machines, and no token is set: set "
                         f"${TOKEN_ENV} or pass --token-file (and put TLS in front, see the README), "
                         "or listen on 127.0.0.1")


def serve(cfg: Config, run_dir: str | Path, host: str, port: int, device: str = "cpu", token: str | None = None,
          resume: bool = False, log_level: str = "info") -> None:
    check_exposure(host, token)
    import uvicorn  # noqa: PLC0415

    from melee_agent.manager.app import create_app  # noqa: PLC0415

    app = create_app(cfg, run_dir, device=device, token=token, resume=resume)
    uvicorn.run(app, host=host, port=port, workers=1, log_level=log_level, access_log=False)
