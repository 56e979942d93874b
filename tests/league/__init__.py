"""The league's parts: ratings, the ladder, exploit: tests."""
