"""Device tables built once from `data`: the moves (hitboxes, locomotion, damage per frame) and the
actions' intangibility windows, indexed as the simulator reads them.

The state's fields are in :mod:`melee_agent.arena.env_state`, the CPU levels in
:mod:`melee_agent.arena.cpu.levels`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from melee.enums import Action

from melee_agent.arena import libmelee_data as d


# Moves indexed by the MOVE column; -1 (no move) maps to the all-zero last row.
MOVES: tuple[d.Move, ...] = d.MARTH_MOVES + (d.FOX_SHINE, d.FOX_ROLL_FORWARD, d.FOX_ROLL_BACKWARD, d.FOX_SPOT_DODGE)
MOVE_INDEX = {m.name: i for i, m in enumerate(MOVES)}
NUM_MARTH_MOVES = len(d.MARTH_MOVES)
SHINE_END_LAG = 17  # guess: frames after the 3-frame shine start before Fox can act without jumping
AIRDODGE_FRAMES = 49  # SmashWiki: air dodge lasts 49 frames for Fox (intangible 4-29)
AIRDODGE_INTANGIBLE = (4, 29)  # measured on real replays, Fox and Marth (docs/intangibility.md)
LANDING_SPECIAL_FRAMES = 10  # SmashWiki: landing from an air dodge, 10 frames


@dataclass
class Tables:
    circles: torch.Tensor  # [M+1, L, 4, 3]
    loco: torch.Tensor  # [M+1, L]
    cumloco: torch.Tensor  # [M+1, L]
    length: torch.Tensor  # [M+1]
    action: torch.Tensor  # [M+1] libmelee action ids
    # [M+1, L, 4] each: per move, action frame and hitbox id (the game's data, see data.Move)
    damage: torch.Tensor
    angle: torch.Tensor
    base_kb: torch.Tensor
    kb_growth: torch.Tensor
    set_kb: torch.Tensor
    first_active: torch.Tensor  # [M+1] (large where no hitbox)
    last_active: torch.Tensor
    reach: torch.Tensor  # [M+1] farthest forward hitbox point including movement up to it
    intang_lo: torch.Tensor  # [512] by action id: first intangible action frame (0 = never)
    intang_hi: torch.Tensor
    weight: torch.Tensor  # [2]
    height: torch.Tensor  # [2]
    gravity: torch.Tensor  # [2]
    terminal: torch.Tensor  # [2]


def build_tables(device: torch.device) -> Tables:
    m = len(MOVES)
    length = max(mv.length for mv in MOVES) + 1
    circles = np.zeros((m + 1, length, 4, 3), np.float32)
    loco = np.zeros((m + 1, length), np.float32)
    hit_values = ("damage", "angle", "base_kb", "kb_growth", "set_kb")
    hits = {name: np.zeros((m + 1, length, 4), np.float32) for name in hit_values}
    first = np.full(m + 1, 999.0, np.float32)
    last = np.zeros(m + 1, np.float32)
    reach = np.zeros(m + 1, np.float32)
    for i, mv in enumerate(MOVES):
        # Row f holds the move's frame f (action_frame f); row 0 is unused padding.
        circles[i, 1 : mv.length + 1] = mv.circles
        loco[i, 1 : mv.length + 1] = mv.locomotion
        for name in hit_values:
            hits[name][i, 1 : mv.length + 1] = getattr(mv, name)
        if mv.circles[:, :, 2].max() > 0:
            first[i], last[i] = mv.active
            cum = np.cumsum(mv.locomotion)
            ext = (mv.circles[:, :, 0] + mv.circles[:, :, 2]) * (mv.circles[:, :, 2] > 0)
            reach[i] = float((ext.max(axis=1) + cum)[first[i].astype(int) - 1 : int(last[i])].max())
    lo = np.zeros(512, np.float32)
    hi = np.zeros(512, np.float32)
    for act, (a, b) in {
        Action.SPOTDODGE: d.SPOT_DODGE_INTANGIBLE,
        Action.ROLL_FORWARD: d.ROLL_INTANGIBLE,
        Action.ROLL_BACKWARD: d.ROLL_INTANGIBLE,
        Action.DOWN_B_GROUND_START: d.SHINE_INTANGIBLE,
        Action.AIRDODGE: AIRDODGE_INTANGIBLE,
        Action.EDGE_GETUP_SLOW: (1, d.LEDGE_GETUP_FRAMES),
    }.items():
        lo[act.value], hi[act.value] = a, b
    t = lambda x, dt=torch.float32: torch.as_tensor(np.asarray(x), dtype=dt, device=device)  # noqa: E731
    moves_attr = lambda name: t([getattr(mv, name) for mv in MOVES] + [0])  # noqa: E731
    return Tables(
        circles=t(circles), loco=t(loco), cumloco=t(np.cumsum(loco, axis=1)), length=moves_attr("length"),
        action=moves_attr("action"), **{name: t(hits[name]) for name in hit_values}, first_active=t(first),
        last_active=t(last), reach=t(reach), intang_lo=t(lo), intang_hi=t(hi),
        weight=t([d.FOX_WEIGHT, d.MARTH_WEIGHT]), height=t([d.FOX_HEIGHT, d.MARTH_HEIGHT]),
        gravity=t([d.FOX.gravity, d.MARTH.gravity]), terminal=t([d.FOX.terminal, d.MARTH.terminal]),
    )
