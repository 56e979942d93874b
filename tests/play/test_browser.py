"""`melee-agent play` in a real browser (headless Chromium through Selenium): the page plays at 60 frames/s, keys
move Fox, make him jump and attack (read back from the arena's state), a game ends on the result screen and a
rematch starts another; the spectate page shows a model a real manager publishes within 5 s."""

from __future__ import annotations

import argparse
import gzip
import json
import os
import time

import httpx
import pytest
from melee.enums import Action

from melee_agent.cli.play import build_app
from melee_agent.manager.model_files import models_dir
from tests.play.browser_kit import browser_or_skip, serve
from tests.manager_kit import batch, wait_for

JUMPS = {Action.KNEE_BEND.value, Action.JUMPING_FORWARD.value, Action.JUMPING_BACKWARD.value}


def _args(**kw) -> argparse.Namespace:
    base = dict(policy=None, human="fox", cpu_level=1, cpu="designed", compile=False, delay_frames=0, seconds=480.0, seed=0,
                save=None, record=None, spectate=None, host="127.0.0.1", port=0)
    return argparse.Namespace(**{**base, **kw})


def _state(url: str) -> dict:
    return httpx.get(f"{url}/v1/state", timeout=60).json()  # slow while the frame compiles (it shares the GIL)


def _frame_kind(url: str) -> str:
    """The frame the server plays; "compiling" while a compile holds the GIL so long that the server cannot answer
    (a cold compile beside a loaded machine's other work)."""
    try:
        return _state(url)["frame_kind"]
    except httpx.TimeoutException:
        return "compiling"


def _hold_frames(driver, url: str, key: str, frames: int) -> int:
    """Hold ``key`` while the game plays ``frames`` frames (whatever the frame rate this machine keeps).

    The frames are counted from the first one that read the press (its ``seq``): a loaded machine can take
    longer than the hold to deliver the key, and a press released before any frame reads it is lost, as a press
    between two of Melee's polls is."""
    from selenium.webdriver.common.action_chains import ActionChains

    sent = driver.execute_script("return window.playStats.sent")  # the next seq the page will send
    ActionChains(driver).key_down(key).perform()
    start = wait_for(lambda: (s := _state(url))["read_seq"] >= sent and s["frame"], timeout=30)
    wait_for(lambda: _state(url)["frame"] >= start + frames, timeout=30)
    ActionChains(driver).key_up(key).perform()
    return start


@pytest.mark.slow
def test_the_page_plays_at_60_frames_a_second_and_keys_move_jump_and_attack(tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    driver = browser_or_skip()
    # Marth is a policy that stands still (noop), so that nothing but the keys moves Fox (a CPU grabs and throws).
    # The frame compiles in the background meanwhile (as `play` does by default); the rate is measured once it has.
    app = build_app(_args(policy="noop", seconds=12.0, save=str(tmp_path / "games"), compile=True))
    try:
        with serve(app) as url:
            driver.get(url + "/")
            wait_for(lambda: driver.execute_script("return window.playStats.frames") > 30, timeout=30)

            # A bad controller frame is answered with an error naming the field, and not played.
            error = driver.execute_async_script("""
                const done = arguments[0], ws = new WebSocket(`ws://${location.host}/ws`);
                ws.onopen = () => ws.send(JSON.stringify({main_x: 7, seq: 0}));
                ws.onmessage = (e) => { const m = JSON.parse(e.data); if (m.type === "error") { ws.close(); done(m.error); } };
                setTimeout(() => done(null), 5000);""")
            assert error is not None and "main_x must be a number in [0, 1]" in error
            body = driver.find_element(By.TAG_NAME, "body")
            body.click()
            x0 = _state(url)["players"]["fox"]["position_x"]
            # Toward the stage's centre first (not off its edge), then back; held for game frames, not seconds.
            there, back = (Keys.ARROW_RIGHT, Keys.ARROW_LEFT) if x0 < 0 else (Keys.ARROW_LEFT, Keys.ARROW_RIGHT)
            sign = 1 if x0 < 0 else -1
            _hold_frames(driver, url, there, 20)
            x1 = _state(url)["players"]["fox"]["position_x"]
            assert (x1 - x0) * sign > 5, (x0, x1)
            # A run brakes (about 20 frames), turns, then dashes back: 80 frames leave room for a late key-up.
            _hold_frames(driver, url, back, 80)
            assert (_state(url)["players"]["fox"]["position_x"] - x1) * sign < -5
            # Jump: Fox leaves the ground (read back from the arena within a few frames of the press).
            # Waits for the game are generous in wall seconds: a loaded machine plays fewer frames a second.
            wait_for(lambda: _state(url)["players"]["fox"]["action"] == Action.STANDING.value, timeout=30)
            _hold_frames(driver, url, Keys.SPACE, 2)
            wait_for(lambda: _state(url)["players"]["fox"]["on_ground"] == 0.0, timeout=2)
            time.sleep(1.0)  # lands again
            # Attack: A (J) starts a move: the action is no longer a free one.
            # Standing again (a press during the landing's lag is not read, as in Melee).
            wait_for(lambda: _state(url)["players"]["fox"]["action"] == Action.STANDING.value, timeout=30)
            pressed = _hold_frames(driver, url, "j", 2)
            lat = driver.execute_script("return window.playStats.latencies")
            # Each press shows on a frame after the newest one drawn when it was pressed, never before.
            assert lat and all(entry["ms"] > 0 and entry["frames"] >= 1 for entry in lat), lat
            # The game's end (the 12 s clock): the result screen, then a rematch.
            wait_for(lambda: driver.find_element(By.ID, "result").is_displayed(), timeout=60)
            assert driver.find_element(By.ID, "winner").text in ("You win", "You lose", "Draw")
            assert _state(url)["over"]
            wait_for(lambda: "saved: " in driver.find_element(By.ID, "saved").text, timeout=10)
            saved = list((tmp_path / "games").glob("*.frames.json.gz"))
            assert saved
            # The attack, read off the game's own frames as saved (a loaded machine can serve /v1/state too late
            # to catch a 17-frame jab): from the first frame that read the press, Fox is in a move, not free.
            frames = json.loads(gzip.decompress(saved[0].read_bytes()))["frames"]
            actions = {f["fighters"][0]["action"] for f in frames if pressed <= f["frame"] < pressed + 10}
            free = {Action.STANDING.value, Action.WALK_SLOW.value, Action.TURNING.value}
            assert actions - free - JUMPS, actions
            driver.find_element(By.ID, "rematch").click()
            wait_for(lambda: not _state(url)["over"] and _state(url)["games"] == 1, timeout=5)
            assert not driver.find_element(By.ID, "result").is_displayed()

            # Frames per second, once the compiled frame plays (a cold compile takes minutes on 2 cores): the
            # frames the page received over 3 s of its own clock, in a fresh game.
            kind = wait_for(lambda: _frame_kind(url) != "compiling" and _frame_kind(url), timeout=600)
            assert kind == "compiled", kind
            # Up to three 3-second windows, the first that plays at 60 counts: the suite runs two test files at once
            # on two cores, and a neighbour's compile can take a window; a frame too slow is slow in all three.
            for _ in range(3):
                httpx.post(f"{url}/v1/rematch", timeout=10)
                wait_for(lambda: not _state(url)["over"] and _state(url)["frame"] > 30, timeout=10)
                f0, t0 = driver.execute_script("return [window.playStats.lastFrame, performance.now()]")
                time.sleep(3.0)
                f1, t1 = driver.execute_script("return [window.playStats.lastFrame, performance.now()]")
                rate = (f1 - f0) / ((t1 - t0) / 1000)
                served = _state(url)  # the server's own clock over the last two seconds
                if plays_at_60(rate, served["frame_ms"]):
                    break
    finally:
        driver.quit()
    assert_plays_at_60(rate, served["fps"], served["frame_ms"])


#: A compiled frame's most milliseconds (90% of 1/60 s: the clock's thread needs the rest), and the page's frame rates.
FRAME_MS_MAX, PAGE_RATES = 1000 / 60 * 0.9, (54, 66)


def plays_at_60(rate: float, cost: float | None) -> bool:
    """What :func:`assert_plays_at_60` asserts, as a yes or no."""
    return cost is not None and cost <= FRAME_MS_MAX and PAGE_RATES[0] <= rate <= PAGE_RATES[1]


def assert_plays_at_60(rate: float, server_fps: float | None, cost: float | None) -> None:
    """The page received 54-66 frames a second, and a compiled frame costs less than its 1/60 s (90% of it: the
    clock's thread needs the rest). Checked last, so a slow machine still checks everything above; it fails
    when too slow, whatever the reason: a slow frame is the regression this test is for, and a machine too busy
    to play at 60 is one this test cannot vouch for (the message says which it was)."""
    load, cores = os.getloadavg()[0], os.cpu_count() or 1
    said = (f"the page saw {rate:.1f} frames/s, the server kept {server_fps}/s, a frame costs {cost} ms (median); "
            f"load average {load:.1f} on {cores} cores")
    assert cost is not None and cost <= FRAME_MS_MAX, f"the compiled frame is too slow for 60 frames/s: {said}"
    assert PAGE_RATES[0] <= rate <= PAGE_RATES[1], said


def test_the_frame_rate_check_fails_on_a_slow_frame_or_a_slow_page():
    assert_plays_at_60(60.0, 60.0, 4.0)
    assert plays_at_60(60.0, 4.0) and not plays_at_60(60.0, 20.0) and not plays_at_60(40.0, 4.0)
    assert not plays_at_60(60.0, None)
    with pytest.raises(AssertionError, match="too slow"):
        assert_plays_at_60(60.0, 60.0, 20.0)  # a frame over its 1/60 s, though the page kept up this time
    with pytest.raises(AssertionError, match="page saw 40.0"):
        assert_plays_at_60(40.0, 40.0, 4.0)


@pytest.mark.slow
def test_the_spectate_page_shows_a_new_model_within_5_s_of_its_publication(tmp_path, manager):
    from selenium.webdriver.common.by import By

    driver = browser_or_skip()
    run_dir = tmp_path / "run"
    try:
        with manager(run_dir) as m:
            # The manager's own page links to the spectate page and says how to start it.
            driver.get(m.url + "/")
            link = driver.find_element(By.ID, "spectate")
            assert link.get_attribute("href").endswith(":8766/")
            assert f"play --spectate {run_dir}" in driver.find_element(By.TAG_NAME, "body").text
            app = build_app(_args(spectate=str(run_dir), cpu_level=5))
            with serve(app) as url:
                driver.get(url + "/")
                h = {"Content-Type": "application/octet-stream"}
                seq = 0
                first = httpx.get(f"{m.url}/v1/model/meta").json()["version"]  # the untrained network, served first
                wait_for(lambda: driver.execute_script("return window.spectateStats.modelVersion !== null"), timeout=30)
                # Publish more: each new version must reach the page within 5 s of being served.
                checked = 0
                deadline = time.monotonic() + 90
                last = first
                while checked < 2 and time.monotonic() < deadline:
                    httpx.post(f"{m.url}/v1/experience", content=batch(400, seed=seq), headers=h)
                    seq += 1
                    v = httpx.get(f"{m.url}/v1/model/meta").json().get("version")
                    if v and v != last:
                        # Published when its file was written (before the manager served it), not when this loop
                        # happened to see it: the page's time is counted from the publication itself.
                        published = (models_dir(run_dir) / f"model-v{v:06d}.safetensors").stat().st_mtime
                        last = v
                        shown = wait_for(lambda v=v: [s for s in driver.execute_script(
                            "return window.spectateStats.seen") if s["version"] >= v], timeout=5)
                        assert 0.0 <= shown[0]["at"] / 1000 - published <= 5.0
                        checked += 1
                    time.sleep(0.2)
                assert checked == 2, "the manager published no new models"
                assert driver.execute_script("return window.spectateStats.frames") > 0
    finally:
        driver.quit()
