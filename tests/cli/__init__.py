"""The command line: tests."""
