"""The manager: tests."""
