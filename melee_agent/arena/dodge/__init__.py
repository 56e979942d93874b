"""The dodging game's frame: Fox against Marth's scripted CPU, one hit ends the episode."""
