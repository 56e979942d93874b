"""Both sides played by models: Elo ratings, the round-robin ladder, best responses against a frozen model (exploit)."""
