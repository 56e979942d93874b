"""Helpers for the tests that drive a real browser: Debian's headless Chromium through Selenium (pointed at the
system's browser and driver: no Selenium Manager, nothing downloaded), and an app served by uvicorn on a free
127.0.0.1 port in this process."""

from __future__ import annotations

import shutil
from contextlib import AbstractContextManager
from pathlib import Path

import pytest

from tests.live_manager import serve_app

CHROMIUM = ("/usr/bin/chromium", "/usr/bin/chromium-browser")
DRIVER = ("/usr/bin/chromedriver",)


def _first(paths: tuple[str, ...], name: str) -> str | None:
    for p in paths:
        if Path(p).exists():
            return p
    return shutil.which(name)


def browser_or_skip():  # noqa: ANN201
    """A headless Chromium driven by Selenium. The test skips, saying what is missing, only where the browser, its
    driver or Selenium is not installed; one that is installed and does not start fails the test."""
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
    # A browser that is there and does not start is a failure (its error says why), not a skip.
    return webdriver.Chrome(service=Service(executable_path=driver), options=opts)


def serve(app) -> AbstractContextManager[str]:  # noqa: ANN001
    """``app`` under uvicorn on a free 127.0.0.1 port (real HTTP and WebSockets); yields its URL."""
    return serve_app(app)
