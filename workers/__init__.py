"""Workers: play with a fixed model, upload experience, fetch new models; launchers."""
