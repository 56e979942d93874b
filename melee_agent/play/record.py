"""``--record``: a person's game as experience rows (docs/design.md "Experience rows"), in an experience batch
file (``melee-agent/experience/1``) that a manager accepts (``POST /v1/experience``) or a script reads.

A person presses raw controller frames, not the action set's macros, so each row's action is a label:
from frame ``t`` the macro whose controller frames are nearest the person's next frames (mean distance
over the macro's length: a differing button counts 1, a stick or shoulder its distance in [0, 1];
equal distances go to the longer macro), and the row spans that macro's frames: ``obs`` at ``t`` (the
person's own view, their previous label as the 27th float), the fight reward summed over the span,
``discount`` gamma (0 where the game ended in it: a game's end is terminal), ``next_obs`` after it.

Example::

    >>> from melee_agent.play.human import AT_REST
    >>> A = get_action_set("fight"); n = 8
    >>> obs = [torch.zeros(27) for _ in range(n + 1)]
    >>> rows = game_rows(obs, [dict(AT_REST)] * n, [0.0] * n, [False] * (n - 1) + [True], "fight", 0.99)
    >>> rows.shape[1], int(rows[0, 27]) == A.noop_index, float(rows[-1, 29])
    (57, True, 0.0)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch

from melee_agent.envs.actions import get_action_set
from melee_agent.arena.fight.pads import Pads, from_table
from melee_agent.io.files import atomic_write_bytes
from melee_agent.rl.rows import ACTION, DISCOUNT, NEXT_OBS, OBS, REWARD, ROW_WIDTH
from melee_agent.io.segment_stats import SegmentStats
from melee_agent.io.wire import encode_experience


def _matrix(frames: Pads) -> torch.Tensor:
    """``Pads`` fields (any shape ``[...]``) stacked as floats ``[..., 13]``."""
    return torch.stack([v.float() for v in frames], -1)


def game_rows(obs: list[torch.Tensor], pads: list[dict[str, Any]], reward: list[float], done: list[bool],
              action_set: str, gamma: float) -> np.ndarray:
    """Rows ``[n, 57]`` of one game: ``obs`` has one more entry than the frames (before each, and after the last)."""
    aset = get_action_set(action_set)
    A, lengths = aset.num_actions, [int(x) for x in aset.lengths]
    table = torch.as_tensor(aset.table).permute(2, 0, 1)  # [button, action, frame]
    C, _, T = table.shape
    macro = _matrix(from_table(table.reshape(C, A * T))).view(A, T, -1)  # [A, T, 13]
    human = torch.tensor([[float(p[k]) for k in Pads._fields] for p in pads]) if pads else torch.zeros(0, 13)
    n = len(pads)
    length = torch.tensor(lengths)
    frame_in = torch.arange(T).view(1, T) < length.view(A, 1)  # [A, T]: the macro's own frames
    # The person's frames past the game's end repeat its last one (a macro cut by the end is compared on what was played).
    padded = torch.cat((human, human[-1:].expand(T, -1))) if n else human
    rows, t, prev = [], 0, 0
    while t < n:
        played = torch.arange(T).view(1, T) < (n - t)  # [1, T]
        use = frame_in & played
        dist = (macro - padded[t:t + T].unsqueeze(0)).abs().sum(-1)  # [A, T]
        k = use.sum(1)
        cost = (dist * use).sum(1) / k
        # The nearest macro; among equally near ones, the longest (scored by a tiny bonus per frame it spans).
        best_a = int(torch.argmin(cost - 1e-6 * k))
        best_len = int(k[best_a])
        end = t + best_len
        ended = any(done[t:end])
        if ended:
            end = t + done[t:end].index(True) + 1
        row = np.zeros(ROW_WIDTH, np.float32)
        row[OBS] = obs[t].numpy()
        row[OBS.start + 26] = prev / max(A - 1, 1)
        row[ACTION] = best_a
        row[REWARD] = sum(reward[t:end])
        row[DISCOUNT] = 0.0 if ended else gamma
        row[NEXT_OBS] = obs[end].numpy()
        row[NEXT_OBS.start + 26] = best_a / max(A - 1, 1)
        rows.append(row)
        prev, t = best_a, end
    return np.stack(rows) if rows else np.zeros((0, ROW_WIDTH), np.float32)


def write_rows(path: str | Path, rows: np.ndarray, action_set: str, game_index: int, won: bool | None,
               frames: int) -> None:
    """One game's rows as an experience batch (worker ``human``, ``batch_seq`` the game's number)."""
    stats = SegmentStats(episodes=1, return_sum=float(rows[:, REWARD].sum()) if len(rows) else 0.0,
                         length_sum=float(frames), frames=frames, steps=len(rows), games=1, wins=int(bool(won)))
    atomic_write_bytes(path, encode_experience(rows, action_set=action_set, worker_id="human", batch_seq=game_index,
                                               model_version=0, stats=stats))


__all__ = ["game_rows", "write_rows"]
