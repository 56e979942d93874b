"""The manager's HTTP API (docs/design.md): model download, experience upload, status.

``create_app`` builds a FastAPI app whose lifespan starts the :class:`~melee_agent.manager.trainer.Trainer`
thread and stops it cleanly (final checkpoint, TensorBoard flushed). With a token, every
``/v1`` call needs ``Authorization: Bearer <token>`` (compared in constant time); ``/healthz``
and ``/readyz`` stay open. Uploads are idempotent by ``(worker_id, batch_seq)`` and their size
limit holds while the body streams in.
"""

from __future__ import annotations

import hmac
from contextlib import asynccontextmanager
from pathlib import Path
from typing import AsyncIterator

from fastapi import Depends, FastAPI, HTTPException, Request, Response
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from melee_agent.config import Config
from melee_agent.rl.rows import columns
from melee_agent.envs.state import get_layout
from melee_agent.io.wire import WireError, decode_experience
from melee_agent.manager.home import add_home
from melee_agent.manager.ingest import NotStored, QueueFull
from melee_agent.manager.trainer import Trainer

HEADER_SLACK = 64 * 1024  # safetensors header and metadata beside the rows


async def read_limited(request: Request, max_body: int, max_rows: int) -> bytes:
    """The request body, refused with a 413 as soon as it passes ``max_body`` bytes while it streams
    in (a ``Content-Length`` above the limit is refused before any of it is read)."""
    length = request.headers.get("content-length")
    if length is not None and length.isdigit() and int(length) > max_body:
        raise WireError(413, f"body of {int(length)} bytes is larger than the {max_body}-byte limit ({max_rows} rows)")
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > max_body:
            raise WireError(413, f"body is larger than the {max_body}-byte limit ({max_rows} rows); "
                                 f"stopped reading at {len(body)} bytes")
    return bytes(body)


def create_app(cfg: Config, run_dir: str | Path, device: str = "cpu", token: str | None = None,
               resume: bool = False) -> FastAPI:
    state: dict[str, Trainer] = {}
    max_rows = cfg.manager.max_upload_rows
    layout = get_layout(cfg.env.state_layout)  # the layout it trains on: experience must come in it
    max_body = max_rows * columns(layout.dim).width * 4 + HEADER_SLACK

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        trainer = Trainer(cfg, run_dir, device, resume)
        state["trainer"] = trainer
        app.state.trainer = trainer
        trainer.start()
        try:
            yield
        finally:
            trainer.stop()

    app = FastAPI(title="melee-agent manager", lifespan=lifespan)

    def authorize(request: Request) -> None:
        if token is None:
            return
        given = request.headers.get("authorization", "")
        if not hmac.compare_digest(given.encode(), f"Bearer {token}".encode()):
            raise HTTPException(401, "missing or wrong bearer token", headers={"WWW-Authenticate": "Bearer"})

    def trainer() -> Trainer:
        return state["trainer"]

    def version() -> int | None:
        t = state.get("trainer")
        return None if t is None else t.model.version

    add_home(app, run_dir, version, token)

    @app.get("/healthz")
    def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/readyz")
    def readyz() -> Response:
        t = state.get("trainer")
        if t is None or not t.running:
            return JSONResponse({"ready": False, "error": t.error if t else None}, status_code=503)
        return JSONResponse({"ready": True, "model_version": t.model.version})

    @app.get("/v1/model", dependencies=[Depends(authorize)])
    def model(request: Request) -> Response:
        m = trainer().model
        # The manager's replay decides what workers send, whatever config they were started with.
        headers = {"ETag": m.etag, "X-Model-Version": str(m.version), "X-Model-Sha256": m.sha256,
                   "X-Send-Priorities": "1" if trainer().replay.prioritized else "0"}
        if request.headers.get("if-none-match") == m.etag:
            return Response(status_code=304, headers=headers)
        return Response(m.data, media_type="application/octet-stream", headers=headers)

    @app.get("/v1/model/meta", dependencies=[Depends(authorize)])
    def model_meta() -> dict[str, int | str | bool]:
        m = trainer().model
        return {"version": m.version, "train_step": m.train_step, "sha256": m.sha256,
                "action_set": cfg.env.action_set, "state_layout": layout.name,
                "send_priorities": bool(trainer().replay.prioritized)}

    @app.post("/v1/experience", status_code=202, dependencies=[Depends(authorize)])
    async def experience(request: Request) -> Response:
        t = trainer()
        try:
            body = await read_limited(request, max_body, max_rows)
            exp = await run_in_threadpool(decode_experience, body, action_set=cfg.env.action_set,
                                          num_actions=t.num_actions, max_rows=max_rows, state_layout=layout.name)
            n = t.submit(exp)
        except WireError as e:
            # A 413 may come before the body was read whole: the connection cannot be reused.
            headers = {"Connection": "close"} if e.status == 413 else None
            return JSONResponse({"detail": e.message}, status_code=e.status, headers=headers)
        except QueueFull as e:
            return JSONResponse({"detail": str(e)}, status_code=429, headers={"Retry-After": "1"})
        except NotStored as e:
            return JSONResponse({"detail": str(e)}, status_code=503, headers={"Retry-After": "10"})
        if n is None:
            return JSONResponse({"accepted": 0, "duplicate": True}, status_code=202)  # docs/design.md, exactly
        return JSONResponse({"accepted": n, "model_version": t.model.version}, status_code=202)

    @app.get("/v1/status", dependencies=[Depends(authorize)])
    def status() -> dict[str, int | float | str | bool | None]:
        return trainer().status().to_json()

    return app
