"""The RL core: tests."""
