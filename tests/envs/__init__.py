"""The environment contract: tests."""
