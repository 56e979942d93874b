"""The benchmarks: tests."""
