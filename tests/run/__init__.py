"""Whole local runs: tests."""
