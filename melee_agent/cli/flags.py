"""Argument types that refuse a value that can never work, when the command line is parsed.

Each is an ``argparse`` ``type=``: a bad value ends the command with one line naming the flag
and what it accepts (argparse's ``error: argument --port: ...``, exit code 2) before anything
starts, instead of a traceback later or a worker waiting for ever on a manager that cannot exist.

>>> port("8000"), positive_int("3"), manager_url("http://127.0.0.1:8000/")
(8000, 3, 'http://127.0.0.1:8000')
>>> port("70000")
Traceback (most recent call last):
...
argparse.ArgumentTypeError: must be a port number 1-65535, got '70000'
"""

from __future__ import annotations

import argparse
import math
from urllib.parse import urlsplit

import torch


def _int(text: str, what: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be {what}, got {text!r}") from None


def port(text: str) -> int:
    """A TCP port to serve on: 1-65535."""
    v = _int(text, "a port number 1-65535")
    if not 1 <= v <= 65535:
        raise argparse.ArgumentTypeError(f"must be a port number 1-65535, got {text!r}")
    return v


def port_or_free(text: str) -> int:
    """A TCP port, or 0 for a free one."""
    v = _int(text, "a port number 1-65535 (or 0: a free one)")
    if not 0 <= v <= 65535:
        raise argparse.ArgumentTypeError(f"must be a port number 1-65535 (or 0: a free one), got {text!r}")
    return v


def positive_int(text: str) -> int:
    v = _int(text, "a positive integer")
    if v <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}")
    return v


def nonneg_int(text: str) -> int:
    v = _int(text, "an integer >= 0")
    if v < 0:
        raise argparse.ArgumentTypeError(f"must be an integer >= 0, got {text!r}")
    return v


MAX_SEED = 2**62  # the arena adds offsets to a seed as an int64 (torch): 2^62 leaves them room


def seed(text: str) -> int:
    """A random seed: a whole number from 0 to 2^62."""
    v = _int(text, "an integer from 0 to 2^62")
    if not 0 <= v <= MAX_SEED:
        raise argparse.ArgumentTypeError(f"must be an integer from 0 to 2^62 ({MAX_SEED}), got {text!r}")
    return v


def positive_float(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a positive number, got {text!r}") from None
    if not (math.isfinite(v) and v > 0):
        raise argparse.ArgumentTypeError(f"must be a positive number, got {text!r}")
    return v


def manager_url(text: str) -> str:
    """An http(s) URL with a host (and a valid port, if any), without a trailing slash."""
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 (raises ValueError on a port out of range)
    except ValueError as e:
        raise argparse.ArgumentTypeError(f"must be an http(s) URL such as http://127.0.0.1:8000, got {text!r} ({e})") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise argparse.ArgumentTypeError(f"must be an http(s) URL such as http://127.0.0.1:8000, got {text!r}")
    return text.rstrip("/")


def device(text: str) -> str:
    """A torch device string (cpu, cuda, cuda:1, mps ...); whether it is present is :func:`missing_device`'s
    question, asked before a command runs (parsing alone, as a test of the documented commands does, needs
    no GPU)."""
    try:
        torch.device(text)
    except (RuntimeError, ValueError):
        raise argparse.ArgumentTypeError(f"must be a torch device such as cpu, cuda or cuda:1, got {text!r}") from None
    return text


def missing_device(text: str, what: str = "--device") -> str | None:
    """Why the torch device ``text`` (given as ``what``) cannot be used here, or None where it can.

    >>> missing_device("cpu") is None, missing_device("gpu0", "train.check_device")
    (True, 'train.check_device gpu0: not a torch device (cpu, cuda, cuda:1, mps ...)')
    """
    try:
        dev = torch.device(text)
    except RuntimeError:
        return f"{what} {text}: not a torch device (cpu, cuda, cuda:1, mps ...)"
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            build = "this torch is a CPU build" if torch.version.cuda is None else "no NVIDIA GPU is visible"
            return f"{what} {text}: CUDA is not available ({build})"
        if dev.index is not None and dev.index >= torch.cuda.device_count():
            return f"{what} {text}: there are {torch.cuda.device_count()} CUDA device(s), numbered from 0"
    elif dev.type == "mps" and not torch.backends.mps.is_available():
        return f"{what} {text}: MPS is not available here"
    elif dev.type not in ("cpu", "cuda", "mps"):
        return f"{what} {text}: melee-agent runs on cpu, cuda or mps"
    return None
