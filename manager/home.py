"""The manager's ``/`` page: what it serves, the model it publishes, and the link to watch that model play live.

Watching is ``melee-agent play --spectate RUN_DIR`` (:mod:`melee_agent.play.spectate`), a page of its own on
port 8766 by default: it reads the run folder's newest published model, so it runs beside the manager (on the
same machine) rather than inside it, and costs the trainer nothing. With a token configured (a manager reachable
from other machines) the page leaves the run folder's path out, as ``/readyz`` does everything but the version.
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Callable

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse

SPECTATE_PORT = 8766  # melee_agent.cli.play.SPECTATE_PORT (not imported: the manager stays light to start)


def add_home(app: FastAPI, run_dir: str | Path, version: Callable[[], int | None], token: str | None) -> None:
    @app.get("/", response_class=HTMLResponse)
    def home(request: Request) -> str:
        host = request.url.hostname or "127.0.0.1"
        spectate = f"http://{host}:{SPECTATE_PORT}/"
        where = "RUN_DIR" if token else str(Path(run_dir))
        v = version()
        return f"""<!doctype html><html lang="en"><head><meta charset="utf-8"><title>melee-agent manager</title>
<style>body{{background:#101522;color:#f0f2f6;font:15px sans-serif;margin:24px}}a{{color:#78d2ff}}
code{{background:#303a50;padding:2px 6px}}</style></head><body>
<h1>melee-agent manager</h1>
<p>Published model: <b id="version">{'none yet' if v is None else f'v{v}'}</b>.
API: <a href="/v1/status">/v1/status</a>, <a href="/v1/model/meta">/v1/model/meta</a>, <a href="/readyz">/readyz</a>.</p>
<p><a id="spectate" href="{html.escape(spectate)}">Watch the newest model play the CPU, live</a>, with the periodic
checks' curve beside it: start it on this machine with
<code>melee-agent play --spectate {html.escape(where)}</code> (it serves {html.escape(spectate)}).</p>
</body></html>"""


__all__ = ["add_home", "SPECTATE_PORT"]
