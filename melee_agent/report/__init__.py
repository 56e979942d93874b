"""Reading results: evaluation, run comparison, plots, videos, watching, fidelity against replays."""
