"""One frame of a game with a person in it, through the arena's own fight frame, eager or compiled.

* Against the CPU the person plays Fox (port 0, the agent's port) and the frame is the one training
  plays (:func:`~melee_agent.arena.fight.frame.fight_frame_fox`: count down, Melee's or the designed
  CPU picks Marth's controller, then the frame), Fox's controller read from the person's raw frame as
  the game reads any controller (:func:`~melee_agent.arena.fight.pads.read`).
* Against a policy both ports are raw frames (:func:`~melee_agent.arena.fight.frame.fight_frame_pads`,
  what ``Arena.step_pads`` plays): the person's, and the policy's macro frame.

Either way the frame's reward and end are the arena's (:func:`~melee_agent.arena.async_step.outcome`),
as seen from port 0.

Why compiled: one environment's frame is about 3,000 small tensor ops; eagerly each pays PyTorch's
dispatch, and a frame cost 17-18 ms (median, an idle 2-core CPU), more than the 16.7 ms a frame has at
60 frames/s. ``torch.compile`` makes it one C++ loop nest: 0.42-0.48 ms (the same machine, measured side
by side; docs/play.md). Compiling takes about two minutes the first time on that CPU and about 9 s once
inductor's on-disk cache holds it, so :class:`PlayFrame` compiles in a background thread and plays eager
frames until the compiled one is ready: the game starts at once and switches without a pause (the two
agree up to float rounding, as ``Arena(compile=True)`` does).
"""

from __future__ import annotations

import threading
import traceback

import torch
from torch.utils import _pytree as pytree

from melee_agent.arena import Arena
from melee_agent.arena.async_step import FrameConsts, FrameStep, Totals, outcome
from melee_agent.arena.compiled import compiled
from melee_agent.arena.env_state import EnvState
from melee_agent.arena.fight import pads as pad_reading
from melee_agent.arena.fight.frame import fight_frame_fox, fight_frame_pads
from melee_agent.arena.fight.pads import Pads
from melee_agent.play.human import AT_REST, pads_of


def cpu_frame(state: EnvState, raw: Pads, consts: FrameConsts, noop: torch.Tensor) -> FrameStep:
    """Port 0 from ``raw`` (``[B, 2]``; port 1's half unread), port 1 the arena's CPU."""
    read = pad_reading.read(raw, state.fight.a_held > 0)
    fox = tuple(t[:, 0] for t in read)
    (state, damage, ko), _ = fight_frame_fox(state, fox, consts.fight, consts.seed, consts.spawn_x)
    return outcome(state, damage, ko, Totals.zeros(noop.shape[0], noop.device), noop, torch.zeros_like(noop), consts)


def pads_frame(state: EnvState, raw: Pads, consts: FrameConsts, noop: torch.Tensor) -> FrameStep:
    """Both ports from ``raw`` (``[B, 2]``)."""
    state, damage, ko = fight_frame_pads(state, raw, consts.fight, consts.spawn_x)
    return outcome(state, damage, ko, Totals.zeros(noop.shape[0], noop.device), noop, torch.zeros_like(noop), consts)


class PlayFrame:
    """Plays ``arena``'s next frame from raw controller frames: eager at first, compiled once ready.

    ``kind`` says which frame plays now: ``"eager"``, ``"compiling"`` (eager while the compiled one is being
    built), ``"compiled"``, or ``"eager (compile failed: ...)"``.

    Example::

        >>> from melee_agent.play.human import AT_REST, pads_of
        >>> a = Arena(1, game="fight"); _ = a.reset()
        >>> frame = PlayFrame(a, cpu=True, compile=False)
        >>> step = frame(pads_of((AT_REST, AT_REST), a.device))
        >>> frame.kind, step.done.shape
        ('eager', torch.Size([1]))
    """

    def __init__(self, arena: Arena, cpu: bool, compile: bool = True):
        self.arena = arena
        self.eager = cpu_frame if cpu else pads_frame
        self.fast = None
        self.noop = torch.full((arena.num_envs,), arena.noop_index, dtype=torch.long, device=arena.device)
        self.kind = "eager"
        if compile:
            self.kind = "compiling"
            threading.Thread(target=self._compile, name="play-compile", daemon=True).start()

    def _compile(self) -> None:
        """Build the compiled frame on a copy of the game (the game goes on meanwhile, eager)."""
        try:
            # Made as the session makes each frame's (outside inference mode): the graph's guards check a
            # tensor's dispatch keys, and an inference tensor here would make the first real frame compile again.
            rest = pads_of((AT_REST, AT_REST), self.arena.device)
            with torch.inference_mode():
                state = pytree.tree_map(lambda t: t.clone() if isinstance(t, torch.Tensor) else t, self.arena.state)
                fn = compiled(self.eager, self.arena.device)
                for _ in range(2):  # the first call also reads the output's structure eagerly
                    state = fn(state, rest, self.arena._consts, self.noop).state
            self.fast = fn
            self.kind = "compiled"
        except Exception as e:  # noqa: BLE001 - the game plays on eagerly, and says why
            traceback.print_exc()
            self.kind = f"eager (compile failed: {type(e).__name__}: {e})"

    @torch.inference_mode()
    def __call__(self, raw: Pads) -> FrameStep:
        """Advance the arena (one environment's fight) one frame from ``raw`` (``[1, 2]``); the arena's state
        becomes the new one, nothing resets."""
        fn = self.fast or self.eager
        step = fn(self.arena.state, raw, self.arena._consts, self.noop)
        self.arena.state = step.state
        return step


__all__ = ["PlayFrame", "cpu_frame", "pads_frame"]
