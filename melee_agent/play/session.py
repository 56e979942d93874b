"""One person's games in the arena: their controller through the input delay, the opponent, one frame at a
time, the result, a rematch, and what is kept (the frames for a replay, the person's view for rows).

The person's frame is read ``delay_frames`` frames after it arrived (the netplay delay the person
asks for; 0: the next frame). :meth:`PlaySession.step` plays one frame; the 60 frames/s clock
(:mod:`.clock`) calls it. A game ends by the arena's rules (no stock left, or the clock); the session
then waits for :meth:`PlaySession.rematch`.

Example::

    >>> s = PlaySession(PlayOptions(policy=None, seconds=0.05))
    >>> s.set_input(parse({"main_x": 1.0, "seq": 0}))
    >>> frames = [s.step() for _ in range(3)]
    >>> frames[0]["seq"], frames[-1]["over"], s.result["winner"]
    (0, True, 'draw')
"""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass
from typing import Any

import torch

from melee_agent.arena import Arena
from melee_agent.arena.env_state import AGENT, CPU
from melee_agent.arena.fight.frame import check_cpu
from melee_agent.arena.games import MAX_DELAY
from melee_agent.play.frames import PlayFrame
from melee_agent.play.human import AT_REST, HumanPad, pads_of, parse
from melee_agent.play.opponent import PolicyPort, own_view
from melee_agent.play.view import frame_json, view_of
from melee_agent.envs.make import arena_stage
from melee_agent.envs.rewards import GAME_FRAMES, damage_reward, game_result

CHARACTERS = ("fox", "marth")
PORT_OF = {"fox": AGENT, "marth": CPU}  # the arena's Fox is on port 0, Marth on port 1
AS_MARTH_NEEDS_POLICY = ("--as marth: the arena's CPU plays Marth only, so against the CPU you play Fox; give "
                         "--policy to play Marth against a policy (which then plays Fox, its own port)")


@dataclass(frozen=True)
class PlayOptions:
    """What game to play: ``policy`` None is the CPU at ``cpu_level``."""

    policy: str | None = None
    human: str = "fox"
    cpu_level: int = 9
    cpu: str = "melee"
    delay_frames: int = 0  # the person's input delay
    seconds: float = GAME_FRAMES / 60  # the game's clock (8:00)
    seed: int = 0
    action_set: str = "fight"  # the policy's action set (the arena's observation counts its actions)
    policy_delay: int = 0  # the input delay the policy trained under
    label: str = ""  # how the opponent is named on the page ("": the policy, or "CPU level L")
    compile: bool = False  # compile the frame in the background (:class:`~.frames.PlayFrame`); the CLI's default
    stage: str = "final_destination"  # the stage played (arena/stages.py names)

    @property
    def opponent(self) -> str:
        return self.label or (self.policy if self.policy is not None else f"CPU level {self.cpu_level}")


def check_options(o: PlayOptions) -> None:
    """Refuse a game the arena cannot play, before anything starts (ValueError naming the flag)."""
    if o.human not in CHARACTERS:
        raise ValueError(f"--as must be one of {', '.join(CHARACTERS)}, got {o.human!r}")
    if o.human == "marth" and o.policy is None:
        raise ValueError(AS_MARTH_NEEDS_POLICY)
    if not 1 <= o.cpu_level <= 9:
        raise ValueError(f"--cpu-level must be 1-9, got {o.cpu_level}")
    check_cpu(o.cpu)
    from melee_agent.arena.stages import STAGES  # noqa: PLC0415

    if o.stage not in STAGES:
        raise ValueError(f"--stage {o.stage!r} is not a stage; use one of {', '.join(STAGES)}")
    if isinstance(o.delay_frames, bool) or not 0 <= o.delay_frames <= MAX_DELAY:
        raise ValueError(f"--delay-frames must be 0-{MAX_DELAY}, got {o.delay_frames}")
    if not 0 < o.seconds <= GAME_FRAMES / 60:
        raise ValueError(f"--seconds must be in (0, {GAME_FRAMES // 60}] (Melee's 8:00 clock), got {o.seconds}")


class PlaySession:
    """A person's games against the CPU or a policy, frame by frame (thread-safe: the clock steps it while the
    page's connection sets the input)."""

    def __init__(self, o: PlayOptions, policy: Any = None, keep_rows: bool = False):
        check_options(o)
        self.o = o
        self.human_port = PORT_OF[o.human]
        self.arena = Arena(1, cpu_level=o.cpu_level, seed=o.seed, game="fight", action_set=o.action_set,
                           max_frames=max(1, round(o.seconds * 60)), cpu=o.cpu, **arena_stage(o.stage))
        self.opponent = None if o.policy is None else PolicyPort(policy, o.action_set, 1 - self.human_port,
                                                                 o.policy_delay)
        self.frame = PlayFrame(self.arena, cpu=self.opponent is None, compile=o.compile)
        self.keep_rows = keep_rows
        self.lock = threading.Lock()
        self.latest = HumanPad()
        self.games = 0  # games finished
        self._new_game()

    # --- the game ---
    def _new_game(self) -> None:
        self.arena.reset()
        if self.opponent is not None:
            self.opponent.reset()
        self.in_flight: deque[HumanPad] = deque([HumanPad()] * self.o.delay_frames)
        self.frames: list[dict[str, Any]] = [frame_json(view_of(self.arena.state, self.arena.T))]
        self.over = False
        self.result: dict[str, Any] | None = None
        self.read_seq = -1
        # The person's own view, one entry a frame: what --record turns into rows (:mod:`.record`).
        self.trace: dict[str, list[Any]] = {"obs": [self._human_obs()], "pad": [], "reward": [], "done": []}

    def _human_obs(self) -> torch.Tensor:
        return own_view(self.arena.observe(torch.zeros(1)), self.human_port)[0].clone() if self.keep_rows else \
            torch.zeros(0)

    def set_input(self, pad: HumanPad) -> None:
        """The person's newest controller frame (read by the next frame, through the delay)."""
        with self.lock:
            self.latest = pad

    def step(self) -> dict[str, Any] | None:
        """Play one frame; the frame's JSON for the page (None once the game is over)."""
        with self.lock:
            if self.over:
                return None
            pad = self.latest
            if self.o.delay_frames:
                self.in_flight.append(pad)
                pad = self.in_flight.popleft()
            ports: list[dict[str, float | bool]] = [dict(AT_REST), dict(AT_REST)]
            ports[self.human_port] = pad.values
            if self.opponent is not None:
                ports[1 - self.human_port] = self.opponent.next_frame(self.arena)
            step = self.frame(pads_of((ports[0], ports[1]), self.arena.device))
            self.read_seq = pad.seq
            t = step.totals  # port 0's view: taken is port 0's damage, dealt port 1's
            me_taken, me_dealt = (t.damage_taken, t.damage_dealt) if self.human_port == AGENT else \
                (t.damage_dealt, t.damage_taken)
            me_lost, me_took = (t.stocks_lost, t.stocks_taken) if self.human_port == AGENT else \
                (t.stocks_taken, t.stocks_lost)
            done = bool(step.done[0])
            if self.keep_rows:
                self.trace["pad"].append(pad.values)
                self.trace["reward"].append(float(damage_reward(me_dealt, me_taken, me_took, me_lost)[0]))
                self.trace["done"].append(done)
                self.trace["obs"].append(self._human_obs())
            frame = frame_json(view_of(self.arena.state, self.arena.T))
            self.frames.append(frame)
            if done:
                self.over = True
                self.games += 1
                self.result = self._result()
            return {**frame, "seq": pad.seq, "over": self.over, "result": self.result, "frame_kind": self.frame.kind}

    def _result(self) -> dict[str, Any]:
        ps = self.arena.state.players
        me, them = self.human_port, 1 - self.human_port
        won = int(game_result(ps.stock[:, me], ps.stock[:, them], ps.percent[:, me], ps.percent[:, them])[0])
        return {"winner": {1: "you", -1: "opponent", 0: "draw"}[won], "frames": len(self.frames) - 1,
                "stocks": [int(ps.stock[0, AGENT]), int(ps.stock[0, CPU])],
                "percent": [round(float(ps.percent[0, AGENT]), 1), round(float(ps.percent[0, CPU]), 1)]}

    def rematch(self) -> None:
        """Start a new game (the last one, over or not, is left behind)."""
        with self.lock:
            self._new_game()

    # --- inspection (the page's /v1/state, tests) ---
    def players(self) -> dict[str, dict[str, float]]:
        """Both fighters' fields by character name (libmelee's names), from the arena's state."""
        with self.lock:
            raw = self.arena.players()
        return {name: {k: float(v[0]) for k, v in raw[who].items()}
                for name, who in (("fox", "agent"), ("marth", "opponent"))}

    def info(self) -> dict[str, Any]:
        return {"frame": len(self.frames) - 1, "over": self.over, "result": self.result, "games": self.games,
                "read_seq": self.read_seq, "human": self.o.human, "opponent": self.o.opponent,
                "delay_frames": self.o.delay_frames, "frame_kind": self.frame.kind, "players": self.players(),
                "stage": self.o.stage}


__all__ = ["PlaySession", "PlayOptions", "check_options", "CHARACTERS", "PORT_OF", "parse"]
