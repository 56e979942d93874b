"""File and wire formats: experience batches, atomic files, safetensors headers, Slippi replays."""
