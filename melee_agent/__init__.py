"""melee-agent: a Dueling DQN for Super Smash Bros. Melee with an in-device experience replay.

Modules: `state` (the 27-float layout), `actions` (controller-state action sets), `model`
(Dueling DQN and its safetensors files), `replay` (device and host replays), `learner` (the train
step), `arena` (the embedded simulator), `dolphin` (real Melee through libmelee).
"""

__version__ = "0.1.0"
