"""Training runs side by side: what set them apart, every periodic check, and the final report.

An ablation is several runs of ``melee-agent train`` that differ in a setting or two. Each run folder
holds the config it ran with (``config.json``) and its report (``eval.json``); this module reads them,
finds the settings whose values differ between the runs, and lines the runs up: train steps, each
periodic check (the mix and the worst level), the model kept, the final report, and for fights the
level-9 games, stocks and the share of KOs taken by the most used move. Runs with the same values of
those settings form a group, averaged, since one run of a learning setup says little. A figure a report
does not hold is shown as missing ("-"), never filled in from another one.

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

from melee_agent.games import game_of, game_playing
from melee_agent.report.evaluate import GameFigures
from melee_agent.report.run_report import RunReport, TrainingFigures
from melee_agent.report.text_table import text_table


class CompareError(ValueError):
    """A run folder that cannot be compared; the message names the folder and what is missing."""


#: How a setting one run's config lacks is shown (a config from before the setting existed).
ABSENT = "(absent)"


@dataclass(frozen=True)
class Run:
    """One training run's folder, read."""

    name: str
    """The run's label in the table and on the plot: the folder's name (with its parent's where two
    runs' folders share a name)."""
    path: Path
    """The folder."""
    settings: dict[str, Any]
    """The config it ran with, flattened to ``section.key`` (``learner.lr``, ``env.delay_frames``...)."""
    report: RunReport
    """Its ``eval.json``."""

    @property
    def fights(self) -> bool:
        """Whether the run played whole games (win rates) rather than dodging episodes (untouched shares)."""
        return self.report.whole_games

    @property
    def metric(self) -> str:
        """The report's headline key: ``win_rate`` for fights, ``untouched_share`` for dodging."""
        return game_playing(self.report.whole_games).headline


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
    try:
        report = RunReport.from_json(_read_json(report_path, "eval.json"), "eval.json")
    except ValueError as e:
        raise CompareError(f"{report_path}: not a training run's report ({e})") from None
    return Run(path.name, path, _flatten(_read_json(config_path, "config.json")), report)


def load_runs(paths: list[str | Path]) -> list[Run]:
    """:func:`load_run` for each folder; a folder given twice is refused, and runs whose folders share a
    name are labelled with their parent folder's name too."""
    runs, seen = [], {}
    for p in paths:
        run = load_run(p)
        key = run.path.resolve()
        if key in seen:
            raise CompareError(f"{p}: the same run folder as {seen[key]}, given twice")
        seen[key] = p
        runs.append(run)
    names = [r.name for r in runs]
    return [Run(f"{r.path.resolve().parent.name}/{r.name}", r.path, r.settings, r.report) if names.count(r.name) > 1
            else r for r in runs]


def differing_settings(runs: list[Run], ignore: tuple[str, ...] = ()) -> list[str]:
    """The ``section.key`` settings whose values are not the same in every run (absent counts as a value),
    less those named in ``ignore`` (a key, or a section's prefix ending in ``.`` such as ``dolphin.``)."""
    def ignored_by(key: str, i: str) -> bool:
        return key == i or (i.endswith(".") and key.startswith(i))

    keys = sorted({k for r in runs for k in r.settings})
    unknown = [i for i in ignore if not any(ignored_by(k, i) for k in keys)]
    if unknown:  # a typo would otherwise ignore nothing, silently
        raise CompareError(f"--ignore {unknown[0]}: no run has such a setting (a section.key such as learner.lr, "
                           "or a section such as dolphin.)")
    keys = [k for k in keys if not any(ignored_by(k, i) for i in ignore)]
    return [k for k in keys if len({json.dumps(r.settings.get(k, ABSENT), default=str) for r in runs}) > 1]


def _top_ko(games: GameFigures | None) -> tuple[str, float] | None:
    causes = games.ko_causes if games is not None else {}
    total = sum(causes.values())
    if not total:
        return None
    move = max(causes, key=lambda k: causes[k])
    return move, causes[move] / total


def _stocks(games: GameFigures | None) -> dict[str, float] | None:
    if games is None:
        return None
    taken, lost = games.stocks_taken_per_game, games.stocks_lost_per_game
    return {"taken": taken, "lost": lost, "net": taken - lost}


def run_summary(run: Run, keys: list[str]) -> dict[str, Any]:
    """One run's row: its values of ``keys``, steps, every check, the kept model and the final figures.

    ``train_steps`` and ``rows`` are the run's totals (eval.json's ``training``, written since 2026-11-26;
    None in an older report, whose ``train_step`` is only the kept model's step: ``model_step``). The
    level-9 figures are the report's extra level-9 games (``level_9``); None where it has none."""
    r, m = run.report, run.metric
    final = r.model.result
    shares = {lv: getattr(v, m) for lv, v in (final.per_level or {}).items() if getattr(v, m) is not None}
    low = min(shares.values()) if shares else None
    training = r.training or TrainingFigures()
    out: dict[str, Any] = {
        "run": run.name, "path": str(run.path), "settings": {k: run.settings.get(k, ABSENT) for k in keys},
        "metric": m, "train_steps": training.train_steps, "rows": training.rows,
        "model_step": r.model.train_step,
        "checks": [{"minutes": p.minutes, m: getattr(p.result, m), "worst_level": getattr(p.result, f"{m}_worst_level")}
                   for p in r.curve],
        "kept": r.kept, "model_version": r.model.model_version,
        "final": getattr(final, m), "final_worst_level": getattr(final, f"{m}_worst_level"),
        # The levels the final report did worst at ([] where every level scored the same, or none were played).
        "final_worst_levels": sorted(lv for lv, v in shares.items() if v == low)
        if len(set(shares.values())) > 1 else [],
    }
    if run.fights:
        l9 = r.level_9.result.fights if r.level_9 is not None else None
        top = _top_ko(l9)
        out["level_9"] = None if l9 is None else {k: getattr(l9, k) for k in ("games", "wins", "losses", "draws",
                                                                              "win_rate")}
        out["stocks_level_9"] = _stocks(l9)
        out["top_ko"] = None if top is None else {"move": top[0], "share": top[1]}
    return out


def _mean(values: list[float | None]) -> dict[str, Any] | None:
    """The mean of the values that are there, and how many were (a group's figure may cover fewer runs)."""
    vals = [v for v in values if v is not None]
    return {"mean": mean(vals), "runs": len(vals)} if vals else None


def _group_key(settings: dict[str, Any]) -> str:
    return json.dumps(settings, sort_keys=True, default=str)


def summarize(runs: list[Run], ignore: tuple[str, ...] = ()) -> dict[str, Any]:
    """The comparison document: the differing settings (less ``ignore``), a row per run, and the means of
    each group of runs that share those settings' values. Runs of fights and of dodging cannot be mixed."""
    if not runs:
        raise CompareError("no run folders given")
    if len({r.fights for r in runs}) > 1:
        names = ", ".join(f"{r.name} ({'fights' if r.fights else 'dodging'})" for r in runs)
        raise CompareError(f"these runs played different games and have no common figure: {names}")
    keys = differing_settings(runs, ignore)
    rows = [run_summary(r, keys) for r in runs]
    groups: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault(_group_key(row["settings"]), []).append(row)
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
    return {"game": game_playing(runs[0].fights).name, "metric": runs[0].metric, "settings": keys,
            "ignored": list(ignore), "runs": rows, "groups": group_rows}


def _pct(x: float | None, digits: int = 0) -> str:
    return "-" if x is None else f"{100 * x:.{digits}f}%"


def _settings_text(settings: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v if v == ABSENT else json.dumps(v, default=str)}" for k, v in settings.items()) \
        or "(the same config)"


def _steps_text(r: dict[str, Any]) -> str:
    if r["train_steps"] is None:
        return "-" if r["model_step"] is None else f"- (kept model's: {r['model_step']:,})"
    return f"{r['train_steps']:,}" + ("" if r["rows"] is None else f" ({r['rows'] / 1e6:.2f}M rows)")


def _mean_text(g: dict[str, Any] | None, fmt: Any, n: int) -> str:
    """A group's mean, saying how many of its ``n`` runs it covers where that is not all of them."""
    if g is None:
        return "-"
    return fmt(g["mean"]) + ("" if g["runs"] == n else f" ({g['runs']} of {n})")


def format_table(doc: dict[str, Any]) -> str:
    """The comparison as text: the settings that differ, a row per run with every check, then the groups."""
    fights, m = game_of(doc["game"]).whole_games, doc["metric"]
    what = "games won" if fights else "untouched"
    ignored = f" (ignoring {', '.join(doc['ignored'])})" if doc.get("ignored") else ""
    lines = [f"settings that differ{ignored}: {', '.join(doc['settings']) or 'none (repeats of one config)'}",
             f"checks: minutes: {what} over the mix / at the worst level"]
    head = ["run", "settings", "train steps", "checks", "kept", "final (worst level)"]
    if fights:
        head += ["level 9", "stocks at 9 (taken-lost)", "top KO move at 9"]
    rows = [head]
    for r in doc["runs"]:
        checks = "; ".join(f"{'?' if c['minutes'] is None else format(c['minutes'], '.3g')}: "
                           f"{_pct(c[m])}/{_pct(c['worst_level'])}" for c in r["checks"])
        worst = f" at {', '.join(map(str, r['final_worst_levels']))}" if r["final_worst_levels"] else ""
        kept = "-" if r["kept"] is None else f"{r['kept']}" + ("" if r["model_version"] is None else f" v{r['model_version']}")
        row = [r["run"], _settings_text(r["settings"]), _steps_text(r), checks or "-", kept,
               f"{_pct(r['final'], 1)} ({_pct(r['final_worst_level'])}{worst})"]
        if fights:
            l9, st, top = r["level_9"], r["stocks_level_9"], r["top_ko"]
            row += ["-" if not l9 else f"{_pct(l9['win_rate'], 1)} ({l9['wins']}-{l9['losses']}-{l9['draws']})",
                    "-" if not st else f"{st['taken']:.2f}-{st['lost']:.2f} = {st['net']:+.2f}",
                    "-" if not top else f"{top['move']} {_pct(top['share'], 1)}"]
        rows.append(row)
    lines.append(text_table(rows))
    if len(doc["groups"]) < len(doc["runs"]):
        ghead = ["group", "runs", "mean train steps", "mean final", "mean worst level"]
        if fights:
            ghead += ["mean level 9", "mean stocks at 9", "mean top KO share"]
        grows = [ghead]
        for g in doc["groups"]:
            n = len(g["runs"])
            row = [_settings_text(g["settings"]), " ".join(g["runs"]),
                   _mean_text(g["train_steps"], lambda v: f"{v:,.0f}", n), _mean_text(g["final"], lambda v: _pct(v, 1), n),
                   _mean_text(g["final_worst_level"], lambda v: _pct(v, 1), n)]
            if fights:
                row += [_mean_text(g["level_9_win_rate"], lambda v: _pct(v, 1), n),
                        _mean_text(g["stocks_net_level_9"], lambda v: f"{v:+.2f}", n),
                        _mean_text(g["top_ko_share"], lambda v: _pct(v, 1), n)]
            grows.append(row)
        lines += ["", text_table(grows)]
    return "\n".join(lines)


def plot_png(doc: dict[str, Any]) -> bytes:
    """Every run's periodic checks on one plot, as PNG bytes: the mix (solid) and the worst level
    (dashed), one colour per group of runs that share their settings; a check missing a figure is left out."""
    from melee_agent.report.plots import CURVE_METRICS, png  # noqa: PLC0415

    m = doc["metric"]
    palette = ("#3b7dd8", "#c62828", "#2e7d32", "#8e44ad", "#d86b3b", "#00838f", "#6d4c41", "#777777")
    colour = {_group_key(g["settings"]): palette[i % len(palette)] for i, g in enumerate(doc["groups"])}
    with png((7.5, 4.2), f"{len(doc['runs'])} runs: the mix (solid) and the worst level (dashed)") as (ax, out):
        for r in doc["runs"]:
            c = colour[_group_key(r["settings"])]
            for key, style in ((m, "o-"), ("worst_level", "--")):
                pts = [p for p in r["checks"] if p["minutes"] is not None and p[key] is not None]
                ax.plot([p["minutes"] for p in pts], [100 * p[key] for p in pts], style, color=c, ms=3,
                        lw=1.5 if key == m else 1, label=f"{r['run']}: {_settings_text(r['settings'])}" if key == m else None)
        ax.set_xlabel("training time (minutes)")
        ax.set_ylabel(CURVE_METRICS[m])
        ax.set_ylim(-2, 102)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="best")
    return out.data
