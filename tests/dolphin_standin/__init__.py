"""A Slippi Dolphin stand-in for tests: an executable libmelee's ``Console`` launches as it launches Dolphin."""
