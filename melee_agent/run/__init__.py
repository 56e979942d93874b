"""The local training run (`melee-agent train`): the manager and workers on one machine, or fused."""
