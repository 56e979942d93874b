"""The web app: the play page or the spectate page, a WebSocket to each page, and small JSON endpoints.

| method, path | what |
|---|---|
| GET / | the page (plain HTML and JS from this package: nothing fetched from elsewhere) |
| GET /static/NAME | the page's scripts |
| WS /ws | frames to the page (JSON, one message a frame); the play page sends its controller frames back |
| GET /v1/state | JSON: frames played, frames per second, the game's result, both fighters' fields, the stage |
| POST /v1/rematch | a new game (play) |
| POST /v1/save | the game so far saved as a replay of its frames (play, with ``--save``) |

The clock starts with the first page that connects; the game waits while no page is open.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import time
from pathlib import Path
from typing import Any, Callable

from fastapi import FastAPI, HTTPException, WebSocket, WebSocketDisconnect
from fastapi.responses import FileResponse, HTMLResponse

from melee_agent.play.clock import FrameClock
from melee_agent.play.hub import Hub
from melee_agent.play.human import parse

STATIC = Path(__file__).resolve().parent / "static"
SCRIPTS = ("draw.js", "play.js", "spectate.js")


def stage_geometry(name: str) -> dict[str, Any]:
    """One stage as the page draws it (:mod:`melee_agent.arena.stages`, as ``watch`` draws it): the main floor's
    edge, the platforms ``[left, right, height]`` and the blast zones ``[left, right, bottom, top]``."""
    from melee_agent.arena.stages import stage_named  # noqa: PLC0415
    from melee_agent.report.watch import stage_title  # noqa: PLC0415

    s = stage_named(name)
    left, right, top, bottom = s.blast
    return {"name": s.name, "title": stage_title(s.name), "edge": s.edge_x, "blast": [left, right, bottom, top],
            "platforms": [[p.left, p.right, p.height] for p in s.platforms]}


def geometry(stage: str = "final_destination") -> dict[str, Any]:
    """What the page draws with, from the same constants as ``watch`` (:mod:`melee_agent.report.watch`): the main
    view, the shield's size, the colours, and every stage (``stages``; ``stage`` names the one played, whose edge and
    blast zones are also ``edge`` and ``blast``)."""
    from melee_agent.arena import libmelee_data as d  # noqa: PLC0415
    from melee_agent.arena.stages import STAGES  # noqa: PLC0415
    from melee_agent.report.watch import MAP_SCALE, VIEW, C  # noqa: PLC0415

    stages = {name: stage_geometry(name) for name in STAGES}
    played = stages[stage_geometry(stage)["name"]]
    return {"view": list(VIEW), "map_scale": MAP_SCALE, "edge": played["edge"], "shield_max": d.SHIELD_MAX,
            "blast": played["blast"], "stage": played["name"], "stages": stages,
            "colors": {k: "rgb(%d,%d,%d)" % v for k, v in C._asdict().items()}}


def _page(name: str, settings: dict[str, Any], stage: str = "final_destination") -> HTMLResponse:
    html = (STATIC / name).read_text()
    return HTMLResponse(html.replace("/*SETTINGS*/null", json.dumps({**settings, "geometry": geometry(stage)})),
                        headers={"Cache-Control": "no-store"})


def _base_app(title: str, page: str, settings: Callable[[], dict[str, Any]], tick: Callable[[], Any],
              state: Callable[[], dict[str, Any]], on_message: Callable[[Any], None] | None,
              stage: Callable[[], str] = lambda: "final_destination") -> FastAPI:
    hub = Hub()
    # The game waits while no page is open (a closed tab does not play on, nor cost the machine anything).
    clock = FrameClock(lambda: tick() if hub.connected else None, hub.emit)

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI):  # noqa: ANN202
        yield
        clock.stop()

    app = FastAPI(title=title, lifespan=lifespan)
    app.state.clock, app.state.hub = clock, hub

    @app.get("/")
    def index() -> HTMLResponse:
        return _page(page, settings(), stage())

    @app.get("/static/{name}")
    def static(name: str) -> FileResponse:
        if name not in SCRIPTS:
            raise HTTPException(404, f"no script {name!r}")
        return FileResponse(STATIC / name, media_type="text/javascript", headers={"Cache-Control": "no-store"})

    @app.get("/v1/state")
    def get_state() -> dict[str, Any]:
        fps, cost = clock.fps, clock.frame_cost
        return {**state(), "fps": None if fps is None else round(fps, 2), "played": clock.played,
                "frame_ms": None if cost is None else round(cost * 1e3, 2),
                "pages": hub.connected, "time": time.time()}

    @app.websocket("/ws")
    async def ws(socket: WebSocket) -> None:
        await socket.accept()
        q = hub.join()
        clock.start()

        async def send() -> None:
            while True:
                await socket.send_text(await q.get())

        sender = asyncio.create_task(send())
        try:
            while True:
                text = await socket.receive_text()
                if on_message is None:
                    continue
                try:
                    on_message(json.loads(text))
                except ValueError as e:  # a bad frame is answered, not played
                    await socket.send_text(json.dumps({"type": "error", "error": str(e)}))
        except WebSocketDisconnect:
            pass
        finally:
            sender.cancel()
            hub.leave(q)

    return app


def create_play_app(session: Any, save_dir: Path | None = None, record_dir: Path | None = None,
                    gamma: float = 0.99) -> FastAPI:
    """The play page for ``session`` (a :class:`~melee_agent.play.session.PlaySession`); finished games are saved
    to ``save_dir`` (replays) and ``record_dir`` (experience rows) where given."""
    from melee_agent.play import keep  # noqa: PLC0415

    saved: list[str] = []

    def tick() -> Any:
        frame = session.step()
        if frame is not None and frame["over"] and (save_dir or record_dir):
            # Written beside the clock (a whole game's rows take seconds to label): the page asks /v1/state.
            kept = keep.snapshot(session)
            threading.Thread(target=lambda: saved.extend(keep.finished_game(kept, save_dir, record_dir, gamma)),
                             name="play-keep", daemon=True).start()
        return frame if frame is None else {"type": "frame", **frame}

    def on_message(msg: Any) -> None:
        session.set_input(parse(msg))

    def settings() -> dict[str, Any]:
        o = session.o
        return {"human": o.human, "opponent": o.opponent, "delay_frames": o.delay_frames, "seconds": o.seconds,
                "stage": o.stage}

    app = _base_app("melee-agent play", "play.html", settings, tick,
                    lambda: {**session.info(), "saved": list(saved)}, on_message, lambda: session.o.stage)
    app.state.session = session

    @app.post("/v1/rematch")
    def rematch() -> dict[str, Any]:
        session.rematch()
        return {"games": session.games}

    @app.post("/v1/save")
    def save() -> dict[str, Any]:
        if save_dir is None:
            raise HTTPException(409, "no --save folder was given: nothing is saved")
        path = keep.save_replay(keep.snapshot(session), save_dir)
        saved.append(str(path))
        return {"saved": str(path)}

    return app


def create_spectate_app(spectator: Any) -> FastAPI:
    """The spectate page for ``spectator`` (a :class:`~melee_agent.play.spectate.Spectator`)."""
    app = _base_app("melee-agent spectate", "spectate.html",
                    lambda: {"run_dir": str(spectator.run_dir), "cpu_level": spectator.cpu_level},
                    spectator.tick, spectator.info, None, lambda: spectator.stage)
    app.state.spectator = spectator
    return app


__all__ = ["create_play_app", "create_spectate_app", "STATIC"]
