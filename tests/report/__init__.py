"""Reports: tests."""
