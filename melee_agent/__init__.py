"""melee-agent: a Dueling DQN for Super Smash Bros. Melee with an in-device experience replay.

Packages by role: ``rl`` (the Dueling DQN, the device replays, the learner, policies), ``envs`` (the
environment contract, the 27-float state, action sets, rewards, Gymnasium), ``arena`` (the embedded
simulator), ``dolphin`` (real Melee through libmelee), ``games`` (the dodging task and fights as objects),
``io`` (file and wire formats), ``report`` (evaluation, comparing runs, plots, watching, fidelity), ``run``
(the local training run), ``benchmarks``, ``cli``, ``umi``; ``config`` is the one module at the top.
"""

__version__ = "0.2.0"
