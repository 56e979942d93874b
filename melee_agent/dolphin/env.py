"""Real Melee behind the arena's environment API: one game in Dolphin, ``num_envs`` = 1.

Each frame libmelee reads is encoded with ``state.py``; each action's controller states are
played frame by frame; rewards, hits and episode ends come from
:class:`melee_agent.envs.rewards.GameStateRules` (the arena's rules). Everything about keeping Dolphin
alive and in a game is the :class:`~melee_agent.dolphin.supervisor.Supervisor`'s.

When a game ends or Dolphin restarts mid-episode the episode is cut (truncated), and its
``final_obs`` is the last frame of the game that ended; the next observation is the new game's.

An episode that ends on a game's deciding frame (a player's last stock lost) is followed by the
next game's first frame, never by a new episode in the game that is over; and an episode with no
frame of its own when its game ends (it began on that game's last frame) is not an episode: it
starts again on the new game's first frame, where the decision is played.

``game="fight"`` (docs/design.md "Fights"): the episode is the whole game, ending on the frame a
player loses their last stock (GAME!, terminal) or on which Melee's 8:00 clock runs out (frame 28,800,
the timer at 0:00), and the next episode starts on the next game's first frame. A game Melee itself ends
first (TIME! at another time limit, and the sudden death that follows tied stocks) also ends its
episode, on the last frame it showed. The clock's ends are terminal where the state layout shows the
time left, else truncated (bootstrapped), with ``game_over`` either way; a Dolphin restart cuts a fight
(truncated, no ``game_over``). ``info`` carries the arena's ``agent_stocks``, ``opponent_stocks``,
``agent_percent``, ``opponent_percent`` (the episode's last frame) and ``game_over``, so
:mod:`melee_agent.report.evaluate` counts wins, losses and draws as it does for the arena.

``delay_frames`` (``env.delay_frames``, docs/design.md "Input delay"): each frame's controller state
reaches Dolphin that many frames after the frame it was chosen on, as in the arena: a queue of the
states in flight, all neutral (the noop's) at each game's start, so a game's first ``delay_frames``
frames play nothing the agent chose. An episode that starts inside the same game (the dodging game's
next one, after a hit or the frame limit) keeps the states in flight: they still reach the game.

Example (needs Slippi Dolphin and an NTSC 1.02 ISO)::

    from melee_agent.config import load_config
    cfg = load_config("dolphin", ["dolphin.dolphin_path=/opt/slippi", "dolphin.iso_path=/isos/melee.iso"])
    env = DolphinEnv(cfg.dolphin, cpu_level=9, action_set="untouchable", reward="untouchable", max_frames=3600)
    obs = env.reset()                                  # [1, 27]
    obs, reward, done, info = env.step(torch.tensor([1]))  # one spot dodge (22 frames)
    fight = DolphinEnv(cfg.dolphin, cpu_level=9, game="fight")  # whole games: reward "fight", Melee's clock
"""

from __future__ import annotations

from collections import deque
from typing import Any, Callable, Sequence

import numpy as np
import torch

from melee_agent.envs.actions import ControllerFrame, apply_frame, get_action_set
from melee_agent.config import DolphinConfig
from melee_agent.dolphin.launch import check_paths, free_udp_port, launch_options
from melee_agent.dolphin.session import Session, start_dolphin
from melee_agent.dolphin.supervisor import Supervisor
from melee_agent.envs.rewards import FrameResult, GameStateRules
from melee_agent.envs.state import STATE_LAYOUT, encode_gamestate, get_layout
from melee_agent.envs.vecenv import StepResult, step_info
from melee_agent.games import game_of


FIGHT_STOCKS = 4  # Melee's standard rules (docs/design.md "Fights")


class DolphinEnv:
    """One Melee game in Dolphin with the arena's API (``num_envs`` = 1)."""

    num_envs = 1

    def __init__(self, cfg: DolphinConfig, cpu_level: int = 9, action_set: str | None = None,
                 reward: str | None = None, max_frames: int | None = None, device: str | torch.device = "cpu",
                 session_factory: Callable[[], Session] | None = None, menus: bool = True, game: str = "dodge",
                 delay_frames: int = 0, state_layout: str = STATE_LAYOUT,
                 stage: str | Sequence[str] | None = None, stage_weights: Sequence[float] | None = None,
                 seed: int = 0):
        from melee_agent.arena.games import MAX_DELAY, resolve  # noqa: PLC0415 (the games' defaults, as the arena's)

        if not 1 <= cpu_level <= 9:
            raise ValueError(f"cpu_level must be 1-9, got {cpu_level}")
        if isinstance(delay_frames, bool) or not isinstance(delay_frames, int) or not 0 <= delay_frames <= MAX_DELAY:
            raise ValueError(f"delay_frames must be an int in [0, {MAX_DELAY}], got {delay_frames!r}")
        setup = resolve(game, action_set, reward, max_frames)
        self.game, rules, action_set, reward, max_frames = (setup.game, setup.rules, setup.action_set, setup.reward,
                                                            setup.max_frames)
        #: Episodes are whole games (stocks and a clock) rather than dodging until hit.
        self.whole_games = game_of(self.game).whole_games
        self.cfg, self.cpu_level = cfg, cpu_level
        self.device = torch.device(device)
        aset = get_action_set(action_set)
        self.action_set = aset
        self.num_actions = aset.num_actions
        self.noop_index = aset.noop_index
        #: The observation's layout: where it shows no clock, a game cut by its clock is truncated, not terminal.
        self.layout = get_layout(state_layout)
        if self.layout.shows_clock and not self.whole_games:
            raise ValueError(f"state_layout {state_layout!r} shows a fight's clock and stocks; the {self.game!r} game "
                             f"plays {STATE_LAYOUT!r}")
        self.rules = GameStateRules(cfg.agent_port, cfg.opponent_port, reward, max_frames, timed=rules.timed,
                                    clock_in_state=self.layout.shows_clock)
        self.max_frames = max_frames
        if session_factory is None:
            check_paths(cfg)
            launch = launch_options(cfg)  # the build does not change between restarts: ask once
            session_factory = lambda: start_dolphin(cfg, launch, free_udp_port())  # noqa: E731
        # A fight is a game of Melee's standard rules: every game must start with 4 stocks each.
        # Each game's stage is drawn from env.stage's (by its weights) as the menus reach the stage select screen;
        # None: cfg.stage (dolphin.stage, its older name), else Final Destination.
        stages = None if stage is None else [stage] if isinstance(stage, str) else list(stage)
        self.supervisor = Supervisor(cfg, cpu_level, session_factory, menus=menus,
                                     stocks=FIGHT_STOCKS if self.whole_games else None, stages=stages,
                                     stage_weights=stage_weights, seed=seed)
        self.prev_action = 0
        self.gamestate: Any = None
        self.delay_frames = delay_frames
        self._neutral = aset.actions[aset.noop_index].frames[0]
        #: The controller states chosen but not yet played (input delay), the oldest first.
        self.in_flight: deque[ControllerFrame] = deque()

    @property
    def restarts(self) -> int:
        return self.supervisor.restarts

    @property
    def controller(self) -> Any:
        return self.supervisor.session.controller

    def _obs(self, gs: Any, prev_action: int) -> torch.Tensor:
        o = encode_gamestate(gs, self.rules.agent_port, self.rules.opponent_port, prev_action, self.num_actions,
                             self.layout.name, self.max_frames)
        return torch.as_tensor(np.asarray(o), device=self.device).unsqueeze(0)

    def reset(self) -> torch.Tensor:
        gs, _ = self.supervisor.next_game_frame()
        self.gamestate = gs
        self._start_episode(gs)
        self.prev_action = 0
        return self._obs(gs, 0)

    def _start_episode(self, gs: Any, same_game: bool = False) -> None:
        """A new episode from this frame: the rules start over; in a new game nothing is in flight yet."""
        self.rules.start(gs)
        if not same_game:
            self.in_flight = deque([self._neutral] * self.delay_frames)

    def _to_play(self, frame: ControllerFrame) -> ControllerFrame:
        """The controller state Dolphin gets this frame: ``frame`` itself, or under input delay the one
        chosen ``delay_frames`` frames ago (``frame`` joins the queue)."""
        if not self.delay_frames:
            return frame
        self.in_flight.append(frame)
        return self.in_flight.popleft()

    def step(self, actions: torch.Tensor) -> StepResult:
        a = int(torch.as_tensor(actions).view(-1)[0])
        if not 0 <= a < self.num_actions:
            raise ValueError(f"actions must be in [0, {self.num_actions})")
        noop = a == self.noop_index
        total = FrameResult(0.0, False, 0.0, 0.0, 0, 0, False, False)
        played = 0
        new_game = None
        ended_by_melee = False  # a fight's game that Melee ended (not a restart) before its frames said so
        # The macro this decision plays: its own, or after a shine the paper's post-shine one (untouchable-paper).
        frames = self.action_set.macro(a, self.prev_action).frames
        i = 0
        while i < len(frames):
            apply_frame(self.supervisor.session.controller, self._to_play(frames[i]))
            self.supervisor.session.flush_unregistered()
            gs, left_game = self.supervisor.next_game_frame()
            if left_game and self.rules.episode_frame == 0:
                # The episode began on the last frame of a game that ended (or of a Dolphin that was
                # restarted) and has no frame of its own: it is no episode. Cutting it would report
                # a phantom one (0 frames, never hit) whose row holds an action never played, so it
                # starts again on the new game's first frame and the decision is played there.
                self.gamestate = gs
                self._start_episode(gs)
                i = 0
                continue
            if left_game:  # the game ended (or Dolphin restarted) mid-episode: cut it here
                if self.rules.timed and self.supervisor.left_by == "melee":
                    # A fight whose game Melee ended by its own rules (TIME! at its own time limit, or
                    # into sudden death): the game is over, on the last frame it showed. Its clock
                    # ended it: terminal where the state shows the clock, else a cut (bootstrapped).
                    ended_by_melee = True
                    total.terminal = self.layout.shows_clock
                    total.truncated = not total.terminal
                else:
                    total.truncated = not total.terminal
                new_game = gs
                break
            self.gamestate = gs
            r = self.rules.frame(gs, noop)
            played += 1
            i += 1
            total.reward += r.reward
            total.hit |= r.hit
            total.damage_taken += r.damage_taken
            total.damage_dealt += r.damage_dealt
            total.stocks_lost += r.stocks_lost
            total.stocks_taken += r.stocks_taken
            if r.terminal or r.truncated:
                total.terminal, total.truncated = r.terminal, r.truncated
                break
        done = total.terminal or total.truncated
        final_obs = self._obs(self.gamestate, a)  # the last frame of this episode, in its game
        # As the arena: the game is over where a player has no stock left or the clock ran out
        # (a fight), or, in a fight, where Melee ended it; a restart's cut is no game's end.
        decided = self.rules.game_decided(self.gamestate)
        game_over = done and (decided or self.rules.time_up(self.gamestate) or ended_by_melee)
        a_stocks, o_stocks, a_pct, o_pct = self.rules.score(self.gamestate)
        info = step_info(ready=True, hit=total.hit, terminal=total.terminal, truncated=total.truncated,
                         frames=played, episode_frame=self.rules.episode_frame,
                         episode_return=self.rules.episode_return, damage_taken=total.damage_taken,
                         damage_dealt=total.damage_dealt, stocks_lost=total.stocks_lost,
                         stocks_taken=total.stocks_taken, final_obs=final_obs, cpu_level=self.cpu_level,
                         agent_stocks=a_stocks, opponent_stocks=o_stocks, agent_percent=a_pct,
                         opponent_percent=o_pct, game_over=game_over)
        if done:
            if new_game is None and (decided or self.rules.timed):
                # The game is over (a fight's episode is its game): the next episode starts in the next one.
                new_game = self._next_game()
            # The next episode starts on the next frame: of this game, or of the new one.
            if new_game is not None:
                self.gamestate = new_game
            self._start_episode(self.gamestate, same_game=new_game is None)
            self.prev_action = 0
            obs = self._obs(self.gamestate, 0)
        else:
            self.prev_action = a
            obs = final_obs
        reward = torch.tensor([total.reward], dtype=torch.float32, device=self.device)
        return obs, reward, torch.tensor([done], device=self.device), info

    def _next_game(self) -> Any:
        """The first frame of the next game, past whatever the ended one still shows (controller neutral)."""
        while True:
            self.supervisor.session.controller.release_all()
            self.supervisor.session.flush_unregistered()
            gs, left_game = self.supervisor.next_game_frame()
            if left_game:
                return gs

    def step_async(self, actions: torch.Tensor) -> StepResult:
        """One Dolphin cannot run ahead of its decisions: ``step``, with the environment always ready."""
        return self.step(actions)

    def stats(self) -> dict[str, int]:
        """Counters for the worker's segment stats (``dolphin_restarts`` is TensorBoard's ``workers/``)."""
        return {"dolphin_restarts": self.supervisor.restarts, "dolphin_games": self.supervisor.games,
                "dolphin_setup_mismatches": len(self.supervisor.setup_mismatches)}

    def close(self) -> None:
        self.supervisor.close()
