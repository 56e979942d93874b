"""Serve the manager with uvicorn in this one process (it owns the device replay and trainer)."""

from __future__ import annotations

import os
from pathlib import Path

from melee_agent.config import Config

TOKEN_ENV = "MELEE_AGENT_TOKEN"


def load_token(token_file: str | None) -> str | None:
    """The bearer token from ``--token-file`` or ``MELEE_AGENT_TOKEN`` (never the command line)."""
    if token_file:
        path = Path(token_file)
        if not path.is_file():
            raise FileNotFoundError(f"--token-file {token_file}: no such file")
        token = path.read_text().strip()
        if not token:
            raise ValueError(f"--token-file {token_file} is empty")
        return token
    return os.environ.get(TOKEN_ENV) or None


def serve(cfg: Config, run_dir: str | Path, host: str, port: int, device: str = "cpu", token: str | None = None,
          resume: bool = False, log_level: str = "info") -> None:
    import uvicorn  # noqa: PLC0415

    from melee_agent.manager.app import create_app  # noqa: PLC0415

    app = create_app(cfg, run_dir, device=device, token=token, resume=resume)
    uvicorn.run(app, host=host, port=port, workers=1, log_level=log_level, access_log=False)
