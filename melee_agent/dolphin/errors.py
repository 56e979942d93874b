"""The one error Dolphin's parts raise (its own module, so that every part can import it without a circle)."""


class DolphinError(RuntimeError):
    """Dolphin cannot be started or kept running; the message says what to set or what happened."""
