"""File and wire formats: tests."""
