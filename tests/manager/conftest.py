"""The manager' tests: the live manager as the ``manager`` fixture (tests/live_manager.py)."""

from tests.live_manager import manager  # noqa: F401  (a fixture: pytest finds it by name here)
