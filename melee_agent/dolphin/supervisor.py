"""Keeping one Dolphin playing: start, watchdog, restarts, the menus and the setup check.

:meth:`Supervisor.next_game_frame` returns the next in-game frame and whether a new game began
since the last one (or Dolphin was restarted). On the way it:

- drives the menus: the title screen and main menu with libmelee's ``choose_versus_mode`` (its
  ``menu_helper_simple`` ignores the title screen), the character and stage select screens with a
  ``MenuHelper`` per controller (switching the CPU port to a CPU if it is a human), and START on
  the results screen (scene 0x0402, which libmelee 0.47 reads as ``UNKNOWN_MENU``);
- treats sudden death (scene 0x0302, or a game whose players start at 300%) as the end of the
  game it follows: nothing is pressed there (START would pause it) and the agent plays none of it;
- checks the setup on the first frame of every game (both characters, the CPU's type and level,
  the stage; for fights also Melee's rules: ``stocks`` each, else a :class:`DolphinError` at once,
  since the menus driven here never change the rules); a wrong one is logged with what was seen
  and quit (:mod:`.quit`: L+R+A held, START tapped) within ``dolphin.quit_timeout_s``, else
  Dolphin is restarted; ``dolphin.max_setup_mismatches`` wrong games in a row stop the worker with
  a :class:`DolphinError` naming what was seen;
- restarts Dolphin when it exits, when it is silent for ``dolphin.timeout_s`` while a frame is
  awaited (the :class:`Watchdog` calls libmelee's ``Console.interrupt``, so a hung Dolphin with
  its connection up is noticed; the silence of a game paused to quit it is not a hang), or when it
  stays in the menus ``dolphin.menu_timeout_s``. Each start gets a new free spectator port and up
  to ``dolphin.start_attempts`` tries. Restarts are limited per time window
  (:class:`RestartLimiter`), logged with their reason and counted.
"""

from __future__ import annotations

import collections
import logging
import random
import threading
import time
from typing import Any, Callable, Sequence

from melee_agent.config import DolphinConfig, check_dolphin_config
from melee_agent.dolphin.errors import DolphinError
from melee_agent.dolphin.quit import QuitAttempt
from melee_agent.dolphin.scenes import RESULTS, SUDDEN_DEATH, SUDDEN_DEATH_PERCENT
from melee_agent.dolphin.session import Session, StartFailed

log = logging.getLogger("melee_agent.dolphin")

SessionFactory = Callable[[], Session]


def menu_stages(cfg: DolphinConfig, stages: Sequence[str] | None) -> list[Any]:
    """The libmelee stages the menus pick from: ``stages`` (``env.stage``'s names), or ``dolphin.stage`` where it
    is RANDOM_STAGE or no stages are given (its default, "", is Final Destination)."""
    import melee  # noqa: PLC0415

    from melee_agent.arena.stages import stage_named  # noqa: PLC0415

    old = cfg.stage.strip().upper()
    if old == "RANDOM_STAGE" or (old and not stages):
        return [melee.enums.Stage[old]]
    return [melee.enums.Stage[stage_named(n).libmelee] for n in (stages or ["final_destination"])]


class StageDraw:
    """Each game's stage: one of ``stages``, drawn with ``weights`` (None: equal) from its own generator."""

    def __init__(self, stages: Sequence[Any], weights: Sequence[float] | None = None, seed: int = 0):
        if weights and len(weights) != len(stages):
            raise ValueError(f"env.stage_weights has {len(weights)} weights for {len(stages)} stages")
        self.stages, self.weights = list(stages), (list(weights) if weights else None)
        self.rng = random.Random(seed)

    def next(self) -> Any:
        if len(self.stages) == 1:
            return self.stages[0]
        return self.rng.choices(self.stages, weights=self.weights)[0]


class _MenuEventsInFrames(logging.Filter):
    """libmelee logs an error (on the root logger) for every menu event inside a frame's batch. In
    sudden death that is every frame (see :mod:`.scenes`), so there it would flood the worker's log;
    these are counted instead."""

    MESSAGE = "Got a menu event in the middle of a frame"

    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def filter(self, record: logging.LogRecord) -> bool:
        if record.getMessage().startswith(self.MESSAGE):
            self.count += 1
            return False
        return True


MENU_EVENTS_IN_FRAMES = _MenuEventsInFrames()


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

    NUDGE_AFTER_S = 0.5  # a blocking-input Dolphin answers a frame in milliseconds: this long is a pause
    NUDGE_EVERY_S = 0.1

    def __init__(self, timeout_s: float, poll_s: float = 0.1):
        self.timeout_s, self.poll_s = timeout_s, poll_s
        self._lock = threading.Lock()
        self._session: Session | None = None
        self._since: float | None = None
        self._quit: tuple[float, str, Callable[[], None]] | None = None  # (deadline, why, nudge)
        self._last_nudge = 0.0
        self.reason: str | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="dolphin-watchdog", daemon=True)
        self._thread.start()

    def watch(self, session: Session | None) -> None:
        with self._lock:
            self._session, self._since, self.reason, self._quit = session, None, None, None

    def quitting(self, deadline: float | None, why: str = "", nudge: Callable[[], None] | None = None) -> None:
        """While a game is being quit its pause is expected silence: ``nudge`` is called while the worker
        waits, and only ``deadline`` (monotonic) ends the wait, with ``why`` as the reason."""
        with self._lock:
            self._quit = None if deadline is None or nudge is None else (deadline, why, nudge)

    def awaiting(self) -> "_Awaiting":
        return _Awaiting(self)

    def _run(self) -> None:
        while not self._stop.wait(self.poll_s):
            with self._lock:
                s, since, now = self._session, self._since, time.monotonic()
                if s is None or self.reason is not None:
                    continue
                code = s.exit_code()
                if code is not None:
                    self.reason = f"exited with code {code}"
                elif self._quit is not None:
                    deadline, why, nudge = self._quit
                    if now > deadline:
                        self.reason = why
                    else:
                        if since is not None and now - since > self.NUDGE_AFTER_S \
                                and now - self._last_nudge > self.NUDGE_EVERY_S:
                            self._last_nudge = now
                            try:  # under the lock: the worker cannot leave its wait (and write) meanwhile
                                nudge()
                            except Exception as e:  # noqa: BLE001 (a pipe whose reader is gone)
                                log.debug("quit nudge: %s", e)
                        continue
                elif since is not None and now - since > self.timeout_s:
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
                 clock: Callable[[], float] = time.monotonic, stocks: int | None = None,
                 stages: Sequence[str] | None = None, stage_weights: Sequence[float] | None = None, seed: int = 0):
        import melee  # noqa: PLC0415

        self.cfg, self.cpu_level, self._start, self.menus = cfg, cpu_level, start, menus
        self.stocks = stocks  # the stocks each player must start a game with (fights), None: any
        check_dolphin_config(cfg, "dolphin config")
        if MENU_EVENTS_IN_FRAMES not in logging.getLogger().filters:
            logging.getLogger().addFilter(MENU_EVENTS_IN_FRAMES)
        self.agent_character = melee.enums.Character[cfg.agent_character.upper()]
        self.opponent_character = melee.enums.Character[cfg.opponent_character.upper()]
        #: The stages games are played on (each game draws one, by stage_weights), and the one the next game plays.
        self.stage_draw = StageDraw(menu_stages(cfg, stages), stage_weights, seed)
        self.stage = self.stage_draw.next()
        self.clock = clock
        self.limiter = RestartLimiter(cfg.max_restarts, cfg.restart_window_s, clock)
        self.restart_log: list[str] = []
        self.setup_mismatches: list[str] = []
        self.games = 0
        self.watchdog = Watchdog(cfg.timeout_s)
        self.session: Session | None = None
        self._checked = False  # the current game's setup has been checked
        self._quit: QuitAttempt | None = None  # the current game is being quit
        self._sudden_death = False  # the current "game" is sudden death
        self._wrong_in_a_row = 0
        self._menu_since: float | None = None
        self._unknown_scenes: set[int] = set()
        self._last_frame = 0  # the last in-game frame's number
        #: What made the last :meth:`next_game_frame` leave the game, first ("melee", "quit", "restart"), or None.
        self.left_by: str | None = None
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
        self._checked, self._quit, self._sudden_death, self._menu_since = False, None, False, None
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
        """The next in-game frame, and whether a game ended or Dolphin restarted since the last one.

        Where it did, :attr:`left_by` says what came first: ``"melee"`` (Melee left the game: its
        end, the menus, sudden death, a frame counter starting over), ``"quit"`` (a wrong-setup game
        quit) or ``"restart"`` (Dolphin restarted); a restart later in the menus does not undo a game
        that Melee had already ended.
        """
        import melee  # noqa: PLC0415

        self.left_by = None
        while True:
            gs = self._step()
            if gs is None:
                self._left("restart")
                continue
            s = self.session
            assert s is not None
            ports = self.cfg.agent_port, self.cfg.opponent_port
            scene = getattr(s.console, "scene", None)
            in_game = gs.menu_state in (melee.enums.Menu.IN_GAME, melee.enums.Menu.SUDDEN_DEATH) \
                and all(p in gs.players for p in ports)
            if in_game and self._checked and gs.frame < self._last_frame:
                # A new game with no menu frame before it (sudden death straight after TIME!):
                # libmelee shows no game start, only the frame counter starting over.
                self._checked = False
                self._left("melee")
            if in_game:
                self._last_frame = gs.frame
            if in_game and not self._checked and self._starts_sudden_death(gs):
                self._sudden_death = True  # read as frames of a new game: they are the old one's end
            if in_game and not self._sudden_death:
                self._menu_since = None
                if not self._checked:
                    self._checked = True
                    self.games += 1
                    # libmelee's helpers forget their stage choice only on a menu frame numbered 0
                    # (MenuHelper.choose_stage: "why did I pick this as the condition?"): forgotten at
                    # every game, so the next stage select never waits on that number. (Not fresh
                    # helpers: frozen_stadium_selected must stay, or Stadium's toggle flips each game.)
                    for helper in self.helpers:
                        helper.stage_selected, helper.frames_on_stage = False, 0
                    self._check_setup(gs)
                    if self._quit is None:  # a wrong game is quit and its stage asked again; else the next's
                        self.stage = self.stage_draw.next()
                if self._quit is not None:
                    if self.clock() > self._quit.deadline:
                        self.restart(self._quit_failed())
                    else:
                        self._quit.press()
                        s.flush_unregistered()
                    self._left("quit")
                    continue
                return gs, self.left_by is not None
            self._left("melee")
            if not in_game:
                self._checked, self._sudden_death = False, False
                if self._quit is not None:
                    self._quit = None
                    self.watchdog.quitting(None)
            now = self.clock()
            if self._menu_since is None:
                self._menu_since = now
            elif now - self._menu_since > self.cfg.menu_timeout_s:
                self.restart(f"stuck in the menus for {self.cfg.menu_timeout_s:g} s")
                continue
            if scene == SUDDEN_DEATH or self._sudden_death:
                # The game ended at time with stocks tied: its episode is over. START would pause
                # sudden death (and tapping it, unpause and pause again); the CPU ends it.
                s.controller.release_all()
                s.cpu_controller.release_all()
                s.flush_unregistered()
                continue
            if self.menus:
                self._menu_inputs(gs, scene)
                s.flush_unregistered()

    def _left(self, why: str) -> None:
        """The game was left, by ``why`` if nothing left it earlier in this :meth:`next_game_frame`."""
        self.left_by = self.left_by or why

    @staticmethod
    def _starts_sudden_death(gs: Any) -> bool:
        """A game whose first frame has every player at 300%: sudden death read as a new game."""
        return bool(gs.players) and all(float(p.percent) >= SUDDEN_DEATH_PERCENT for p in gs.players.values())

    def _check_setup(self, gs: Any) -> None:
        rules = self.rules_problem(gs) if self.menus else None
        if rules:
            raise DolphinError(rules)
        wrong = self.setup_problem(gs) if self.menus else None
        if not wrong:
            self._wrong_in_a_row = 0
            return
        self.setup_mismatches.append(wrong)
        self._wrong_in_a_row += 1
        if self._wrong_in_a_row >= self.cfg.max_setup_mismatches:
            raise DolphinError(f"{self._wrong_in_a_row} games in a row had the wrong setup "
                               f"(dolphin.max_setup_mismatches = {self.cfg.max_setup_mismatches}): {wrong}; check the "
                               "[dolphin] characters and stage, and that the menus are not blocked")
        log.warning("game %d has the wrong setup (%s); quitting it for the menus", self.games, wrong)
        s = self.session
        assert s is not None
        self._quit = QuitAttempt(s.controller, self.clock() + self.cfg.quit_timeout_s)
        self.watchdog.quitting(time.monotonic() + self.cfg.quit_timeout_s, self._quit_failed(), self._quit.nudge)

    def _quit_failed(self) -> str:
        return (f"did not leave a wrong-setup game in dolphin.quit_timeout_s = {self.cfg.quit_timeout_s:g} s "
                "(L+R+A+START refused: is pause off in the game's rules?)")

    def rules_problem(self, gs: Any) -> str | None:
        """What in Melee's rules keeps this game from being the asked fight (None: the rules fit, or any do).

        Slippi's required codes (``GALE01r2.ini``) boot Melee in Stock mode, 4 stocks, 8:00, and libmelee
        gives every Dolphin a fresh user folder, so no rules menu choice or memory card carries over: a game
        that starts otherwise comes from a Dolphin whose codes are not Slippi's.
        """
        if self.stocks is None:
            return None
        ports = (self.cfg.agent_port, self.cfg.opponent_port)
        seen = [int(gs.players[p].stock) for p in ports]
        if all(n == self.stocks for n in seen):
            return None
        return (f"a fight needs Melee's standard rules, {self.stocks} stocks each and 8:00, but the game started "
                f"with {seen[0]} and {seen[1]} stocks (ports {ports[0]} and {ports[1]}): Slippi Dolphin's required "
                "codes (GALE01r2.ini) start every game in Stock mode, 4 stocks, 8:00, so this Dolphin's codes are "
                "others; use stock Slippi Dolphin (dolphin.dolphin_path), or restore Slippi's required codes in its "
                "GALE01r2.ini (each Dolphin gets a fresh user folder, so Melee's Rules menu cannot be set once)")

    def setup_problem(self, gs: Any) -> str | None:
        """What differs from the configured setup on a game's first frame (None: all as configured)."""
        a, o = gs.players[self.cfg.agent_port], gs.players[self.cfg.opponent_port]
        seen = (f"port {self.cfg.agent_port} {a.character.name} cpu {a.cpu_level}, "
                f"port {self.cfg.opponent_port} {o.character.name} cpu {o.cpu_level}, stage {gs.stage.name}")
        want = (f"port {self.cfg.agent_port} {self.agent_character.name} cpu 0, "
                f"port {self.cfg.opponent_port} {self.opponent_character.name} cpu {self.cpu_level}, "
                f"stage {self.stage.name}")
        stage_ok = gs.stage == self.stage or self.stage.name == "RANDOM_STAGE"  # Random: whichever it picked
        ok = (a.character == self.agent_character and a.cpu_level == 0 and o.character == self.opponent_character
              and o.cpu_level == self.cpu_level and stage_ok)
        return None if ok else f"saw {seen}; want {want}"

    def _menu_inputs(self, gs: Any, scene: int | None) -> None:
        import melee  # noqa: PLC0415

        Menu = melee.enums.Menu
        s = self.session
        assert s is not None
        mine, cpu = self.helpers
        if gs.menu_state in (Menu.PRESS_START, Menu.MAIN_MENU):
            # Melee boots to the title screen; menu_helper_simple does nothing there, and both helpers
            # steering the main menu at once would double each move: the agent's controller alone.
            melee.MenuHelper.choose_versus_mode(gs, s.controller)
            s.cpu_controller.release_all()
            return
        if gs.menu_state not in (Menu.CHARACTER_SELECT, Menu.STAGE_SELECT, Menu.SLIPPI_ONLINE_CSS):
            if scene is None or scene == RESULTS:
                # The results screen (libmelee 0.47 reads scene 0x0402 as UNKNOWN_MENU): START leaves it.
                mine.skip_postgame(s.controller)
            else:  # a scene nothing here knows: press nothing (the menu timeout restarts a stuck Dolphin)
                if scene not in self._unknown_scenes:
                    self._unknown_scenes.add(scene)
                    log.warning("Dolphin shows scene 0x%04x, which the worker does not drive; waiting", scene)
                s.controller.release_all()
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
