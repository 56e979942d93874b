"""`Arena`: B independent Fox-vs-Marth games on Final Destination, stepped in lockstep as tensors.

One ``step`` is one decision: every environment plays its chosen action's whole controller
sequence, frame by frame; an environment whose sequence (or episode) ends early is frozen for
the remaining frames of the call. ``step_async`` lets each environment decide on its own clock
(see :mod:`melee_agent.arena.async_step`). Finished episodes reset themselves. The arena is a
:class:`~melee_agent.envs.vecenv.VecEnv`.

``cpu_level`` is one level (every environment plays it) or a set of levels: each environment
then draws its CPU's level again at every episode reset (``level_weights``: optional relative
weights, one per level), and ``info.cpu_level`` says which level each episode was played against.
With ``spread_levels`` each environment keeps one level instead, environment ``i`` playing
``cpu_level[i % K]`` (equal episode counts per level: how evaluations sample a mix).
A one-level arena plays exactly the games it played before levels could mix.

Example::

    >>> import torch
    >>> env = Arena(num_envs=4, cpu_level=9, seed=0)
    >>> obs = env.reset(); obs.shape
    torch.Size([4, 27])
    >>> obs, reward, done, info = env.step(torch.zeros(4, dtype=torch.long))
    >>> info.frames.tolist(), info["hit"].dtype
    ([1, 1, 1, 1], torch.bool)
    >>> mixed = Arena(num_envs=4, cpu_level=[1, 5, 9], seed=0)
    >>> _ = mixed.reset(); mixed.cpu_levels.tolist()
    [5, 5, 5, 1]
"""

from __future__ import annotations

import dataclasses
from typing import Callable, Sequence

import torch

from melee_agent.envs.actions import get_action_set
from melee_agent.arena import episodes as storage
from melee_agent.arena.async_step import (FrameAndEnd, FrameConsts, MacroProgress, Totals, decision_info, frame_and_end,
                                          frame_end_and_reset, frame_async,
                                          ko_causes, macro_of, pads_frame)
from melee_agent.arena.compiled import cloned, compiled
from melee_agent.arena.cpu.levels import LevelMix, LevelTable, check_levels
from melee_agent.arena.env_state import AGENT, CPU, EnvState, where
from melee_agent.arena.fight.frame import FightConsts, check_cpu
from melee_agent.arena.fight.pads import Pads
from melee_agent.arena.fight.place import place as place_fighter
from melee_agent.arena.ports import DEFAULT_CHARACTERS, Opponents, character_table, check_characters
from melee_agent.arena.dodge.frame import intangible
from melee_agent.arena.stage_table import StageMix, StageTable, check_stages
from melee_agent.arena.stages import DEFAULT_STAGE
from melee_agent.arena.dodge.tables import build_tables
from melee_agent.arena.games import MAX_DELAY, resolve
from melee_agent.games import game_of
from melee_agent.envs.state import STATE_LAYOUT, get_layout, with_clock
from melee_agent.envs.vecenv import StepResult


class Arena:
    def __init__(self, num_envs: int, cpu_level: int | Sequence[int] = 9, device: str | torch.device = "cpu",
                 seed: int = 0, action_set: str | None = None, reward: str | None = None,
                 max_frames: int | None = None, compile: bool = False, level_weights: Sequence[float] | None = None,
                 spread_levels: bool = False, game: str = "dodge", delay_frames: int = 0, cpu: str = "designed",
                 characters: Sequence[str] = DEFAULT_CHARACTERS, state_layout: str = STATE_LAYOUT,
                 stage: str | Sequence[str] = DEFAULT_STAGE, stage_weights: Sequence[float] | None = None,
                 spread_stages: bool = False):
        if num_envs <= 0:
            raise ValueError(f"num_envs must be positive, got {num_envs}")
        setup = resolve(game, action_set, reward, max_frames)
        self.game, rules, action_set, reward, max_frames = (setup.game, setup.rules, setup.action_set, setup.reward,
                                                            setup.max_frames)
        if isinstance(delay_frames, bool) or not isinstance(delay_frames, int) or not 0 <= delay_frames <= MAX_DELAY:
            raise ValueError(f"delay_frames must be an int in [0, {MAX_DELAY}], got {delay_frames!r}")
        self.delay_frames = delay_frames
        #: The observation's layout (:data:`~melee_agent.envs.state.LAYOUTS`): where it shows no clock, a
        #: fight cut by its clock is truncated (bootstrapped), not terminal.
        self.layout = get_layout(state_layout)
        #: Episodes are whole games (the fight's state and rules) rather than dodging until hit.
        self.whole_games = game_of(self.game).whole_games
        if self.layout.shows_clock and not self.whole_games:
            raise ValueError(f"state_layout {state_layout!r} shows a fight's clock and stocks; the {self.game!r} game "
                             f"plays {STATE_LAYOUT!r}")
        check_cpu(cpu)
        #: Which CPU plays Marth: ``melee`` (Melee's own AI, cpu/melee.py, in both games) or ``designed``
        #: (fights: cpu/designed.py; dodging: cpu/levels.py CPU_LEVELS on the dodging game's earlier frame).
        self.cpu = cpu
        #: The game is played on the fight's engine (fights, and the dodging rules against Melee's CPU: one Fox,
        #: one Marth, one CPU), else on the dodging game's earlier frame (arena/dodge/frame.py, ``designed``).
        self.fight_engine = game_of(self.game).on_fight_engine(cpu)
        #: The character on each port (DESIGN.md "Ports"); other than Fox vs Marth, fights only.
        self.characters = check_characters(characters)
        if self.characters != DEFAULT_CHARACTERS and not self.whole_games:
            raise ValueError(f"characters={list(self.characters)} plays fights (game='fight'); the dodging game is "
                             "Fox against Marth")
        #: Port 1's controllers other than the CPU (:meth:`set_opponents`); None: the CPU everywhere.
        self.opponents: Opponents | None = None
        self.device = torch.device(device)
        #: The stage(s) each game is drawn from (DESIGN.md "Stages"), as ``cpu_level`` and ``level_weights`` are: one
        #: name, or several with ``stage_weights`` (``spread_stages``: environment ``i`` keeps ``stage[i % K]``).
        self.stages = check_stages(stage)
        if self.stages != (DEFAULT_STAGE,) and not self.fight_engine:
            raise ValueError(f"stage={list(self.stages)} plays on the fight's engine; this arena plays the dodging game's "
                             f"earlier frame (game={game!r}, cpu={cpu!r}), on Final Destination only")
        stage_mix = StageMix.of(self.stages, stage_weights, self.device, spread=spread_stages)
        levels = check_levels(cpu_level)  # raises on a level outside 1-9
        mix = LevelMix.of(levels, level_weights, self.device, spread=spread_levels)
        self.num_envs = num_envs
        #: The one level every environment plays (an int), or the set drawn from (a tuple).
        self.cpu_level: int | tuple[int, ...] = levels[0] if isinstance(cpu_level, int) else levels
        self.seed = int(seed)
        self.compiled = bool(compile)
        self._frame_async = compiled(frame_async, self.device) if compile else frame_async
        self._finish_decision = compiled(storage.finish_decision, self.device) if compile else storage.finish_decision
        self._frame_and_end = compiled(frame_and_end, self.device) if compile else None
        self._reset_finished = compiled(storage.reset_finished, self.device) if compile else storage.reset_finished
        self._reset_compiled = False
        self._reset_rows = compiled(storage.reset_rows, self.device, mutates=True) if compile else storage.reset_rows
        #: The most finished games a compiled frame resets row by row (more: the whole-batch reset). 0 under
        #: 32 games, where resetting the whole batch costs no more and a second graph would only add compile time.
        self._reset_rows_max = num_envs // 16
        #: Dodging games (ended at the first hit, so on most frames) reset in the frame's own graph, this many a
        #: frame at most (:func:`~.async_step.frame_end_and_reset`); fights in a second graph (:meth:`_reset_compiled_games`).
        self._rows_in_frame = 0 if game_of(self.game).whole_games else self._reset_rows_max
        self._frame_end_reset = compiled(frame_end_and_reset, self.device) if compile and self._rows_in_frame else None
        self.action_set = action_set
        self.reward_kind = reward
        self.max_frames = max_frames
        aset = get_action_set(action_set)
        self.num_actions = aset.num_actions
        self.noop_index = aset.noop_index
        self._lengths = torch.as_tensor(aset.lengths, device=self.device)
        self.T = build_tables(self.device)
        # [button, action, frame]: a frame's controller state is one row per button (contiguous).
        table = torch.as_tensor(aset.table, device=self.device).permute(2, 0, 1).contiguous()
        self._consts = FrameConsts(
            table=table,
            lengths=self._lengths, noop_index=self.noop_index, tables=self.T,
            levels=LevelTable.build(self.device), mix=mix,  # the designed dodging CPU's (its frame's only)
            seed=torch.tensor(self.seed, dtype=torch.long, device=self.device),
            spawn_x=torch.tensor([-40.0, 40.0], device=self.device),  # guess: respawn spots
            untouchable=self.reward_kind == "untouchable", max_frames=self.max_frames, timed=rules.timed,
            clock_in_state=self.layout.shows_clock,
            delay=delay_frames, neutral=table[:, self.noop_index, 0].clone(),
            fight=self._fight_consts(num_envs, cpu), stages=stage_mix,
            remap=None if aset.remap is None else torch.as_tensor(aset.remap_table, device=self.device))
        #: Every game's state by name (:class:`~melee_agent.arena.env_state.EnvState`); each call
        #: replaces it with the next one (tests and tools may too, between calls).
        with torch.inference_mode():  # as every later state is: a compiled frame specializes on it
            state = EnvState.zeros(num_envs, self.device, delay_frames, table.shape[0],
                                   game_of(self.game).extra_state(num_envs, self.device, cpu))
            self.state = state._replace(game=state.game._replace(
                env_id=torch.arange(num_envs, device=self.device, dtype=torch.float32),
                episode=torch.full((num_envs,), -1.0, device=self.device),
                cpu_level=torch.full((num_envs,), float(levels[0]), device=self.device)))
        self._all = torch.ones(num_envs, dtype=torch.bool, device=self.device)
        self._macro = MacroProgress.fresh(num_envs, self.device)
        #: Called with the state after every frame (``step`` and ``step_async``), where not None:
        #: how a viewer records a game frame by frame (it costs one Python call per frame).
        self.on_frame: Callable[[EnvState], None] | None = None

    def _fight_consts(self, num_envs: int, cpu: str) -> FightConsts | None:
        if not self.fight_engine:
            return None
        fc = FightConsts.build(self.device, num_envs, cpu)
        table = dataclasses.replace(fc.table, stages=StageTable.of(self.stages, self.device))
        return dataclasses.replace(fc, table=character_table(table, self.characters))

    def set_opponents(self, opponents: Opponents | None) -> None:
        """Port 1 played by ``opponents`` in the environments they hold (the CPU in the rest); None: the CPU
        everywhere. Fights on the eager arena only."""
        if opponents is not None:
            self._fight_only("a model opponent")
            if self.compiled:
                raise ValueError("opponents play on the eager arena (compile=False): their forward passes run "
                                 "between frames")
            if opponents.num_envs != self.num_envs:
                raise ValueError(f"the opponents hold {opponents.num_envs} environments, the arena {self.num_envs}")
        self.opponents = opponents
        self._check_port1()

    def _check_port1(self) -> None:
        if self.characters[1] != "marth" and (self.opponents is None or not bool(self.opponents.mask.all())):
            raise ValueError(f"the CPU plays Marth only: with {self.characters[1]!r} on port 1 every environment "
                             "needs an opponent (Arena.set_opponents)")

    def _opponent(self, active: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor] | None:
        """Port 1's controller for the next frame where opponents play (their macros move on where ``active``)."""
        return None if self.opponents is None else self.opponents.controls(self, active)

    def _opponents_restart(self, done: torch.Tensor) -> None:
        if self.opponents is not None:
            self.opponents.restart(done)

    def set_level_weights(self, weights: Sequence[float]) -> None:
        """New relative weights for the levels each game's CPU is drawn from (one per level of ``cpu_level``), from
        the next game on (the league's PFSP); games under way keep their level."""
        mix = self._consts.mix
        new = LevelMix.of([int(v) for v in mix.levels.tolist()], weights, self.device, spread=mix.spread)
        with torch.no_grad():  # in place: a compiled frame keeps reading the same tensor (no recompile)
            mix.cdf.copy_(new.cdf)

    @property
    def stage_names(self) -> tuple[str, ...]:
        """``[B]``: the stage each environment's current game is on, by name."""
        return tuple(self.stages[i] for i in self.state.game.stage.long().tolist())

    @property
    def cpu_levels(self) -> torch.Tensor:
        """``[B]`` int64: the CPU level each environment's current episode is played against."""
        return self.state.game.cpu_level.long()

    # --- state ---
    def observe(self, previous_action: torch.Tensor | None = None) -> torch.Tensor:
        """``[B, 27]`` float32: each environment's state vector as the agent sees it (docs/design.md, "State")."""
        prev = self.state.game.previous_action if previous_action is None else previous_action
        obs = storage.observe(self.state.players, prev, self.T, self.num_actions)
        return self.in_layout(obs, self.state.game.episode_frame, self.state.players.stock)

    def in_layout(self, obs: torch.Tensor, episode_frame: torch.Tensor, stock: torch.Tensor,
                  port: int = AGENT) -> torch.Tensor:
        """The 27 floats ``obs`` in the arena's layout: with the fight layout, the time left on the game's clock
        (``max_frames - episode_frame``) and both players' stocks (``stock`` ``[B, 2]``, ``port``'s first) after them."""
        return with_clock(obs, self.layout, self.max_frames - episode_frame, stock[:, port], stock[:, 1 - port])

    def _in_layout(self, end: storage.DecisionEnd) -> storage.DecisionEnd:
        """``end``'s observations in the arena's layout: ``final`` on the clock and stocks before any reset,
        ``next`` on those after it (the same where no game ended)."""
        if not self.layout.shows_clock:
            return end
        g, ps = end.state.game, end.state.players
        return end._replace(final=self.in_layout(end.final, end.episode_frame, end.stock),
                            next=self.in_layout(end.next, g.episode_frame, ps.stock))

    def players(self) -> dict[str, dict[str, torch.Tensor]]:
        """Raw per-player fields named as libmelee's PlayerState (plus stock), for inspection."""
        names = ("position_x", "position_y", "speed_x", "speed_y", "action", "action_frame", "on_ground",
                 "jumps_left", "shield_strength", "hitstun_frames_left", "percent", "stock")
        ps = self.state.players
        out = {}
        for who, p in (("agent", AGENT), ("opponent", CPU)):
            fields = {k: getattr(ps, k)[:, p].clone() for k in names}
            fields["facing"] = ps.facing[:, p] > 0
            fields["invulnerable"] = intangible(ps, self.T)[:, p]
            out[who] = fields
        return out

    @torch.inference_mode()
    def reset(self) -> torch.Tensor:
        """Start a new episode in every environment (from the arena's seed); returns the first observation."""
        c = self._consts
        self.state = storage.reset_envs(self.state, self._all, c.seed, c.mix, c.neutral, c.stages)
        self._macro = MacroProgress.fresh(self.num_envs, self.device)  # every environment chooses next
        self._opponents_restart(self._all)
        if self.whole_games:
            self._check_port1()
        return self.observe()

    def close(self) -> None:
        """Nothing to release (the arena holds only tensors); here so every environment has it."""

    # --- stepping ---
    def _actions(self, actions: torch.Tensor, read: torch.Tensor) -> torch.Tensor:
        """``actions`` as ``[B]`` int64 on the device; those that will be read must be in range."""
        actions = torch.as_tensor(actions, device=self.device).long().view(-1)
        if actions.shape[0] != self.num_envs:
            raise ValueError(f"expected {self.num_envs} actions, got {actions.shape[0]}")
        if bool((((actions < 0) | (actions >= self.num_actions)) & read).any()):
            raise ValueError(f"actions must be in [0, {self.num_actions})")
        return actions

    def _finish(self, ready: torch.Tensor, done: torch.Tensor, action: torch.Tensor, acc: Totals,
                terminal: torch.Tensor, truncated: torch.Tensor) -> StepResult:
        c = self._consts
        ko_cause = ko_causes(self.state)  # before a finished game resets
        out = self._finish_decision(self.state, ready, done, action.float(), acc.reward, self.T, self.num_actions,
                                    c.seed, c.mix, c.neutral, self.compiled, c.stages)
        out = self._in_layout(out)
        self.state = out.state
        return out.next, acc.reward, done, decision_info(out, ready, done, acc, terminal, truncated, ko_cause, c)

    @torch.inference_mode()
    def step(self, actions: torch.Tensor) -> StepResult:
        """Play one macro in every environment: ``actions`` is ``[B]`` action indices into the action set.

        Each environment plays its whole macro (the shorter ones wait for the longest); returns
        ``(obs, reward, done, info)`` for the macro. Finished episodes reset themselves: ``obs`` is then the new
        episode's first state and ``info.final_obs`` the last one's.
        """
        actions = self._actions(actions, self._all)
        lens = self._lengths[macro_of(actions, self.state, self._consts)]
        # Every environment plays its whole macro: frame by frame through the same frame_async as
        # step_async, with environments whose macro is over frozen until the longest one ends.
        active = self._all
        start = self._all
        done = torch.zeros_like(active)
        terminal, truncated = done.clone(), done.clone()
        acc = Totals.zeros(self.num_envs, self.device)
        cur, mf = actions, torch.zeros_like(actions)
        for _ in range(int(lens.max())):
            opp = self._opponent(active)
            f = (self._frame_async(self.state, start, actions, acc, cur, mf, self._consts) if opp is None else
                 self._frame_async(self.state, start, actions, acc, cur, mf, self._consts, opp))
            self.state = where(active, f.state, self.state)
            if self.on_frame is not None:
                self.on_frame(self.state)
            acc = Totals(*(torch.where(active, n, o) for n, o in zip(f.totals, acc)))
            cur, mf = f.action, f.frame
            terminal |= f.terminal & active
            truncated |= f.truncated & active
            done |= f.done & active
            active = active & ~f.ready
            start = torch.zeros_like(start)
        self._opponents_restart(done)
        return self._finish(self._all, done, actions, acc, terminal, truncated)

    def _reset_compiled_games(self, end: storage.DecisionEnd, done: torch.Tensor, ended: int,
                              fe: FrameAndEnd) -> storage.DecisionEnd:
        """A compiled arena's reset of the ``ended`` games where ``done`` holds. Up to :attr:`_reset_rows_max` of
        them (a few dozen of 4,096 a frame, when a level-9 CPU hits a standing Fox every second or so) are reset in
        place, row by row (:func:`~melee_agent.arena.episodes.reset_rows`); more, or the first call, through the
        whole-batch graph (:func:`~melee_agent.arena.episodes.reset_finished`), which the first call compiles now,
        on a state the frame's graph made, rather than at the first game's end. Both make the same games."""
        c = self._consts
        consts = (c.seed, c.mix, c.neutral, self.T, self.num_actions, c.stages)
        if not self._reset_compiled and self._reset_rows_max:  # both graphs compile (or load) now, out of timed loops
            self._reset_rows(cloned(end), torch.zeros(self._reset_rows_max, dtype=torch.long, device=self.device), *consts)
        self._reset_compiled = True
        if ended == 0 or ended > self._reset_rows_max:
            return self._reset_finished(end, done, *consts)
        # A fixed count, so one graph serves every frame: padded by repeating the first ended game, which writes the
        # same fresh values again.
        rows = done.nonzero().view(-1)
        rows = torch.cat((rows, rows[:1].expand(self._reset_rows_max - ended)))
        # What the frame and the decision report (its info, the observation before the reset) must not change with
        # the state.
        reported = fe._replace(step=fe.step._replace(state=None), end=end._replace(state=None))
        end = end._replace(state=storage.distinct_leaves(end.state, reported))
        nxt = self._reset_rows(end, rows, *consts)
        return end._replace(next=nxt)

    def _reset_left(self, end: storage.DecisionEnd, left: torch.Tensor) -> storage.DecisionEnd:
        """The games a frame's graph ended but did not reset (more ended than its rows), through the whole-batch
        graph; the first call compiles it (or loads it) whatever ``left`` says, out of timed loops."""
        c = self._consts
        self._reset_compiled = True
        reset = self._reset_finished(end._replace(final=end.next), left, c.seed, c.mix, c.neutral, self.T,
                                     self.num_actions, c.stages)
        return end._replace(state=reset.state, next=reset.next)

    # --- raw controller frames (docs/design.md "Motion: raw controller frames") ---
    def _fight_only(self, what: str) -> None:
        if not self.whole_games:
            raise ValueError(f"{what} plays fights only (game='fight'), not {self.game!r}")

    def _fight_engine_only(self, what: str) -> None:
        if not self.fight_engine:
            raise ValueError(f"{what} plays on the fight's engine (game='fight', or cpu='melee'), not the dodging "
                             f"game's designed CPU (cpu={self.cpu!r})")

    @torch.inference_mode()
    def step_pads(self, pads: Pads) -> StepResult:
        """Play one frame from both ports' raw controller frames (:class:`~.fight.pads.Pads`, ``[B, 2]`` each) and
        return what :meth:`step` returns for one frame (a one-frame decision: the macros' bookkeeping is bypassed,
        the CPU too; no input delay: ``pads`` is what the game reads on this frame)."""
        self._fight_engine_only("step_pads")
        raw = Pads(*(torch.as_tensor(v, device=self.device).expand(self.num_envs, 2) for v in pads))
        raw = raw._replace(**{k: getattr(raw, k).bool() for k in ("a", "b", "x", "y", "z", "l_button", "r_button")})
        raw = raw._replace(**{k: getattr(raw, k).float() for k in ("main_x", "main_y", "c_x", "c_y", "l", "r")})
        acc = Totals.zeros(self.num_envs, self.device)
        cur = torch.full((self.num_envs,), self.noop_index, dtype=torch.long, device=self.device)
        f = pads_frame(self.state, raw, acc, cur, torch.zeros_like(cur), self._consts)
        self.state = f.state
        if self.on_frame is not None:
            self.on_frame(self.state)
        self._macro = MacroProgress.fresh(self.num_envs, self.device)
        return self._finish(self._all, f.done, cur, f.totals, f.terminal, f.truncated)

    @torch.inference_mode()
    def place(self, port: int, env: int | Sequence[int] | torch.Tensor | None = None, **fields) -> None:
        """Set player ``port``'s fighter (0 Fox, 1 Marth) in environment ``env`` (an index, indices, or None for
        all) from a replay frame's ``PlayerState``-named fields (:mod:`~.fight.place`); each field a number or
        one value per placed environment."""
        self._fight_engine_only("place")
        if port not in (AGENT, CPU):
            raise ValueError(f"port must be 0 (Fox) or 1 (Marth), got {port!r}")
        idx = torch.arange(self.num_envs, device=self.device) if env is None else \
            torch.as_tensor(env, dtype=torch.long, device=self.device).view(-1)
        self.state = place_fighter(self.state, self._consts.fight.table, port, idx, fields)

    @torch.inference_mode()
    def step_async(self, actions: torch.Tensor) -> StepResult:
        """Advance until some environment is ready; returns ``(obs, reward, done, info)``.

        ``info.ready`` marks the environments whose macro (or episode) ended: for them ``reward``,
        ``done`` and the other info values describe the whole macro, as ``step`` would. For the
        others they are partial and must be ignored. Actions are read only where the previous call
        (or ``reset``) left an environment ready.
        """
        start = self._macro.ready
        actions = self._actions(actions, start)
        acc, cur, mf = self._macro.totals, self._macro.action, self._macro.frame
        if self._frame_and_end is not None and self.on_frame is None:
            while True:  # compiled: each frame and the end of the decisions it finishes in one call
                if self._frame_end_reset is not None:
                    fe, left = self._frame_end_reset(self.state, start, actions, acc, cur, mf, self._consts, self.T,
                                                     self.num_actions, self._rows_in_frame)
                else:
                    fe = self._frame_and_end(self.state, start, actions, acc, cur, mf, self._consts, self.T,
                                             self.num_actions)
                f = fe.step
                self.state, acc, cur, mf = f.state, f.totals, f.action, f.frame  # end.state (see frame_and_end)
                if bool(f.ready.any()):
                    break
                start = torch.zeros_like(start)
            end = fe.end
            # Only the last frame can have ended a game (it left someone ready). The first call compiles the reset
            # graphs whatever ``done`` says (see _reset_compiled_games).
            if self._frame_end_reset is not None:
                if not self._reset_compiled or bool(left.any()):
                    end = self._reset_left(end, left)
            else:
                ended = int(f.done.sum())
                if not self._reset_compiled or ended:
                    end = self._reset_compiled_games(end, f.done, ended, fe)
            self._macro = MacroProgress(f.ready, cur, mf, acc)
            self.state = end.state
            end = self._in_layout(end)
            return end.next, acc.reward, f.done, fe.info._replace(final_obs=end.final)
        while True:
            opp = self._opponent(self._all)
            f = (self._frame_async(self.state, start, actions, acc, cur, mf, self._consts) if opp is None else
                 self._frame_async(self.state, start, actions, acc, cur, mf, self._consts, opp))
            self.state, acc, cur, mf = f.state, f.totals, f.action, f.frame
            if self.on_frame is not None:
                self.on_frame(self.state)
            if bool(f.ready.any()):
                break
            start = torch.zeros_like(start)  # later frames continue the macros
        self._macro = MacroProgress(f.ready, cur, mf, acc)
        self._opponents_restart(f.done)
        return self._finish(f.ready, f.done, cur, acc, f.terminal, f.truncated)
