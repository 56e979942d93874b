"""The championship bot: tests."""
