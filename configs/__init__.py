"""The shipped run configs (``*.toml``), installed as package data of ``melee_agent.configs``."""
