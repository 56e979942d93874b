"""Playing in the browser: tests."""
