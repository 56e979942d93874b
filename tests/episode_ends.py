"""Keep the step results on which an environment's episode ended, for a test to read after ``evaluate``."""

from __future__ import annotations

from typing import Any


def record_episode_ends(env: Any) -> list[tuple]:
    """Wrap ``env.step`` so that every ``(obs, reward, done, info)`` with ``done`` set (one environment)
    is appended to the returned list."""
    ends: list[tuple] = []
    step = env.step

    def recording_step(actions: Any) -> tuple:
        out = step(actions)
        if out[2].item():
            ends.append(out)
        return out

    env.step = recording_step
    return ends
