"""``play --spectate RUN_DIR``: the newest model a running training published (``RUN_DIR/model.safetensors``),
playing the arena's CPU live, and the run's periodic checks beside it.

Every :data:`POLL_FRAMES` frames (half a second) the model file is looked at; a new one (its size or
modification time changed) is loaded and takes over at its next decision, the game going on. The
game is the model's (its action set's: ``fight`` sets play whole games, others dodging) at the input
delay it trained under. The checks' curve is read from the run's TensorBoard files
(``eval/win_rate`` for fights, else ``eval/untouched_share``: the points of ``learning_curve.png``).
"""

from __future__ import annotations

import os
from collections import deque
from pathlib import Path
from typing import Any

import torch

from melee_agent.envs.actions import base_name
from melee_agent.envs.make import arena_stage
from melee_agent.arena import Arena
from melee_agent.envs.state import STATE_LAYOUT
from melee_agent.rl.model import load_model, trained_delay
from melee_agent.play.view import frame_json, view_of

POLL_FRAMES = 30


def read_curve(run_dir: Path) -> dict[str, list[list[float]]]:
    """The run's periodic checks so far, ``{tag: [[train_step, value], ...]}`` (empty where none yet)."""
    files = sorted(run_dir.glob("events.out.tfevents.*"))
    if not files:
        return {}
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator  # noqa: PLC0415

    out: dict[str, list[list[float]]] = {}
    for f in files:
        try:
            acc = EventAccumulator(str(f), size_guidance={"scalars": 0})
            acc.Reload()
        except Exception:  # noqa: BLE001 - a file being written: read again at the next poll
            continue
        for tag in ("eval/win_rate", "eval/untouched_share"):
            if tag in acc.Tags().get("scalars", []):
                out.setdefault(tag, []).extend([[e.step, round(e.value, 4)] for e in acc.Scalars(tag)])
    return {k: sorted(v) for k, v in out.items()}


class Spectator:
    """The run's newest model against the CPU at ``cpu_level``, one frame per :meth:`tick`."""

    def __init__(self, run_dir: str | Path, cpu_level: int = 9, seed: int = 0):
        self.run_dir = Path(run_dir)
        if not self.run_dir.is_dir():
            raise ValueError(f"--spectate {run_dir}: no such run folder")
        if not 1 <= cpu_level <= 9:
            raise ValueError(f"--cpu-level must be 1-9, got {cpu_level}")
        self.cpu_level, self.seed = cpu_level, seed
        self.model_file = self.run_dir / "model.safetensors"
        self.version: int | None = None
        self.action_set: str | None = None
        #: The stage played: the newest model's first (its file's ``stages``), Final Destination before one loads.
        self.stage = "final_destination"
        self.arena: Arena | None = None
        self.policy: Any = None
        self.obs: torch.Tensor | None = None
        self.pending: deque[dict[str, Any]] = deque()
        self._seen: tuple[int, int] | None = None
        self._curve_seen: tuple[tuple[str, int], ...] = ()
        self.curve: dict[str, list[list[float]]] = {}
        self.ticks = 0
        self.games = 0

    def poll(self) -> bool:
        """Load the model file where it changed; True when a new model was loaded."""
        try:
            st = os.stat(self.model_file)
        except FileNotFoundError:
            return False
        key = (st.st_size, st.st_mtime_ns)
        if key == self._seen:
            return False
        try:
            model, meta = load_model(self.model_file, state_layout=None)  # any layout: the arena is built in it
        except (OSError, ValueError):  # caught between writes: the next poll reads it
            return False
        self._seen = key
        model.eval()
        action_set = meta["action_set"]
        stage = meta["stages"][0]
        if self.arena is None or action_set != self.action_set or stage != self.stage:
            fight = base_name(action_set) == "fight"
            self.arena = Arena(1, cpu_level=self.cpu_level, seed=self.seed, game="fight" if fight else "dodge",
                               action_set=action_set, delay_frames=trained_delay(meta) or 0,
                               state_layout=meta.get("state_layout", STATE_LAYOUT), **arena_stage(stage))
            self.arena.on_frame = lambda s: self.pending.append(frame_json(view_of(s, self.arena.T)))
            self.obs = self.arena.reset()
            self.action_set, self.stage = action_set, stage

        def act(obs: torch.Tensor) -> torch.Tensor:
            with torch.inference_mode():
                return model(obs).argmax(dim=1)

        self.policy, self.version = act, int(meta.get("version", 0))
        return True

    def poll_curve(self) -> bool:
        files = tuple((f.name, f.stat().st_size) for f in sorted(self.run_dir.glob("events.out.tfevents.*")))
        if files == self._curve_seen:
            return False
        self._curve_seen = files
        self.curve = read_curve(self.run_dir)
        return True

    def tick(self) -> dict[str, Any] | None:
        """The next frame to show (with the model's version), or a status message every half second while
        there is no model yet."""
        self.ticks += 1
        if self.ticks % POLL_FRAMES == 1:
            self.poll()
            if self.ticks % (POLL_FRAMES * 4) == 1:
                self.poll_curve()
        if self.arena is None:
            return {"type": "status", "model_version": None, "curve": self.curve} \
                if self.ticks % POLL_FRAMES == 1 else None
        while not self.pending:
            self.obs, _, done, _ = self.arena.step_async(self.policy(self.obs))
            if bool(done[0]):
                self.games += 1
        frame = self.pending.popleft()
        extra = {"curve": self.curve} if self.ticks % POLL_FRAMES == 1 else {}
        return {**frame, "type": "frame", "model_version": self.version, "action_set": self.action_set,
                "game": self.arena.game, "games": self.games, "stage": self.stage, **extra}

    def info(self) -> dict[str, Any]:
        return {"model_version": self.version, "action_set": self.action_set, "cpu_level": self.cpu_level,
                "games": self.games, "curve": self.curve, "run_dir": str(self.run_dir), "stage": self.stage}


__all__ = ["Spectator", "read_curve", "POLL_FRAMES"]
