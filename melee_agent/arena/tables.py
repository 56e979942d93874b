"""Device tables built once from `data`: moves, action windows, CPU levels; and the column layout.

Players are read as ``S[B, 2, len(P)]`` (index 0 the agent, Fox; 1 the CPU, Marth) and
per-environment counters as ``En[B, len(E)]``; both are views of field-major storage (see
``storage``), and ``P`` and ``E`` name their columns.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from melee.enums import Action

from melee_agent.arena import data as d


class P:  # per-player columns
    X, Y, VX, VY, KX, KY, ACT, FACE, GND, JUMPS, SHIELD, PCT, STOCK, MOVE, HITDONE, FF, JHELD, AF, STUN, INV, BUSY = range(21)
    N = 21


class E:  # per-environment columns
    EP_FRAME, TICK, EPISODE, MACRO, MFRAME, PREV_ACTION, CPU_CD, ENV_ID = range(8)
    N = 8


AGENT, CPU = 0, 1

# Moves indexed by the MOVE column; -1 (no move) maps to the all-zero last row.
MOVES: tuple[d.Move, ...] = d.MARTH_MOVES + (d.FOX_SHINE, d.FOX_ROLL_FORWARD, d.FOX_ROLL_BACKWARD, d.FOX_SPOT_DODGE)
MOVE_INDEX = {m.name: i for i, m in enumerate(MOVES)}
NUM_MARTH_MOVES = len(d.MARTH_MOVES)
SHINE_END_LAG = 17  # guess: frames after the 3-frame shine start before Fox can act without jumping
AIRDODGE_FRAMES = 49  # SmashWiki: air dodge lasts 49 frames for Fox (intangible 4-29)
AIRDODGE_INTANGIBLE = (4, 29)
LANDING_SPECIAL_FRAMES = 10  # SmashWiki: landing from an air dodge, 10 frames
DAMAGE_ACTIONS = (Action.DAMAGE_HIGH_1.value, Action.DAMAGE_FLY_NEUTRAL.value)
ATTACK_ACTIONS = tuple(m.action for m in d.MARTH_MOVES)


@dataclass
class Tables:
    circles: torch.Tensor  # [M+1, L, 4, 3]
    loco: torch.Tensor  # [M+1, L]
    cumloco: torch.Tensor  # [M+1, L]
    length: torch.Tensor  # [M+1]
    action: torch.Tensor  # [M+1] libmelee action ids
    damage: torch.Tensor  # [M+1]
    base_kb: torch.Tensor
    kb_growth: torch.Tensor
    angle: torch.Tensor
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
    first = np.full(m + 1, 999.0, np.float32)
    last = np.zeros(m + 1, np.float32)
    reach = np.zeros(m + 1, np.float32)
    for i, mv in enumerate(MOVES):
        # Row f holds the move's frame f (action_frame f); row 0 is unused padding.
        circles[i, 1 : mv.length + 1] = mv.circles
        loco[i, 1 : mv.length + 1] = mv.locomotion
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
        action=moves_attr("action"), damage=moves_attr("damage"), base_kb=moves_attr("base_kb"),
        kb_growth=moves_attr("kb_growth"), angle=moves_attr("angle"), first_active=t(first),
        last_active=t(last), reach=t(reach), intang_lo=t(lo), intang_hi=t(hi),
        weight=t([d.FOX_WEIGHT, d.MARTH_WEIGHT]), height=t([d.FOX_HEIGHT, d.MARTH_HEIGHT]),
        gravity=t([d.FOX.gravity, d.MARTH.gravity]), terminal=t([d.FOX.terminal, d.MARTH.terminal]),
    )


@dataclass(frozen=True)
class CpuLevel:
    """How Melee's CPU levels differ, as the arena models them (all by design: guesses)."""

    reaction: int  # frames before it reacts to the agent's new action
    aggression: float  # chance per frame to start an attack when one reaches
    accuracy: float  # chance its attack choice is one that reaches (else any attack)
    punish: float  # chance per frame to punish end lag it can reach in time
    approach: float  # fraction of run speed used to close distance
    recover: int  # frames it always waits after an attack before starting another
    rest: int  # most extra frames (random) it waits before the next neutral attack


CPU_LEVELS = {
    lvl: CpuLevel(
        reaction=int(round(np.interp(lvl, [1, 9], [30, 1]))),
        # Geometric from level 1 to 8 (each level ~1.4x as eager), then level 9's relentless CPU.
        aggression=float(np.exp(np.interp(lvl, [1, 8, 9], np.log([0.0003, 0.0035, 0.35])))),
        accuracy=float(np.interp(lvl, [1, 9], [0.35, 1.0])),
        # Punishing end lag: never at level 1, rare below 8, always at 9.
        punish=0.0 if lvl == 1 else float(np.exp(np.interp(lvl, [2, 8, 9], np.log([0.0001, 0.003, 1.0])))),
        approach=float(np.interp(lvl, [1, 9], [0.3, 1.0])),
        recover=int(round(np.interp(lvl, [1, 9], [30, 5]))),
        rest=int(round(np.exp(np.interp(lvl, [1, 9], np.log([600, 4]))))),
    )
    for lvl in range(1, 10)
}
