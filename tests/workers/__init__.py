"""Workers and their launchers: tests."""
