"""The arena's column layout: which row of the stored state holds which field.

Players are stored field-major and player-major as ``[len(P), 2, B]`` (index 0 the agent, Fox;
1 the CPU, Marth) and seen as ``S[B, 2, len(P)]``; per-environment values as ``[len(E), B]``,
seen as ``En[B, len(E)]`` (see :mod:`melee_agent.arena.storage`). ``P`` and ``E`` name the columns.
"""

from __future__ import annotations


class P:
    """Per-player columns."""

    X, Y = 0, 1  # position
    VX, VY = 2, 3  # self speed
    KX, KY = 4, 5  # launch (knockback) speed
    ACT = 6  # libmelee action id
    FACE = 7  # +1 facing right, -1 left
    GND = 8  # on the ground
    JUMPS = 9  # jumps left
    SHIELD = 10  # shield strength
    PCT = 11  # percent
    STOCK = 12
    MOVE = 13  # index into tables.MOVES; NO_MOVE or LOCKED (sim) when not in a move
    HITDONE = 14  # this move's hitbox already connected
    FF = 15  # fast falling
    JHELD = 16  # a jump button was held last frame (a jump needs a fresh press)
    AF = 17  # action frame (1 on an action's first frame)
    STUN = 18  # hitstun or shieldstun frames left
    INV = 19  # respawn invulnerability frames left
    BUSY = 20  # frames left in a timed action
    N = 21


class E:
    """Per-environment columns."""

    EP_FRAME = 0  # frames played in the current episode
    TICK = 1  # frames played since construction (the random streams' counter)
    EPISODE = 2  # episodes started (the reset draws' counter)
    PREV_ACTION = 3  # the agent's previous decision (the 27th state float)
    CPU_CD = 4  # frames before the CPU may start another attack
    ENV_ID = 5  # the environment's index (its own random stream)
    EP_RETURN = 6  # the episode's return so far
    LEVEL = 7  # the CPU level (1-9) of the current episode, drawn at each reset
    N = 8


AGENT, CPU = 0, 1
