"""Keeping one Dolphin playing: start, watchdog, restarts, the menus and the setup check.

:meth:`Supervisor.next_game_frame` returns the next in-game frame and whether a new game began
since the last one (or Dolphin was restarted). On the way it:

- drives the menus with libmelee's ``MenuHelper`` (one per controller), switches the CPU port to
  a CPU if it is a human, and presses START on the postgame screen (libmelee 0.47 reports scene
  0x0402 as ``UNKNOWN_MENU``, so its own helper never leaves it);
- checks the setup on the first frame of every game (both characters, the CPU's type and level,
  the stage); a wrong one is logged with what was seen and the game is quit (pause, then
  L+R+A+START) back to the menus;
- restarts Dolphin when it exits, when it is silent for ``dolphin.timeout_s`` while a frame is
  awaited (the :class:`Watchdog` calls libmelee's ``Console.interrupt``, so a hung Dolphin with
  its connection up is noticed), or when it stays in the menus ``dolphin.menu_timeout_s``. Each
  start gets a new free spectator port and up to ``dolphin.start_attempts`` tries. Restarts are
  limited per time window (:class:`RestartLimiter`), logged with their reason and counted.
"""

from __future__ import annotations

import collections
import logging
import threading
import time
from typing import Any, Callable

from melee_agent.config import DolphinConfig, check_dolphin_config
from melee_agent.dolphin.launch import DolphinError
from melee_agent.dolphin.session import Session, StartFailed

log = logging.getLogger("melee_agent.dolphin")

SessionFactory = Callable[[], Session]


class RestartLimiter:
    """At most ``max_restarts`` restarts within any ``window_s`` seconds; more raise DolphinError."""

    def __init__(self, max_restarts: int, window_s: float, clock: Callable[[], float] = time.monotonic):
        self.max_restarts, self.window_s, self.clock = max_restarts, window_s, clock
        self.times: collections.deque[float] = collections.deque()
        self.total = 0

    def record(self, why: str) -> None:
        now = self.clock()
        while self.times and now - self.times[0] > self.window_s:
            self.times.popleft()
        self.times.append(now)
        self.total += 1
        if len(self.times) > self.max_restarts:
            raise DolphinError(f"Dolphin needed {len(self.times)} restarts within {self.window_s:.0f} s "
                               f"(dolphin.max_restarts = {self.max_restarts} per dolphin.restart_window_s); "
                               f"last: {why}")


class Watchdog:
    """Interrupts a session's console when its Dolphin exits, or is silent too long while awaited.

    ``awaiting()`` brackets each ``console.step()``: only time spent waiting for Dolphin counts as
    silence (a worker busy uploading between frames leaves a blocking-input Dolphin waiting on it).
    """

    def __init__(self, timeout_s: float, poll_s: float = 0.2):
        self.timeout_s, self.poll_s = timeout_s, poll_s
        self._lock = threading.Lock()
        self._session: Session | None = None
        self._since: float | None = None
        self.reason: str | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="dolphin-watchdog", daemon=True)
        self._thread.start()

    def watch(self, session: Session | None) -> None:
        with self._lock:
            self._session, self._since, self.reason = session, None, None

    def awaiting(self) -> "_Awaiting":
        return _Awaiting(self)

    def _run(self) -> None:
        while not self._stop.wait(self.poll_s):
            with self._lock:
                s, since = self._session, self._since
                if s is None or self.reason is not None:
                    continue
                code = s.exit_code()
                if code is not None:
                    self.reason = f"exited with code {code}"
                elif since is not None and time.monotonic() - since > self.timeout_s:
                    self.reason = f"silent for {self.timeout_s:g} s while a frame was awaited"
                else:
                    continue
            interrupt = getattr(s.console, "interrupt", None)
            if interrupt is not None:
                interrupt()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2)


class _Awaiting:
    def __init__(self, dog: Watchdog):
        self.dog = dog

    def __enter__(self) -> None:
        with self.dog._lock:
            self.dog._since = time.monotonic()

    def __exit__(self, *exc: Any) -> None:
        with self.dog._lock:
            self.dog._since = None


class Supervisor:
    """One Dolphin kept in game: see the module docstring."""

    def __init__(self, cfg: DolphinConfig, cpu_level: int, start: SessionFactory, menus: bool = True,
                 clock: Callable[[], float] = time.monotonic):
        import melee  # noqa: PLC0415

        self.cfg, self.cpu_level, self._start, self.menus = cfg, cpu_level, start, menus
        check_dolphin_config(cfg, "dolphin config")
        self.agent_character = melee.enums.Character[cfg.agent_character.upper()]
        self.opponent_character = melee.enums.Character[cfg.opponent_character.upper()]
        self.stage = melee.enums.Stage[cfg.stage.upper()]
        self.clock = clock
        self.limiter = RestartLimiter(cfg.max_restarts, cfg.restart_window_s, clock)
        self.restart_log: list[str] = []
        self.setup_mismatches: list[str] = []
        self.games = 0
        self.watchdog = Watchdog(cfg.timeout_s)
        self.session: Session | None = None
        self._checked = False  # the current game's setup has been checked
        self._quitting = False
        self._menu_since: float | None = None
        self._launch()

    @property
    def restarts(self) -> int:
        return self.limiter.total

    # --- process ---
    def _launch(self) -> None:
        import melee  # noqa: PLC0415

        errors = []
        for attempt in range(1, max(1, self.cfg.start_attempts) + 1):
            try:
                self.session = self._start()
                break
            except StartFailed as e:
                errors.append(str(e))
                log.warning("Dolphin start %d/%d failed: %s", attempt, self.cfg.start_attempts, e)
        else:
            raise DolphinError(f"Dolphin did not start in {len(errors)} tries: " + "; ".join(errors))
        self.helpers = (melee.MenuHelper(), melee.MenuHelper())
        self._checked, self._quitting, self._menu_since = False, False, None
        self.watchdog.watch(self.session)

    def restart(self, why: str) -> None:
        t0 = self.clock()
        self.restart_log.append(why)
        log.warning("Dolphin %s; restarting (restart %d)", why, self.limiter.total + 1)
        self.watchdog.watch(None)
        if self.session is not None:
            self.session.stop()
            self.session = None
        self.limiter.record(why)
        self._launch()
        log.info("Dolphin restarted in %.1f s (spectator port %s)", self.clock() - t0, self.session.port)

    def close(self) -> None:
        self.watchdog.close()
        if self.session is not None:
            self.session.stop()
            self.session = None

    # --- frames ---
    def _step(self) -> Any:
        s = self.session
        assert s is not None
        try:
            with self.watchdog.awaiting():
                gs = s.console.step()
        except Exception as e:  # noqa: BLE001 (EnetDisconnected, a broken pipe from a dying Dolphin)
            self.restart(self.watchdog.reason or f"connection lost ({type(e).__name__}: {e})")
            return None
        if gs is None:
            self.restart(self.watchdog.reason or "stopped answering (no game state)")
        return gs

    def next_game_frame(self) -> tuple[Any, bool]:
        """The next in-game frame, and whether a game ended or Dolphin restarted since the last one."""
        import melee  # noqa: PLC0415

        left_game = False
        while True:
            gs = self._step()
            if gs is None:
                left_game = True
                continue
            s = self.session
            assert s is not None
            ports = self.cfg.agent_port, self.cfg.opponent_port
            if gs.menu_state in (melee.enums.Menu.IN_GAME, melee.enums.Menu.SUDDEN_DEATH) \
                    and all(p in gs.players for p in ports):
                self._menu_since = None
                if not self._checked:
                    self._checked = True
                    self.games += 1
                    wrong = self.setup_problem(gs) if self.menus else None
                    if wrong:
                        self.setup_mismatches.append(wrong)
                        log.warning("game %d has the wrong setup (%s); quitting it for the menus", self.games, wrong)
                        self._quitting = True
                if self._quitting:  # pause, then L+R+A+START held quits a VS game
                    c = s.controller
                    for b in (melee.enums.Button.BUTTON_L, melee.enums.Button.BUTTON_R,
                              melee.enums.Button.BUTTON_A, melee.enums.Button.BUTTON_START):
                        c.press_button(b)
                    s.flush_unregistered()
                    left_game = True
                    continue
                return gs, left_game
            left_game = True
            self._checked, self._quitting = False, False
            now = self.clock()
            if self._menu_since is None:
                self._menu_since = now
            elif now - self._menu_since > self.cfg.menu_timeout_s:
                self.restart(f"stuck in the menus for {self.cfg.menu_timeout_s:g} s")
                continue
            if self.menus:
                self._menu_inputs(gs)
                s.flush_unregistered()

    def setup_problem(self, gs: Any) -> str | None:
        """What differs from the configured setup on a game's first frame (None: all as configured)."""
        a, o = gs.players[self.cfg.agent_port], gs.players[self.cfg.opponent_port]
        seen = (f"port {self.cfg.agent_port} {a.character.name} cpu {a.cpu_level}, "
                f"port {self.cfg.opponent_port} {o.character.name} cpu {o.cpu_level}, stage {gs.stage.name}")
        want = (f"port {self.cfg.agent_port} {self.agent_character.name} cpu 0, "
                f"port {self.cfg.opponent_port} {self.opponent_character.name} cpu {self.cpu_level}, "
                f"stage {self.stage.name}")
        ok = (a.character == self.agent_character and a.cpu_level == 0 and o.character == self.opponent_character
              and o.cpu_level == self.cpu_level and gs.stage == self.stage)
        return None if ok else f"saw {seen}; want {want}"

    def _menu_inputs(self, gs: Any) -> None:
        import melee  # noqa: PLC0415

        Menu = melee.enums.Menu
        s = self.session
        assert s is not None
        mine, cpu = self.helpers
        if gs.menu_state not in (Menu.CHARACTER_SELECT, Menu.STAGE_SELECT, Menu.MAIN_MENU, Menu.PRESS_START,
                                 Menu.SLIPPI_ONLINE_CSS):
            # The postgame screen (scene 0x0402 reads as UNKNOWN_MENU in libmelee 0.47): START leaves it.
            mine.skip_postgame(s.controller)
            s.cpu_controller.release_all()
            return
        opp = gs.players.get(self.cfg.opponent_port)
        if (gs.menu_state == Menu.CHARACTER_SELECT and opp is not None and opp.coin_down
                and opp.character == self.opponent_character
                and opp.controller_status != melee.enums.ControllerStatus.CONTROLLER_CPU):
            # libmelee only switches a port to CPU when the wanted level differs from the slider's.
            melee.MenuHelper.change_controller_status(s.cpu_controller, gs, self.cfg.opponent_port,
                                                      melee.enums.ControllerStatus.CONTROLLER_CPU)
            s.controller.release_all()
            return
        mine.menu_helper_simple(gs, s.controller, self.agent_character, self.stage, "", cpu_level=0, costume=0,
                                autostart=False, swag=False)
        cpu.menu_helper_simple(gs, s.cpu_controller, self.opponent_character, self.stage, "",
                               cpu_level=self.cpu_level, costume=1, autostart=True, swag=False)
