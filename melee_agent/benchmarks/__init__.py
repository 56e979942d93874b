"""The benchmarks behind `melee-agent bench`: arena, replay, prioritized, ingest, fed, learn."""
