"""Real Melee through Dolphin (and its stand-in): tests."""
