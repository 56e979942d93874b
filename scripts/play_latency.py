#!/usr/bin/env python3
"""Input latency of `melee-agent play`'s page: from a key press to the frame that shows it (docs/play.md).

For each delay asked, a play server (against the CPU, level 1) is started in this process and headless Chromium
(Debian's, through Selenium) loads the page; the script presses the right and left arrows alternately,
``--presses`` times, at uneven intervals (so presses fall anywhere within a frame), and reads back what the page
measured for each (``window.playStats.latencies``): the milliseconds from the key's event to the page drawing the
first frame whose game read the press, and the game frames from the newest frame drawn at the press to that one.
Also reported: the frames per second the server kept and a frame's median cost.

    PYTHONPATH=$PWD python scripts/play_latency.py --delays 0 3 --json docs/bench/play-latency.json
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402

from melee_agent.cli.play import build_app  # noqa: E402
from tests.play.browser_kit import browser_or_skip, serve  # noqa: E402


def measure(delay: int, presses: int, seed: int) -> dict:
    from selenium.webdriver.common.action_chains import ActionChains  # noqa: PLC0415 (a test extra)
    from selenium.webdriver.common.keys import Keys  # noqa: PLC0415

    args = argparse.Namespace(policy=None, human="fox", cpu_level=1, cpu="designed", compile=True, delay_frames=delay,
                              seconds=480.0, seed=0, save=None, record=None, spectate=None)
    driver = browser_or_skip()
    rng = random.Random(seed)
    try:
        with serve(build_app(args)) as url:
            driver.get(url + "/")
            while httpx.get(f"{url}/v1/state", timeout=60).json()["frame_kind"] == "compiling":  # measured compiled, as played
                time.sleep(0.5)
            httpx.post(f"{url}/v1/rematch", timeout=60)
            while driver.execute_script("return window.playStats.frames") < 60:
                time.sleep(0.1)
            for i in range(presses):
                key = Keys.ARROW_RIGHT if i % 2 == 0 else Keys.ARROW_LEFT
                ActionChains(driver).key_down(key).perform()
                time.sleep(0.15 + rng.random() * 0.1)
                ActionChains(driver).key_up(key).perform()
                time.sleep(0.1 + rng.random() * 0.1)
            time.sleep(0.5)
            lat = driver.execute_script("return window.playStats.latencies")
            state = httpx.get(f"{url}/v1/state", timeout=60).json()
    finally:
        driver.quit()
    ms = [e["ms"] for e in lat]
    frames = [e["frames"] for e in lat]
    return {"delay_frames": delay, "presses": len(lat), "ms_median": round(statistics.median(ms), 1),
            "ms_p90": round(sorted(ms)[int(0.9 * (len(ms) - 1))], 1), "ms_max": round(max(ms), 1),
            "frames_median": statistics.median(frames), "frames_max": max(frames),
            "frames_beyond_delay_max": max(frames) - delay, "server_fps": state["fps"], "frame_ms": state["frame_ms"],
            "frame_kind": state["frame_kind"], "load_average": round(os.getloadavg()[0], 1)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--delays", type=int, nargs="+", default=[0, 3])
    ap.add_argument("--presses", type=int, default=30)
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    out = [measure(d, a.presses, seed=d) for d in a.delays]
    for r in out:
        print(json.dumps(r))
    if a.json:
        Path(a.json).write_text(json.dumps({"runs": out}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
