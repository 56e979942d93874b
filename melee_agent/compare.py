"""Training runs side by side: what set them apart, every periodic check, and the final report.

An ablation is several runs of ``melee-agent train`` that differ in a setting or two. Each run folder
holds the config it ran with (``config.json``) and its report (``eval.json``); this module reads them,
finds the settings whose values differ between the runs, and lines the runs up: train steps, each
periodic check (the mix and the worst level), the model kept, the final report, and for fights the
level-9 games, stocks and the share of KOs taken by the most used move. Runs with the same values of
those settings form a group, averaged, since one run of a learning setup says little.

Example::

    >>> runs = [load_run(p) for p in ("runs/T1", "runs/T2", "runs/S1", "runs/S2")]  # doctest: +SKIP
    >>> print(format_table(summarize(runs)))                                          # doctest: +SKIP
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from statistics import mean
from typing import Any


class CompareError(ValueError):
    """A run folder that cannot be compared; the message names the folder and what is missing."""


@dataclass(frozen=True)
class Run:
    """One training run's folder, read."""

    name: str
    """The folder's name (a run's label in the table and on the plot)."""
    path: Path
    """The folder."""
    settings: dict[str, Any]
    """The config it ran with, flattened to ``section.key`` (``learner.lr``, ``env.delay_frames``...)."""
    report: dict[str, Any]
    """Its ``eval.json``."""

    @property
    def fights(self) -> bool:
        """Whether the run played whole games (win rates) rather than dodging episodes (untouched shares)."""
        return "win_rate" in self.report

    @property
    def metric(self) -> str:
        """The report's headline key: ``win_rate`` for fights, ``untouched_share`` for dodging."""
        return "win_rate" if self.fights else "untouched_share"


def _flatten(d: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in d.items():
        if isinstance(v, dict):
            out.update(_flatten(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


def _read_json(path: Path, what: str) -> dict[str, Any]:
    try:
        doc = json.loads(path.read_text())
    except json.JSONDecodeError as e:
        raise CompareError(f"{path}: {what} is not valid JSON ({e})") from None
    if not isinstance(doc, dict):
        raise CompareError(f"{path}: {what} is not a JSON object")
    return doc


def load_run(path: str | Path) -> Run:
    """Read a run folder (``config.json`` and ``eval.json``), or raise :class:`CompareError` saying why not."""
    path = Path(path)
    if not path.is_dir():
        raise CompareError(f"{path}: no such run folder")
    report_path, config_path = path / "eval.json", path / "config.json"
    if not report_path.is_file():
        raise CompareError(f"{path}: no eval.json (a run still training, or one that stopped early: see its "
                           "logs/)")
    if not config_path.is_file():
        raise CompareError(f"{path}: no config.json (not a folder `melee-agent train` wrote)")
    report = _read_json(report_path, "eval.json")
    if "curve" not in report or ("win_rate" not in report and "untouched_share" not in report):
        raise CompareError(f"{path}: eval.json is not a training run's report (no curve, no win rate or "
                           "untouched share)")
    return Run(path.name, path, _flatten(_read_json(config_path, "config.json")), report)


def differing_settings(runs: list[Run]) -> list[str]:
    """The ``section.key`` settings whose values are not the same in every run (absent counts as a value)."""
    keys = sorted({k for r in runs for k in r.settings})
    missing = object()
    return [k for k in keys if len({json.dumps(r.settings.get(k, missing), default=str) for r in runs}) > 1]


def _top_ko(report: dict[str, Any] | None) -> tuple[str, float] | None:
    causes = (report or {}).get("ko_causes") or {}
    total = sum(causes.values())
    if not total:
        return None
    move = max(causes, key=causes.get)
    return move, causes[move] / total


def _stocks(report: dict[str, Any] | None) -> dict[str, float] | None:
    if not report or "stocks_taken_per_game" not in report:
        return None
    taken, lost = report["stocks_taken_per_game"], report["stocks_lost_per_game"]
    return {"taken": taken, "lost": lost, "net": taken - lost}


def run_summary(run: Run, keys: list[str]) -> dict[str, Any]:
    """One run's row: its values of ``keys``, steps, every check, the kept model and the final figures."""
    r, m = run.report, run.metric
    final_levels = r.get("per_level") or {}
    shares = {lv: v.get(m, 0.0) for lv, v in final_levels.items()}
    # The level the final report did worst at; None without levels, or where every level scored the same.
    worst = min(shares, key=shares.get) if len(set(shares.values())) > 1 else None
    out: dict[str, Any] = {
        "run": run.name, "path": str(run.path), "settings": {k: run.settings.get(k) for k in keys},
        "metric": m,
        # The learner's steps and the rows it took in over the whole run (eval.json's "training", written
        # since 2026-11-26); an older report has only the kept model's step.
        "train_steps": (r.get("training") or {}).get("train_steps", r.get("train_step")),
        "rows": (r.get("training") or {}).get("rows"),
        "checks": [{"minutes": p.get("minutes"), m: p.get(m), "worst_level": p.get(f"{m}_worst_level", p.get(m))}
                   for p in r["curve"]],
        "kept": r.get("kept"), "model_version": r.get("model_version"),
        "final": r.get(m), "final_worst_level": r.get(f"{m}_worst_level", r.get(m)),
        "final_worst_level_is": int(worst) if worst is not None else None,
    }
    if run.fights:
        l9 = r.get("level_9") or None
        top = _top_ko(l9 or r)
        out["level_9"] = None if l9 is None else {"games": l9.get("games"), "wins": l9.get("wins"),
                                                   "losses": l9.get("losses"), "draws": l9.get("draws"),
                                                   "win_rate": l9.get("win_rate")}
        out["stocks_level_9"] = _stocks(l9 or final_levels.get("9"))
        out["top_ko"] = None if top is None else {"move": top[0], "share": top[1]}
    return out


def _mean(values: list[float | None]) -> float | None:
    vals = [v for v in values if v is not None]
    return mean(vals) if vals else None


def summarize(runs: list[Run]) -> dict[str, Any]:
    """The comparison document: the differing settings, a row per run, and the mean of each group of runs
    that share those settings' values. Runs of fights and of dodging cannot be mixed."""
    if not runs:
        raise CompareError("no run folders given")
    if len({r.fights for r in runs}) > 1:
        names = ", ".join(f"{r.name} ({'fights' if r.fights else 'dodging'})" for r in runs)
        raise CompareError(f"these runs played different games and have no common figure: {names}")
    keys = differing_settings(runs)
    rows = [run_summary(r, keys) for r in runs]
    groups: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault(json.dumps(row["settings"], sort_keys=True, default=str), []).append(row)
    group_rows = []
    for members in groups.values():
        g: dict[str, Any] = {"settings": members[0]["settings"], "runs": [x["run"] for x in members],
                             "train_steps": _mean([x["train_steps"] for x in members]),
                             "final": _mean([x["final"] for x in members]),
                             "final_worst_level": _mean([x["final_worst_level"] for x in members])}
        if runs[0].fights:
            g["level_9_win_rate"] = _mean([(x["level_9"] or {}).get("win_rate") for x in members])
            g["stocks_net_level_9"] = _mean([(x["stocks_level_9"] or {}).get("net") for x in members])
            g["top_ko_share"] = _mean([(x["top_ko"] or {}).get("share") for x in members])
        group_rows.append(g)
    return {"game": "fight" if runs[0].fights else "dodge", "metric": runs[0].metric, "settings": keys,
            "runs": rows, "groups": group_rows}


def _pct(x: float | None, digits: int = 0) -> str:
    return "-" if x is None else f"{100 * x:.{digits}f}%"


def _settings_text(settings: dict[str, Any]) -> str:
    return ", ".join(f"{k}={json.dumps(v, default=str)}" for k, v in settings.items()) or "(the same config)"


def _table(rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows)


def format_table(doc: dict[str, Any]) -> str:
    """The comparison as text: the settings that differ, a row per run with every check, then the groups."""
    fights = doc["game"] == "fight"
    what = "games won" if fights else "untouched"
    lines = [f"settings that differ: {', '.join(doc['settings']) or 'none (repeats of one config)'}",
             f"checks: minutes: {what} over the mix / at the worst level"]
    head = ["run", "settings", "train steps", "checks", "kept", "final (worst level)"]
    if fights:
        head += ["level 9", "stocks at 9 (taken-lost)", "top KO move"]
    rows = [head]
    for r in doc["runs"]:
        checks = "; ".join(f"{c['minutes']:.3g}: {_pct(c[doc['metric']])}/{_pct(c['worst_level'])}"
                           for c in r["checks"] if c["minutes"] is not None)
        worst = "" if r["final_worst_level_is"] is None else f" at {r['final_worst_level_is']}"
        steps = "-" if not r["train_steps"] else f"{r['train_steps']:,}" + (f" ({r['rows'] / 1e6:.2f}M rows)" if r["rows"] else "")
        row = [r["run"], _settings_text(r["settings"]), steps,
               checks, f"{r['kept']} v{r['model_version']}", f"{_pct(r['final'], 1)} ({_pct(r['final_worst_level'])}{worst})"]
        if fights:
            l9, st, top = r["level_9"], r["stocks_level_9"], r["top_ko"]
            row += ["-" if not l9 else f"{_pct(l9['win_rate'], 1)} ({l9['wins']}-{l9['losses']}-{l9['draws']})",
                    "-" if not st else f"{st['taken']:.2f}-{st['lost']:.2f} = {st['net']:+.2f}",
                    "-" if not top else f"{top['move']} {_pct(top['share'], 1)}"]
        rows.append(row)
    lines.append(_table(rows))
    if len(doc["groups"]) < len(doc["runs"]):
        ghead = ["group", "runs", "mean steps", "mean final", "mean worst level"]
        if fights:
            ghead += ["mean level 9", "mean stocks at 9", "mean top KO share"]
        grows = [ghead]
        for g in doc["groups"]:
            row = [_settings_text(g["settings"]), " ".join(g["runs"]),
                   "-" if g["train_steps"] is None else f"{g['train_steps']:,.0f}", _pct(g["final"], 1),
                   _pct(g["final_worst_level"], 1)]
            if fights:
                net = g["stocks_net_level_9"]
                row += [_pct(g["level_9_win_rate"], 1), "-" if net is None else f"{net:+.2f}", _pct(g["top_ko_share"], 1)]
            grows.append(row)
        lines += ["", _table(grows)]
    return "\n".join(lines)


def plot(doc: dict[str, Any], path: str | Path) -> None:
    """Every run's periodic checks on one plot: the mix (solid) and the worst level (dashed), one colour
    per group of runs that share their settings."""
    from melee_agent.plots import CURVE_METRICS, figure  # noqa: PLC0415

    m = doc["metric"]
    palette = ("#3b7dd8", "#c62828", "#2e7d32", "#8e44ad", "#d86b3b", "#00838f", "#6d4c41", "#777777")
    colour = {json.dumps(g["settings"], sort_keys=True, default=str): palette[i % len(palette)]
              for i, g in enumerate(doc["groups"])}
    with figure(path, (7.5, 4.2), f"{len(doc['runs'])} runs: the mix (solid) and the worst level (dashed)") as ax:
        for r in doc["runs"]:
            c = colour[json.dumps(r["settings"], sort_keys=True, default=str)]
            pts = [p for p in r["checks"] if p["minutes"] is not None]
            label = f"{r['run']}: {_settings_text(r['settings'])}"
            ax.plot([p["minutes"] for p in pts], [100 * (p[m] or 0.0) for p in pts], "o-", color=c, ms=3, label=label)
            ax.plot([p["minutes"] for p in pts], [100 * (p["worst_level"] or 0.0) for p in pts], "--", color=c, lw=1)
        ax.set_xlabel("training time (minutes)")
        ax.set_ylabel(CURVE_METRICS[m])
        ax.set_ylim(-2, 102)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="best")
