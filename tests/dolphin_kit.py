"""A DolphinEnv driven by a real Slippi replay through libmelee's file console (the Dolphin loop's tests and the
contracts' share it)."""

from __future__ import annotations

from pathlib import Path

from melee_agent.config import DolphinConfig
from melee_agent.dolphin import DolphinEnv, replay_session
from melee_agent.io.slp import game_ports, read_gamestates
from tests.recording_controller import recording_controller


class ReplayOver(Exception):
    pass


def replay_env(path: Path, reward: str = "untouchable", max_frames: int = 3600, consoles: int = 1,
               die_after: int | None = None, action_set: str = "untouchable") -> tuple[DolphinEnv, list]:
    """A DolphinEnv on the replay's file console; a second console (a "restart") ends the test."""
    states = read_gamestates(path, live=True)  # what the live console (libmelee's default) saw: first versions
    ports = game_ports(states[-1])
    made: list = []

    def session():
        if len(made) >= consoles:
            raise ReplayOver
        s = replay_session(str(path), ports[0], ports[1], recording_controller)
        if die_after is not None and not made:
            real_step, count = s.console.step, [0]

            def step():
                count[0] += 1
                return None if count[0] > die_after else real_step()
            s.console.step = step
        made.append(s)
        return s

    cfg = DolphinConfig(agent_port=ports[0], opponent_port=ports[1])
    env = DolphinEnv(cfg, cpu_level=9, action_set=action_set, reward=reward, max_frames=max_frames,
                     session_factory=session, menus=False)
    return env, states
