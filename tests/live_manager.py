"""The live-manager fixture: the real manager app under uvicorn on 127.0.0.1, over real HTTP (the manager's and
the workers' conftest.py make it their ``manager`` fixture)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from fastapi import FastAPI

    from melee_agent.manager.trainer import Trainer

#: The test manager's config: the small one, training after 300 rows, publishing every 20 steps.
MANAGER_SETS = ("manager.burn_in=300", "manager.publish_every=20", "manager.checkpoint_every=40",
                "learner.metrics_every=5")


@dataclass(frozen=True)
class LiveManager:
    url: str
    app: FastAPI  # its lifespan made app.state.trainer

    @property
    def trainer(self) -> Trainer:
        return self.app.state.trainer


@contextmanager
def _serve(run_dir: Path, token: str | None, resume: bool, overrides: dict[str, object]) -> Iterator[LiveManager]:
    from melee_agent.config import load_config  # noqa: PLC0415
    from melee_agent.manager.app import create_app  # noqa: PLC0415

    sets = [*MANAGER_SETS, *(f"{k.replace('__', '.')}={v}" for k, v in overrides.items())]
    app = create_app(load_config("small", sets), run_dir, token=token, resume=resume)
    with serve_app(app) as url:
        yield LiveManager(url, app)


@contextmanager
def serve_app(app: Any) -> Iterator[str]:
    """``app`` under uvicorn on a free 127.0.0.1 port (real HTTP and WebSockets), in a thread; yields its URL."""
    import uvicorn  # noqa: PLC0415

    from melee_agent.manager.spawn import free_port  # noqa: PLC0415

    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=free_port(), log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "the server did not start"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{server.config.port}"
    finally:
        server.should_exit = True
        thread.join(30)


ServeManager = Callable[..., AbstractContextManager[LiveManager]]


@pytest.fixture
def manager() -> ServeManager:
    """The real manager app under uvicorn on a free 127.0.0.1 port, in this process, over real HTTP.

    ``with manager(run_dir, token=None, resume=False, manager__burn_in=1000) as m:`` serves
    ``m.url`` (``m.trainer`` is its Trainer) and stops it (final checkpoint) on leaving;
    ``section__key=value`` overrides :data:`MANAGER_SETS`. Use it again on the same folder with
    ``resume=True`` for a restart. Tests that kill the manager's process use
    :class:`melee_agent.manager.spawn.ManagerProcess` instead.
    """
    def serve(run_dir: Path, token: str | None = None, resume: bool = False,
              **overrides: object) -> AbstractContextManager[LiveManager]:
        return _serve(run_dir, token, resume, overrides)

    return serve
