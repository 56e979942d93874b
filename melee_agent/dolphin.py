"""Real Melee: Dolphin through libmelee, behind the arena's environment API (one game at a time).

:class:`DolphinEnv` starts Slippi Dolphin with ``melee.Console`` (``blocking_input=True`` so no
frame is skipped, a temporary user folder per worker, audio off, the ``Null`` video backend when
headless), plugs in the agent's controller and a second one that sets Melee's built-in CPU up at
level L through libmelee's ``MenuHelper``, and plays: each frame is encoded with ``state.py``,
each action's controller states are played frame by frame, and rewards, hits and episode ends
follow the same rules as the arena (:class:`FrameRules`). Menus, the postgame screen and sudden
death lead back into a new game; when Dolphin dies or stops answering it is restarted, counted and
logged, and play goes on.

The console and the controllers come from factories, so the very same loop runs in tests on
libmelee's file console (a real ``.slp`` replay) with a recording controller.

Example (needs Slippi Dolphin and an NTSC 1.02 ISO)::

    from melee_agent.config import load_config
    cfg = load_config("dolphin", ["dolphin.dolphin_path=/opt/slippi", "dolphin.iso_path=/isos/melee.iso"])
    env = DolphinEnv(cfg.dolphin, cpu_level=9, action_set="untouchable", reward="untouchable", max_frames=3600)
    obs = env.reset()                                  # [1, 27]
    obs, reward, done, info = env.step(torch.tensor([1]))  # one spot dodge (22 frames)
"""

from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np
import torch

from melee_agent.actions import apply_frame, get_action_set
from melee_agent.config import DolphinConfig
from melee_agent.rewards import check_reward, frame_outcome
from melee_agent.state import encode_gamestate
from melee_agent.vecenv import StepResult, step_info

log = logging.getLogger("melee_agent.dolphin")


class DolphinError(RuntimeError):
    """Dolphin cannot be started or kept running; the message says what to set or what happened."""


def check_paths(cfg: DolphinConfig) -> None:
    """One clear line naming what to set when the Dolphin or ISO path is missing or wrong."""
    if not cfg.dolphin_path:
        raise DolphinError("dolphin.dolphin_path is not set: point it at Slippi Dolphin (its AppImage, executable or "
                           "folder), e.g. --set dolphin.dolphin_path=/opt/slippi/Slippi_Online-x86_64.AppImage")
    if not Path(cfg.dolphin_path).exists():
        raise DolphinError(f"dolphin.dolphin_path {cfg.dolphin_path!r} does not exist: set it to your Slippi Dolphin")
    if not cfg.iso_path:
        raise DolphinError("dolphin.iso_path is not set: point it at your NTSC 1.02 Melee ISO "
                           "(--set dolphin.iso_path=/path/melee.iso); it is never shipped or downloaded")
    if not Path(cfg.iso_path).is_file():
        raise DolphinError(f"dolphin.iso_path {cfg.iso_path!r} is not a file: set it to your NTSC 1.02 Melee ISO")
    if Path(cfg.dolphin_path).is_dir():
        from melee.console import get_exe_path  # noqa: PLC0415

        try:  # libmelee finds the executable in a folder only by its install layout
            get_exe_path(cfg.dolphin_path)
        except (ValueError, FileNotFoundError, NotImplementedError) as e:
            raise DolphinError(f"dolphin.dolphin_path {cfg.dolphin_path!r} is a folder libmelee cannot use ({e}): "
                               "set it to the Dolphin executable or AppImage itself") from None


@dataclass(frozen=True)
class LaunchOptions:
    """How to start one Dolphin build: ``melee.Console`` keyword arguments and ``Console.run``'s."""

    build: str  # what libmelee detected: "ishiiruka", "exiai" or "mainline"
    console: dict[str, Any]
    run: dict[str, Any]


def launch_options(cfg: DolphinConfig, display: str | None = None) -> LaunchOptions:
    """The options for the Dolphin at ``cfg.dolphin_path``, from libmelee's own version detection.

    - stock Slippi Online (Ishiiruka): a real video backend, so headless means under Xvfb (a
      ``DISPLAY`` must be set); libmelee refuses ``Null`` for it;
    - the ExiAI Ishiiruka build: the ``Null`` backend (libmelee requires it), EXI inputs, and
      fast-forward when headless;
    - mainline Slippi Dolphin: headless is ``Null`` video and ``--platform headless``.
    """
    from melee.console import DolphinBuild, get_dolphin_version  # noqa: PLC0415

    try:
        version = get_dolphin_version(cfg.dolphin_path)
    except Exception as e:  # noqa: BLE001 (libmelee raises assertion, value and runtime errors here)
        raise DolphinError(f"dolphin.dolphin_path {cfg.dolphin_path!r}: libmelee cannot tell which Dolphin this is "
                           f"({type(e).__name__}: {e}); point it at Slippi Dolphin") from None
    common = {"disable_audio": cfg.headless}
    if version.build is DolphinBuild.EXI_AI:
        return LaunchOptions("exiai", {**common, "gfx_backend": "Null", "use_exi_inputs": True,
                                       "enable_ffw": cfg.headless}, {})
    if version.mainline:
        if cfg.headless:
            return LaunchOptions("mainline", {**common, "gfx_backend": "Null"}, {"platform": "headless"})
        return LaunchOptions("mainline", common, {})
    display = os.environ.get("DISPLAY") if display is None else display
    if cfg.headless and not display:
        raise DolphinError("stock Slippi Online (Ishiiruka) has no headless video backend: run it under Xvfb "
                           "(`Xvfb :99 & export DISPLAY=:99`), or set dolphin.dolphin_path to the ExiAI Ishiiruka "
                           "build or mainline Slippi Dolphin for true headless play")
    return LaunchOptions("ishiiruka", common, {})


def in_game(gamestate: Any) -> bool:
    import melee  # noqa: PLC0415

    return gamestate.menu_state in (melee.enums.Menu.IN_GAME, melee.enums.Menu.SUDDEN_DEATH)


@dataclass
class FrameResult:
    reward: float
    hit: bool
    damage_taken: float
    damage_dealt: float
    stocks_lost: int
    stocks_taken: int
    terminal: bool
    truncated: bool


class FrameRules:
    """:func:`melee_agent.rewards.frame_outcome` (the arena's rules) applied to libmelee GameStates.

    Reads each frame's damage and stock changes from the ports' percent and stock, then scores the
    frame with the same function the arena uses.
    """

    def __init__(self, agent_port: int, opponent_port: int, reward: str, max_frames: int):
        self.agent_port, self.opponent_port = agent_port, opponent_port
        self.reward = check_reward(reward)
        self.max_frames = max_frames
        self.episode_frame = 0
        self.episode_return = 0.0
        self._prev: tuple[float, int, float, int] | None = None

    def _read(self, gs: Any) -> tuple[float, int, float, int]:
        a, o = gs.players[self.agent_port], gs.players[self.opponent_port]
        return float(a.percent), int(a.stock), float(o.percent), int(o.stock)

    def start(self, gs: Any) -> None:
        """A new episode starts at this frame (nothing is scored for it)."""
        self.episode_frame = 0
        self.episode_return = 0.0
        self._prev = self._read(gs)

    def frame(self, gs: Any, noop: bool) -> FrameResult:
        if self._prev is None:
            self.start(gs)
        pa, sa, po, so = self._prev  # type: ignore[misc]
        a_pct, a_stock, o_pct, o_stock = self._read(gs)
        self._prev = (a_pct, a_stock, o_pct, o_stock)
        # Percent resets with a lost stock: damage counts only within a stock.
        taken = max(0.0, a_pct - pa) if a_stock == sa else 0.0
        dealt = max(0.0, o_pct - po) if o_stock == so else 0.0
        lost, took = max(0, sa - a_stock), max(0, so - o_stock)
        self.episode_frame += 1
        t = lambda v: torch.tensor([v])  # noqa: E731
        out = frame_outcome(self.reward == "untouchable", agent_action=t(int(gs.players[self.agent_port].action.value)),
                            is_noop=t(noop), taken=t(taken), dealt=t(dealt), lost=t(lost), took=t(took),
                            agent_stock=t(a_stock), opponent_stock=t(o_stock), episode_frame=t(self.episode_frame),
                            max_frames=self.max_frames)
        reward = float(out.reward)
        self.episode_return += reward
        return FrameResult(reward, bool(out.hit), taken, dealt, lost, took, bool(out.terminal), bool(out.truncated))


ConsoleFactory = Callable[[], Any]
ControllerFactory = Callable[[Any, int], Any]


class DolphinEnv:
    """One Melee game in Dolphin with the arena's API (``num_envs`` = 1)."""

    num_envs = 1

    def __init__(self, cfg: DolphinConfig, cpu_level: int = 9, action_set: str = "untouchable",
                 reward: str = "untouchable", max_frames: int = 3600, device: str | torch.device = "cpu",
                 console_factory: ConsoleFactory | None = None, controller_factory: ControllerFactory | None = None,
                 menus: bool = True, max_restarts: int = 20):
        import melee  # noqa: PLC0415

        if not 1 <= cpu_level <= 9:
            raise ValueError(f"cpu_level must be 1-9, got {cpu_level}")
        self.cfg, self.cpu_level = cfg, cpu_level
        self.device = torch.device(device)
        aset = get_action_set(action_set)
        self.action_set = aset
        self.num_actions = aset.num_actions
        self.noop_index = aset.noop_index
        self.rules = FrameRules(cfg.agent_port, cfg.opponent_port, reward, max_frames)
        try:
            self.agent_character = melee.enums.Character[cfg.agent_character.upper()]
            self.opponent_character = melee.enums.Character[cfg.opponent_character.upper()]
            self.stage = melee.enums.Stage[cfg.stage.upper()]
        except KeyError as e:
            raise DolphinError(f"dolphin config names an unknown character or stage: {e.args[0]}") from None
        if console_factory is None:
            check_paths(cfg)
        self._console_factory = console_factory or self._dolphin_console
        self._controller_factory = controller_factory or (lambda console, port: melee.Controller(console, port))
        self.menus = menus
        self.max_restarts = max_restarts
        self.restarts = 0
        self.restart_log: list[str] = []
        self.menu_helper = melee.MenuHelper()
        self.prev_action = 0
        self.gamestate: Any = None
        self.console: Any = None
        self.launch: LaunchOptions | None = None
        self._start()

    # --- Dolphin process ---
    def _dolphin_console(self) -> Any:
        import melee  # noqa: PLC0415

        if self.launch is None:  # the build does not change between restarts: ask its version once
            self.launch = launch_options(self.cfg)
        return melee.Console(path=self.cfg.dolphin_path, blocking_input=True, tmp_home_directory=True,
                             fullscreen=False, save_replays=False, **self.launch.console)

    def _start(self) -> None:
        self.console = self._console_factory()
        self.controller = self._controller_factory(self.console, self.cfg.agent_port)
        self.cpu_controller = self._controller_factory(self.console, self.cfg.opponent_port)
        if getattr(self.console, "is_dolphin", False):
            self.console.run(iso_path=self.cfg.iso_path, **(self.launch.run if self.launch else {}))
            if not self.console.connect():
                raise DolphinError(f"could not connect to Dolphin at {self.cfg.dolphin_path}")
            for c in (self.controller, self.cpu_controller):
                if not c.connect():
                    raise DolphinError(f"could not plug a controller into port {c.port}")
        elif hasattr(self.console, "connect"):
            self.console.connect()
        self._last_game_frame = time.monotonic()

    def _restart(self, why: str) -> None:
        self.restarts += 1
        self.restart_log.append(why)
        log.warning("Dolphin %s; restarting (restart %d)", why, self.restarts)
        if self.restarts > self.max_restarts:
            raise DolphinError(f"Dolphin failed {self.restarts} times; last: {why}")
        try:
            if hasattr(self.console, "stop"):
                self.console.stop()
        except Exception:  # noqa: BLE001 (it is already dead)
            pass
        self._start()

    def _flush(self) -> None:
        # A live console flushes its registered controllers in step(); others flush here.
        registered = getattr(self.console, "controllers", [])
        for c in (self.controller, self.cpu_controller):
            if c not in registered:
                c.flush()

    def _next_game_frame(self) -> tuple[Any, bool]:
        """Step to the next in-game frame; returns it and whether a game was left on the way."""
        left_game = False
        while True:
            try:
                gs = self.console.step()
            except Exception as e:  # noqa: BLE001 (a broken pipe or socket from a dying Dolphin)
                gs, why = None, f"raised {type(e).__name__}: {e}"
            else:
                why = "stopped answering (no game state)"
            if gs is None:
                self._restart(why)
                left_game = True
                continue
            if in_game(gs) and self.rules.agent_port in gs.players and self.rules.opponent_port in gs.players:
                self._last_game_frame = time.monotonic()
                return gs, left_game
            left_game = True
            if time.monotonic() - self._last_game_frame > 180:
                self._restart("stuck in menus for 3 minutes")
                continue
            if self.menus:
                self.menu_helper.menu_helper_simple(gs, self.controller, self.agent_character, self.stage, "",
                                                    cpu_level=0, costume=0, autostart=False, swag=False)
                self.menu_helper.menu_helper_simple(gs, self.cpu_controller, self.opponent_character, self.stage, "",
                                                    cpu_level=self.cpu_level, costume=1, autostart=True, swag=False)
                self._flush()

    def _obs(self, gs: Any) -> np.ndarray:
        return encode_gamestate(gs, self.rules.agent_port, self.rules.opponent_port, self.prev_action,
                                self.num_actions)

    # --- the arena's API ---
    def reset(self) -> torch.Tensor:
        gs, _ = self._next_game_frame()
        self.gamestate = gs
        self.rules.start(gs)
        self.prev_action = 0
        return torch.as_tensor(self._obs(gs), device=self.device).unsqueeze(0)

    def step(self, actions: torch.Tensor) -> StepResult:
        a = int(torch.as_tensor(actions).view(-1)[0])
        if not 0 <= a < self.num_actions:
            raise ValueError(f"actions must be in [0, {self.num_actions})")
        frames = self.action_set.actions[a].frames
        noop = a == self.noop_index
        total = FrameResult(0.0, False, 0.0, 0.0, 0, 0, False, False)
        played = 0
        for frame in frames:
            apply_frame(self.controller, frame)
            self._flush()
            gs, left_game = self._next_game_frame()
            if left_game:  # the game ended (or Dolphin restarted) mid-episode: cut it here
                total.truncated = not total.terminal
                self.gamestate = gs
                break
            self.gamestate = gs
            r = self.rules.frame(gs, noop)
            played += 1
            total.reward += r.reward
            total.hit |= r.hit
            total.damage_taken += r.damage_taken
            total.damage_dealt += r.damage_dealt
            total.stocks_lost += r.stocks_lost
            total.stocks_taken += r.stocks_taken
            if r.terminal or r.truncated:
                total.terminal, total.truncated = r.terminal, r.truncated
                break
        self.prev_action = a
        done = total.terminal or total.truncated
        obs = self._obs(self.gamestate)
        final_obs = torch.as_tensor(obs, device=self.device).unsqueeze(0)
        info = step_info(ready=True, hit=total.hit, terminal=total.terminal, truncated=total.truncated,
                         frames=played, episode_frame=self.rules.episode_frame,
                         episode_return=self.rules.episode_return, damage_taken=total.damage_taken,
                         damage_dealt=total.damage_dealt, stocks_lost=total.stocks_lost,
                         stocks_taken=total.stocks_taken, final_obs=final_obs)
        if done:
            # The next episode starts on the next frame of the same (or a new) game.
            self.rules.start(self.gamestate)
            self.prev_action = 0
            obs = self._obs(self.gamestate)
        reward = torch.tensor([total.reward], dtype=torch.float32, device=self.device)
        return (torch.as_tensor(obs, device=self.device).unsqueeze(0), reward,
                torch.tensor([done], device=self.device), info)

    def step_async(self, actions: torch.Tensor) -> StepResult:
        """One Dolphin cannot run ahead of its decisions: ``step``, with the environment always ready."""
        return self.step(actions)

    def close(self) -> None:
        try:
            if self.console is not None and hasattr(self.console, "stop"):
                self.console.stop()
        except Exception:  # noqa: BLE001
            pass
