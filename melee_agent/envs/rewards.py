"""Reward and episode rules, one copy for the arena and the Dolphin loop (torch tensors, any B).

``untouchable`` (Dilipkumar et al. 2017): +1/60 for every frame the agent spends in STANDING
during a noop; the episode ends (terminal) the moment the agent is hit, i.e. it takes damage or
loses a stock, and is cut off (not terminal) after ``max_frames`` (3,600: one minute).
``damage``: ``0.01 * (dealt - taken) + (stocks taken - stocks lost)`` per frame; the episode ends
with the game (a player out of stocks), and is also cut off at the frame limit.

A whole game (a fight) also ends when its clock runs out. That end is terminal only where the
state shows the time left (a layout with the clock, ``clock_in_state``): in a state without it,
the same state is met mid-game with the game going on, so its value cannot be 0 at the clock and
the bootstrapped one elsewhere; the clock's end is then a cut (truncated, bootstrapped), as
Pardo et al., "Time Limits in Reinforcement Learning" (ICML 2018), prescribe. Losing the last
stock is terminal either way.

Example::

    >>> import torch
    >>> t = lambda *v: torch.tensor(v)
    >>> out = frame_outcome(True, agent_action=t(14, 14), is_noop=t(True, True), taken=t(0.0, 9.0),
    ...                     dealt=t(0.0, 0.0), lost=t(0.0, 0.0), took=t(0.0, 0.0), agent_stock=t(4.0, 4.0),
    ...                     opponent_stock=t(4.0, 4.0), episode_frame=t(10.0, 10.0), max_frames=3600)
    >>> out.reward, out.terminal.tolist()
    (tensor([0.0167, 0.0167]), [False, True])
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

import torch
from melee.enums import Action

REWARDS = ("untouchable", "damage", "fight")
MAX_FRAMES = 3_600  # one minute at 60 frames per second
GAME_FRAMES = 28_800  # 8:00 at 60 frames per second: Melee's standard time limit (docs/design.md "Fights")
STANDING = Action.STANDING.value


def reached_limit(truncated: torch.Tensor, episode_frame: torch.Tensor, max_frames: int) -> torch.Tensor:
    """Episodes cut by the frame limit, not by a game's end or a Dolphin restart (``[B]`` bool).

    Only these can be "untouched": the paper's metric is surviving the whole minute, and an
    episode a game's end cut short proved nothing of the kind.
    """
    return truncated & (episode_frame >= max_frames)


def check_reward(name: str) -> str:
    if name not in REWARDS:
        raise ValueError(f"unknown reward {name!r}; known: {', '.join(REWARDS)}")
    return name


class FrameOutcome(NamedTuple):
    reward: torch.Tensor  # float32
    hit: torch.Tensor  # bool: the agent took damage or lost a stock this frame
    terminal: torch.Tensor  # bool: the episode ends by its rules
    truncated: torch.Tensor  # bool: cut at the frame limit (never also terminal)


def standing_noop_reward(agent_action: torch.Tensor, is_noop: torch.Tensor) -> torch.Tensor:
    """``untouchable``: 1/60 where the agent stands during a noop."""
    return ((agent_action == STANDING) & is_noop).to(torch.float32) / 60.0


def damage_reward(dealt: torch.Tensor, taken: torch.Tensor, stocks_taken: torch.Tensor,
                  stocks_lost: torch.Tensor) -> torch.Tensor:
    """``damage``: 0.01 x (damage dealt - damage taken) + (stocks taken - stocks lost)."""
    return 0.01 * (dealt - taken) + (stocks_taken.to(torch.float32) - stocks_lost.to(torch.float32))


def frame_outcome(untouchable: bool, *, agent_action: torch.Tensor, is_noop: torch.Tensor, taken: torch.Tensor,
                  dealt: torch.Tensor, lost: torch.Tensor, took: torch.Tensor, agent_stock: torch.Tensor,
                  opponent_stock: torch.Tensor, episode_frame: torch.Tensor, max_frames: int,
                  timed: bool = False, clock_in_state: bool = False) -> FrameOutcome:
    """One frame's reward and episode end, from what the frame did (``[B]`` each).

    ``taken``/``dealt`` are this frame's damage, ``lost``/``took`` its stocks lost and taken,
    ``agent_stock``/``opponent_stock`` the stocks after it, ``episode_frame`` the frames played in
    the episode including this one. ``untouchable`` picks that reward (else ``damage``, which
    ``fight`` shares). ``timed``: the episode is a whole game and ``max_frames`` its clock, whose
    end is the game's end; it is terminal where ``clock_in_state`` (the state shows the time left),
    else a cut (truncated: the target bootstraps, as anywhere else the state could be met).
    """
    hit = (taken > 0) | (lost > 0)
    if untouchable:
        reward = standing_noop_reward(agent_action, is_noop)
        terminal = hit
    else:
        reward = damage_reward(dealt, taken, took, lost)
        terminal = (agent_stock <= 0) | (opponent_stock <= 0)
    time_up = episode_frame >= max_frames
    if timed and clock_in_state:
        return FrameOutcome(reward, hit, terminal | time_up, torch.zeros_like(terminal))
    return FrameOutcome(reward, hit, terminal, ~terminal & time_up)


def game_result(agent_stock: torch.Tensor, opponent_stock: torch.Tensor, agent_percent: torch.Tensor,
                opponent_percent: torch.Tensor) -> torch.Tensor:
    """How a game that has ended came out for the agent: +1 won, -1 lost, 0 a draw (``[B]`` int64).

    Melee's stock rules at the end (docs/design.md "Fights"): more stocks wins (a player with none has
    lost); with equal stocks, less percent wins; equal stocks and percent is a draw.

    >>> t = lambda *v: torch.tensor(v, dtype=torch.float32)
    >>> game_result(t(1, 0, 2, 2), t(0, 3, 2, 2), t(50, 0, 30, 40), t(0, 0, 60, 40)).tolist()
    [1, -1, 1, 0]
    """
    by_stock = torch.sign(agent_stock - opponent_stock)
    by_percent = torch.sign(opponent_percent - agent_percent)
    return torch.where(by_stock != 0, by_stock, by_percent).long()


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


class GameStateRules:
    """:func:`frame_outcome` (the arena's rules) applied to libmelee GameStates (real Melee).

    Reads each frame's damage and stock changes from the ports' percent and stock, then scores the
    frame with the same function the arena uses. Melee's percent resets to 0 when a KO'd player
    comes back (a stock lost), so damage counts only while the stock count stays the same: a KO
    is a stock lost, never negative damage.

    ``timed`` (fights): the episode is the whole game and ``max_frames`` its clock, counted as
    Melee's timer counts, from GO (libmelee's ``gs.frame`` 0; the 123 countdown frames before it
    are not on the clock): the timer shows ``max_frames - gs.frame`` frames left (slippi-js
    ``frameToGameTimer``: 00:00.00 on frame 60 x the starting seconds), and the frame on which it
    shows none, ``gs.frame == max_frames``, is the game's last (slippi-js's timed test replay
    ``teams_time_p3_redVSp1p2_blueVSp4_green_winner_blue.slp``, a 1:00 game, ends on frame 3,600): it
    ends the game, as a player's last stock lost does; terminal with ``clock_in_state`` (the state
    shows the time left), else a cut (see :func:`frame_outcome`).
    """

    def __init__(self, agent_port: int, opponent_port: int, reward: str, max_frames: int, timed: bool = False,
                 clock_in_state: bool = False):
        self.agent_port, self.opponent_port = agent_port, opponent_port
        self.reward = check_reward(reward)
        self.max_frames = max_frames
        self.timed = timed
        self.clock_in_state = clock_in_state
        self.episode_frame = 0
        self.episode_return = 0.0
        self._prev: tuple[float, int, float, int] | None = None

    def _read(self, gs: Any) -> tuple[float, int, float, int]:
        a, o = gs.players[self.agent_port], gs.players[self.opponent_port]
        return float(a.percent), int(a.stock), float(o.percent), int(o.stock)

    def score(self, gs: Any) -> tuple[int, int, float, float]:
        """``(agent_stocks, opponent_stocks, agent_percent, opponent_percent)`` on this frame (the
        arena's ``info`` fields, which :func:`game_result` reads)."""
        a_pct, a_stock, o_pct, o_stock = self._read(gs)
        return a_stock, o_stock, a_pct, o_pct

    def clock(self, gs: Any) -> int:
        """Frames on the episode's clock at this frame: the timer's, run down since GO, when ``timed``;
        else the frames played in the episode."""
        return int(gs.frame) if self.timed else self.episode_frame

    def time_up(self, gs: Any) -> bool:
        """A timed game's clock has run out on this frame (never for an untimed episode)."""
        return self.timed and self.clock(gs) >= self.max_frames

    def game_decided(self, gs: Any) -> bool:
        """A player has no stock left: the game is over on this frame.

        Slippi records no frame after the last KO (each real replay in ../shared/replays that ends
        in one ends on it; slippi-ssbm-asm's SendGameEnd follows at the next scene think), so no
        episode can start on this frame: the next one starts in the next game.
        """
        return int(gs.players[self.agent_port].stock) == 0 or int(gs.players[self.opponent_port].stock) == 0

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
                            agent_stock=t(a_stock), opponent_stock=t(o_stock), episode_frame=t(self.clock(gs)),
                            max_frames=self.max_frames, timed=self.timed, clock_in_state=self.clock_in_state)
        reward = float(out.reward)
        self.episode_return += reward
        return FrameResult(reward, bool(out.hit), taken, dealt, lost, took, bool(out.terminal), bool(out.truncated))
