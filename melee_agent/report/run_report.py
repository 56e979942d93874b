"""A training run's report, typed: what ``eval.json`` holds, written by `train` and read by `compare` and `bench learn`.

:class:`ModelCheck` is one evaluation (a point of the learning curve, a baseline, the final score);
:class:`TrainingFigures` the run's totals and rates (``eval.json``'s ``training``); :class:`RunReport` the
whole document. Each has one ``to_json`` and one ``from_json``; the keys on disk are the ones `train`
has always written (docs/design.md "Commands" and "Fights"), so reports of older runs read too: one
without ``training`` (before 2026-11-26), one whose ``training`` holds only steps and rows, a fight's
without ``lost_causes``. A missing or mistyped field raises a ``ValueError`` naming it.

Example::

    >>> from melee_agent.report.evaluate import EvalResult
    >>> e = EvalResult(episodes=2, untouched_share=0.5, episodes_cut=0, mean_seconds_to_first_hit=30.0,
    ...                damage_taken=5.0, damage_dealt=0.0, stocks_lost=0.0, stocks_taken=0.0)
    >>> check = ModelCheck("model", 9, e, model_version=3, train_step=300, minutes=1.0)
    >>> report = RunReport(model=check, baselines={}, run_dir="runs/x", curve=[check], kept="last",
    ...                    last_model_check=check, trained_levels=[9], training=TrainingFigures(train_steps=300))
    >>> doc = report.to_json()
    >>> doc["untouched_share"], doc["training"], RunReport.from_json(doc) == report
    (0.5, {'train_steps': 300}, True)
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from melee_agent.report.evaluate import EvalResult


def _optional(d: dict[str, Any], key: str, kind: type | tuple[type, ...], where: str) -> Any:
    """``d[key]`` checked to be a ``kind`` (a JSON number may be an int where a float is meant), or None where
    it is missing or null."""
    v = d.get(key)
    if v is None:
        return None
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if (isinstance(v, bool) and bool not in kinds) or not isinstance(v, kinds):
        raise ValueError(f"{where}: field {key!r} must be {' or '.join(k.__name__ for k in kinds)}, got {v!r}")
    return float(v) if float in kinds and isinstance(v, int) else v  # JSON writes 2.0 as 2 where it was an int


def _object(v: Any, where: str) -> dict[str, Any]:
    if not isinstance(v, dict):
        raise ValueError(f"{where}: must be a JSON object, got {type(v).__name__}")
    return v


@dataclass(frozen=True)
class ModelCheck:
    """One evaluation of a published model (or a baseline policy): a point of the learning curve,
    ``eval.json``'s ``last_model_check``, ``baselines`` and the report itself."""

    policy: str
    """``model``, or the scripted policy's name."""
    cpu_level: int | list[int]
    """The CPU level played, or the levels of the mix."""
    result: EvalResult
    """The figures, with the worst-level ones filled in (by the result's own without a level mix)."""
    action_set: str | None = None
    """The action set a baseline played where it was not the run's; else None."""
    model_version: int | None = None
    """The model's version (``policy == "model"``)."""
    train_step: int | None = None
    """The learner's step the model was published at (``policy == "model"``)."""
    minutes: float | None = None
    """Training minutes when it was evaluated (``policy == "model"``)."""
    note: str | None = None
    """A remark the report carries (a baseline played on another action set)."""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"policy": self.policy, "cpu_level": self.cpu_level, **self.result.to_json()}
        extra = {"action_set": self.action_set, "model_version": self.model_version, "train_step": self.train_step,
                 "minutes": self.minutes, "note": self.note}
        return {**out, **{k: v for k, v in extra.items() if v is not None}}

    @classmethod
    def from_json(cls, d: Any, where: str = "model check") -> ModelCheck:
        d = _object(d, where)
        policy = d.get("policy")
        if not isinstance(policy, str):
            raise ValueError(f"{where}: field 'policy' must be str, got {policy!r}")
        level = d.get("cpu_level")
        if not (isinstance(level, int) and not isinstance(level, bool)) and not (
                isinstance(level, list) and all(isinstance(x, int) and not isinstance(x, bool) for x in level)):
            raise ValueError(f"{where}: field 'cpu_level' must be a level or a list of levels, got {level!r}")
        return cls(policy=policy, cpu_level=level, result=EvalResult.from_json(d, where),
                   action_set=_optional(d, "action_set", str, where),
                   model_version=_optional(d, "model_version", int, where),
                   train_step=_optional(d, "train_step", int, where),
                   minutes=_optional(d, "minutes", (int, float), where), note=_optional(d, "note", str, where))


@dataclass(frozen=True)
class TrainingFigures:
    """``eval.json``'s ``training``: the run's totals, its rates over the training period and where it ran.
    A field an older report lacks is None (and left out of :meth:`to_json`)."""

    train_steps: int | None = None
    """The learner's steps at the end (a resumed run's count from its start)."""
    rows: int | None = None
    """Rows written into the replay, in all."""
    fused: bool | None = None
    """Trained by ``train --fused`` (one process)."""
    seconds: float | None = None
    """Seconds of the training period (checks included, final report not)."""
    rows_per_s: float | None = None
    """Rows into the replay per second of this run's training period."""
    train_steps_per_s: float | None = None
    """Train steps per second of this run's training period."""
    device: str | None = None
    """The learner's device (and, on CUDA, the card's name)."""
    envs: int | None = None
    """The arena's batch (fused runs)."""
    replay_ratio: float | None = None
    """``fused.replay_ratio`` (fused runs)."""
    seed: int | None = None
    """The run's seed (``train.seed``)."""
    chunks: int | None = None
    """Chunks played, where the budget counted them (``train.chunks``) instead of minutes."""

    def to_json(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) is not None}

    @classmethod
    def from_json(cls, d: Any, where: str = "training") -> TrainingFigures:
        d = _object(d, where)
        kinds: dict[str, type | tuple[type, ...]] = {
            "train_steps": int, "rows": int, "fused": bool, "seconds": (int, float), "rows_per_s": (int, float),
            "train_steps_per_s": (int, float), "device": str, "envs": int, "replay_ratio": (int, float),
            "seed": int, "chunks": int}
        return cls(**{k: _optional(d, k, kind, where) for k, kind in kinds.items()})


def _stages(d: dict[str, Any], where: str) -> list[str] | None:
    stages = d.get("trained_stages")
    if stages is not None and (not isinstance(stages, list) or not all(isinstance(x, str) for x in stages)):
        raise ValueError(f"{where}: field 'trained_stages' must be a list of stage names, got {stages!r}")
    return stages


@dataclass(frozen=True)
class RunReport:
    """A training run's ``eval.json``: the kept model's final score (its fields at the document's top level),
    the baselines beside it, the learning curve and how the run went."""

    model: ModelCheck
    """The kept model over every level 1-9 (the document's top level: ``untouched_share``, ``per_level``...)."""
    baselines: dict[str, ModelCheck]
    """The scripted policies over the same levels, by name (empty with ``train.final_baselines = false``)."""
    run_dir: str
    """The run folder."""
    curve: list[ModelCheck]
    """Every periodic check, the untrained network first."""
    kept: str
    """``best`` (a periodic check's model) or ``last`` (the model as training stopped)."""
    last_model_check: ModelCheck
    """The model as training stopped, checked as the periodic checks are."""
    trained_levels: list[int]
    """The CPU levels the run trained against."""
    training: TrainingFigures | None = None
    """Steps, rows and rates; None in a report from before 2026-11-26."""
    whole_games: bool = False
    """A fight's report (whole games): it also holds ``level_9``, ``action_set`` and ``delay_frames``."""
    level_9: ModelCheck | None = None
    """The extra games (fights) or episodes (dodging) at level 9 (None with ``train.final_games_level_9 = 0``)."""
    action_set: str | None = None
    """Fights: the run's action set."""
    delay_frames: int | None = None
    """Fights: the run's input delay in frames."""
    league: dict[str, Any] | None = None
    """A league's run: its members' ratings, games and results (docs/league.md; the league writes it)."""
    trained_stages: list[str] | None = None
    """The stages the run trained on (``env.stage``); None (and absent from the document): Final Destination."""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {**self.model.to_json()}
        if self.whole_games or self.level_9 is not None:
            out["level_9"] = self.level_9.to_json() if self.level_9 is not None else None
        out.update({"baselines": {p: b.to_json() for p, b in self.baselines.items()}, "run_dir": self.run_dir,
                    "curve": [p.to_json() for p in self.curve], "kept": self.kept,
                    "last_model_check": self.last_model_check.to_json(), "trained_levels": list(self.trained_levels)})
        if self.whole_games:
            out.update({"action_set": self.action_set, "delay_frames": self.delay_frames})
        if self.training is not None:
            out["training"] = self.training.to_json()
        if self.league is not None:
            out["league"] = self.league
        if self.trained_stages is not None and list(self.trained_stages) != ["final_destination"]:
            out["trained_stages"] = list(self.trained_stages)
        return out

    @classmethod
    def from_json(cls, d: Any, where: str = "eval.json") -> RunReport:
        """The report a :meth:`to_json` document (an ``eval.json``) holds; a ``ValueError`` names what is wrong."""
        d = _object(d, where)
        # The top level's action_set is the run's (fights), not a baseline's substitute.
        model = ModelCheck.from_json({k: v for k, v in d.items() if k != "action_set"}, where)
        curve = d.get("curve")
        if not isinstance(curve, list):
            raise ValueError(f"{where}: field 'curve' must be a list of checks, got {curve!r}")
        baselines = _object(d.get("baselines", {}), f"{where} baselines")
        kept = d.get("kept")
        if kept not in ("best", "last"):
            raise ValueError(f"{where}: field 'kept' must be 'best' or 'last', got {kept!r}")
        levels = d.get("trained_levels")
        if not isinstance(levels, list) or not all(isinstance(x, int) and not isinstance(x, bool) for x in levels):
            raise ValueError(f"{where}: field 'trained_levels' must be a list of levels, got {levels!r}")
        run_dir = d.get("run_dir")
        if not isinstance(run_dir, str):
            raise ValueError(f"{where}: field 'run_dir' must be str, got {run_dir!r}")
        level_9 = d.get("level_9")
        return cls(
            model=model, baselines={p: ModelCheck.from_json(b, f"{where} baseline {p}") for p, b in baselines.items()},
            run_dir=run_dir, curve=[ModelCheck.from_json(p, f"{where} curve point {i}") for i, p in enumerate(curve)],
            kept=kept, last_model_check=ModelCheck.from_json(d.get("last_model_check"), f"{where} last_model_check"),
            trained_levels=levels,
            training=TrainingFigures.from_json(d["training"], f"{where} training") if d.get("training") is not None
            else None,
            whole_games=model.result.fights is not None,
            level_9=ModelCheck.from_json(level_9, f"{where} level_9") if level_9 is not None else None,
            action_set=_optional(d, "action_set", str, where), delay_frames=_optional(d, "delay_frames", int, where),
            league=_object(d["league"], f"{where} league") if d.get("league") is not None else None,
            trained_stages=_stages(d, where))
