"""Helpers for the tests that drive a real browser: Debian's headless Chromium through Selenium (pointed at the
system's browser and driver: no Selenium Manager, nothing downloaded), and an app served by uvicorn on a free
127.0.0.1 port in this process."""

from __future__ import annotations

import shutil
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

CHROMIUM = ("/usr/bin/chromium", "/usr/bin/chromium-browser")
DRIVER = ("/usr/bin/chromedriver",)


def _first(paths: tuple[str, ...], name: str) -> str | None:
    for p in paths:
        if Path(p).exists():
            return p
    return shutil.which(name)


def browser_or_skip():  # noqa: ANN201
    """A headless Chromium driven by Selenium; the test skips, saying what is missing, where it cannot start."""
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        pytest.skip("selenium is not installed (pip install -e '.[test]')")
    browser, driver = _first(CHROMIUM, "chromium"), _first(DRIVER, "chromedriver")
    if browser is None or driver is None:
        pytest.skip("Debian's chromium and chromium-driver are not installed (apt-get install chromium chromium-driver)")
    opts = webdriver.ChromeOptions()
    opts.binary_location = browser
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--window-size=1100,900", "--disable-background-timer-throttling",
                 "--disable-renderer-backgrounding"):
        opts.add_argument(flag)
    try:
        return webdriver.Chrome(service=Service(executable_path=driver), options=opts)
    except Exception as e:  # noqa: BLE001 - any failure to start the browser is a reason to skip, said
        pytest.skip(f"headless chromium did not start: {type(e).__name__}: {str(e).splitlines()[0]}")


@contextmanager
def serve(app) -> Iterator[str]:  # noqa: ANN001
    """``app`` under uvicorn on a free 127.0.0.1 port (real HTTP and WebSockets); yields its URL."""
    import uvicorn

    from melee_agent.manager.spawn import free_port

    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=free_port(), log_level="warning", ws="auto"))
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
