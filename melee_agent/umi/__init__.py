"""A trained model in the Computer Melee Championship, through the Universal Melee Interface (UMI v1).

PyPI ``umi-melee`` (module ``umi``) carries the protocol: a bot connects to ``UMI_SOCKET``, receives
batches of canonical frames (``umi.frame.FRAME``, seat 0 = the bot) and answers each with a
13-float controller row per game; the arena applies the input delay.

Modules: :mod:`~melee_agent.umi.frames` (UMI frames to the 27-float state, through the one state
table), :mod:`~melee_agent.umi.bot` (the ``umi.Bot`` that plays a model's macros frame by frame,
one memory per game), :mod:`~melee_agent.umi.export` (the zip the championship takes).
"""

from melee_agent.umi.bot import MeleeAgentBot, controller_table
from melee_agent.umi.frames import encode_frames, fighter_fields

__all__ = ["MeleeAgentBot", "controller_table", "encode_frames", "fighter_fields"]
