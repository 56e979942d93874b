"""The PNGs the commands draw: the learning curve of a training run (untouched share, or win rate
for fights) and the untouched share per CPU level. Matplotlib runs headless (Agg) and every file is written atomically.

Example::

    >>> import tempfile, pathlib
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "levels.png"
    >>> per_level_bars([{"cpu_level": 1, "untouched_share": 0.5}], "random", out); out.exists()
    True
"""

from __future__ import annotations

import io
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from melee_agent.io.files import atomic_write_bytes

PAPER_UNTOUCHED = 74.6  # Dilipkumar et al. 2017, real Melee against the level-9 CPU
BLUE = "#3b7dd8"


class Png:
    """What :func:`png` drew: the PNG file's bytes, set when its ``with`` block ends."""

    data: bytes = b""


@contextmanager
def png(size: tuple[float, float], title: str) -> Iterator[tuple[Any, Png]]:
    """``with png(size, title) as (ax, out):`` draw on ``ax``; ``out.data`` holds the PNG on exit (nothing
    written: for a command that writes several files only once all of them are made)."""
    import matplotlib  # noqa: PLC0415 (heavy; only the commands that draw need it)

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    fig, ax = plt.subplots(figsize=size, dpi=120)
    out = Png()
    try:
        yield ax, out
        ax.set_title(title, fontsize=10)
        fig.tight_layout()
        buf = io.BytesIO()
        fig.savefig(buf, format="png")
        out.data = buf.getvalue()
    finally:
        plt.close(fig)


@contextmanager
def figure(path: str | Path, size: tuple[float, float], title: str) -> Iterator[Any]:
    """``with figure(path, size, title) as ax:`` draw on ``ax``; the PNG is written on exit."""
    with png(size, title) as (ax, out):
        yield ax
    atomic_write_bytes(path, out.data)


#: What a learning curve can plot: the key in each evaluation, and its axis label.
CURVE_METRICS = {"untouched_share": "untouched for a minute (%)", "win_rate": "games won (%)"}


def learning_curve(points: list[dict[str, Any]], baselines: dict[str, float], title: str, path: str | Path,
                   metric: str = "untouched_share") -> None:
    """Untouched share (or, for fights, ``metric="win_rate"``) of each periodic evaluation vs training
    minutes, with baselines as lines.

    Where the evaluations played several CPU levels, each level is a thin line and the worst level
    at each check a dashed red one, beside the share over the mix. The paper's line is drawn for the
    untouched share only.
    """
    if metric not in CURVE_METRICS:
        raise ValueError(f"unknown metric {metric!r}; known: {', '.join(CURVE_METRICS)}")
    key = metric
    with figure(path, (6.5, 3.8), title) as ax:
        minutes = [p["minutes"] for p in points]
        levels = sorted({lv for p in points for lv in p.get("per_level", {})}, key=int)
        for lv in levels:
            ax.plot([p["minutes"] for p in points if lv in p.get("per_level", {})],
                    [100 * p["per_level"][lv].get(key, 0.0) for p in points if lv in p.get("per_level", {})],
                    "-", lw=0.8, alpha=0.35, color="#777777", label="each level" if lv == levels[0] else None)
        ax.plot(minutes, [100 * p.get(key, 0.0) for p in points], "o-", color=BLUE,
                label="Dueling DQN (greedy)" + (", level mix" if levels else ""))
        if levels:
            ax.plot(minutes, [100 * p.get(f"{key}_worst_level", p.get(key, 0.0)) for p in points],
                    "s--", color="#c62828", ms=4, label="worst level")
        for i, (name, share) in enumerate(baselines.items()):
            ax.axhline(100 * share, ls="--", lw=1, color=("#999999", "#d86b3b", "#4caf50", "#8e44ad")[i % 4], label=name)
        if metric == "untouched_share":
            ax.axhline(PAPER_UNTOUCHED, ls=":", lw=1, color="black", label=f"paper, real Melee ({PAPER_UNTOUCHED}%)")
        ax.set_xlabel("training time (minutes)")
        ax.set_ylabel(CURVE_METRICS[metric])
        ax.set_ylim(-2, 102)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="center right")


#: What :func:`per_level_bars` can plot, and its axis label.
LEVEL_BAR_KEYS = {"untouched_share": "untouched for a minute (%)", "win_rate": "games won (%)"}


def per_level_bars(rows: list[dict[str, Any]], title: str, path: str | Path, key: str = "untouched_share") -> None:
    """Bar chart of a share per CPU level: the untouched share (dodging) or the win rate (fights)."""
    if key not in LEVEL_BAR_KEYS:
        raise ValueError(f"per_level_bars plots {' or '.join(LEVEL_BAR_KEYS)}, not {key!r}")
    with figure(path, (6, 3.5), title) as ax:
        levels = [r["cpu_level"] for r in rows]
        share = [100 * r[key] for r in rows]
        ax.bar(levels, share, color=BLUE)
        for lv, s in zip(levels, share):
            ax.text(lv, s + 1, f"{s:.0f}", ha="center", fontsize=8)
        ax.set_xticks(levels)
        ax.set_ylim(0, 105)
        ax.set_xlabel("CPU level")
        ax.set_ylabel(LEVEL_BAR_KEYS[key])
        ax.grid(axis="y", alpha=0.3)
