"""Playing in the browser: tests (the live manager as the ``manager`` fixture, for spectating)."""

from tests.live_manager import manager  # noqa: F401  (a fixture: pytest finds it by name here)
