"""The arena: tests."""
