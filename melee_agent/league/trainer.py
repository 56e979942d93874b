"""The league in one process: the main agent against its pool, exploiters against the main, and everyone's rating.

``configs/league.toml`` (``league.enabled``, on the fused path: ``train --config league``). One loop::

    repeat:
        weights = PFSP over the drawable members (the main's recent win rates; league/pfsp.py)
        the main plays one chunk, in the CPU's arena (its level drawn by the CPU levels' weights) with the CPU
            levels' total weight, else in the models' arena (each game's port 1 drawn by the models' weights)
        each exploiter plays league.exploiter_chunks chunks against the current main (the main's acting network,
            greedy) and learns
        every finished game is a result of the main against the member that played it (payoff: totals, the win
            rates PFSP reads, Elo)
        an exploiter that wins exploiter_promote_at of its recent games: a frozen copy joins the pool, and it is
            reset; one that has stopped winning (below exploiter_reset_below past its patience): reset
        a snapshot of the main is due every league.snapshot_every_steps train steps: a frozen copy joins the pool

The main's learner, replay, checkpoints and TensorBoard are the fused trainer's (:mod:`melee_agent.run.fused`); the
models' arena is a second player feeding the same replay. Every exploiter is a fused trainer of its own in
``RUN/league/exploiterI-genG/``; snapshots and promoted exploiters are saved as model files in
``RUN/league/members/`` (``melee-agent ladder`` reads them). TensorBoard ``league/``: ``elo/NAME``,
``win_rate/NAME`` (the main's recent score), ``pfsp/NAME`` (its draw probability), ``members``, ``snapshots``,
``exploiter_resets``, ``exploiter_promotions``; :meth:`LeagueTrainer.report` is ``eval.json``'s ``league``.

Limits (DESIGN.md "Ports"): the CPU plays Marth only, so the CPU's arena keeps ``env.characters``; the models' arena
is a ditto of the main's character; model opponents play on the eager arena, without input delay. Every game is a
training game: the main and the exploiters play with their Ape-X exploration, so the ratings rate that play.
"""

from __future__ import annotations

import copy
import dataclasses
import random
import time
from pathlib import Path
from typing import Any

import torch

from melee_agent.arena.ports import Opponents
from melee_agent.config import Config, env_levels, env_stages
from melee_agent.envs.make import make_env
from melee_agent.league.exploiters import ExploiterLife
from melee_agent.league.payoff import Payoff
from melee_agent.league.pool import Pool, PoolMember
from melee_agent.league.pool_opponents import PoolOpponents
from melee_agent.league.results_env import ResultsEnv
from melee_agent.league.schedule import SnapshotSchedule
from melee_agent.rl.seeds import derive
from melee_agent.run.fused import FusedTrainer, fused_envs, repeat

LOG_EVERY_S = 2.0  # league/ scalars, as often as the fused trainer's status scalars


def greedy(net: torch.nn.Module):
    """A network's greedy policy (an opponent plays without exploration)."""

    @torch.inference_mode()
    def act(obs: torch.Tensor) -> torch.Tensor:
        return net(obs).argmax(1)

    return act


def frozen(net: torch.nn.Module) -> torch.nn.Module:
    return copy.deepcopy(net).eval().requires_grad_(False)


@dataclasses.dataclass
class Exploiter:
    """One exploiter: its fused trainer (arena against the main, learner, replay) and its life."""

    index: int
    fused: FusedTrainer
    life: ExploiterLife

    @property
    def name(self) -> str:
        return exploiter_name(self.index, self.life.generation)


def exploiter_name(index: int, generation: int) -> str:
    return f"exploiter{index}-gen{generation}"


class LeagueTrainer:
    """The league's loop (see the module's docstring), with the fused trainer's interface: ``work``, ``progress``,
    ``model_bytes``, ``stop``, ``trainer`` and ``learner`` are the main's."""

    def __init__(self, cfg: Config, run_dir: str | Path, device: str = "cpu", resume: bool = False,
                 seed: int | None = None):
        lg = cfg.league
        if not lg.enabled:
            raise ValueError("LeagueTrainer runs a config with league.enabled = true (configs/league.toml)")
        if resume:
            raise ValueError("a league run does not resume (its pool and exploiters are not checkpointed); start a "
                             "new run folder")
        self.cfg, self.run_dir, self.device = cfg, Path(run_dir), device
        # The run's seed (train.seed unless given): the main's arena plays from it; the league's draws, its models'
        # arena and each exploiter from seeds derived from it (melee_agent/rl/seeds.py).
        self.seed = cfg.train.seed if seed is None else seed
        self.rng = random.Random(derive(self.seed, "league"))
        self.character = cfg.env.characters[0]
        self.payoff = Payoff(decay=lg.win_rate_decay)
        self.pool = Pool(power=lg.pfsp_power)
        self.levels = env_levels(cfg)
        for lv in self.levels:
            self.pool.add(PoolMember(f"cpu{lv}", "cpu", level=lv))
            self.payoff.add(f"cpu{lv}")
        self.schedule = SnapshotSchedule(lg.snapshot_every_steps, lg.max_snapshots)
        self.members_dir = self.run_dir / "league" / "members"
        # The main: the fused trainer over the CPU's arena (every game's result tallied by its CPU level).
        self.main = FusedTrainer(cfg, self.run_dir, device, seed=self.seed,
                                 wrap_env=lambda env: ResultsEnv(env, key=lambda info: info.cpu_level))
        self.cpu_env: ResultsEnv = self.main.env
        # The models' arena: a ditto of the main's character, every port 1 played by a pool member.
        model_cfg = _ditto_config(cfg, self.character)
        n = lg.model_envs or fused_envs(cfg)
        models_seed = derive(self.seed, "models")
        self.opponents = PoolOpponents(n, device, seed=models_seed)
        arena = make_env(model_cfg, num_envs=n, device=device, seed=models_seed)
        arena.set_opponents(self.opponents)
        self.model_env = ResultsEnv(arena, key=lambda info: self.opponents.assign)
        self.model_player = self.main.add_player(self.model_env, models_seed)
        self.main_policy = greedy(self.main.actor)  # the current main, as the exploiters' opponent
        self.exploiters = [self._new_exploiter(i, ExploiterLife(lg.exploiter_promote_at, lg.exploiter_reset_below,
                                                                lg.exploiter_patience_steps, lg.exploiter_window))
                           for i in range(lg.exploiters)]
        self.resets = 0
        self.promotions = 0
        self.chunks = {"cpu": 0, "models": 0}
        self._last_log = 0.0
        self._weights: dict[str, float] = {}

    # --- the fused trainer's interface (the main's) ---
    @property
    def trainer(self):
        return self.main.trainer

    @property
    def learner(self):
        return self.main.learner

    def progress(self) -> tuple[int, int, int]:
        return self.main.progress()

    def model_bytes(self) -> bytes:
        return self.main.model_bytes()

    def work(self, seconds: float, chunks: int | None = None) -> None:
        """Run the league's loop for ``seconds`` of wall time (or exactly ``chunks`` rounds)."""
        repeat(self.round, seconds, chunks)

    def stop(self) -> None:
        self.log(force=True)
        for ex in self.exploiters:
            ex.fused.stop()
        self.main.stop()

    # --- the loop ---
    def round(self) -> None:
        """One round: a chunk of the main's, one of every exploiter's, results, promotions, resets, snapshots."""
        self._weights = self.pool.weights(self.payoff)
        cpu_w = [self._weights.get(f"cpu{lv}", 0.0) for lv in self.levels]
        model_w = {m.name: self._weights[m.name] for m in self.pool.drawable("model")}
        p_cpu = sum(cpu_w)
        if p_cpu > 0:
            self.cpu_env.set_level_weights(cpu_w)
        if model_w:
            self.opponents.set_weights(model_w)
        # Games go to the CPU's and the models' arenas in proportion to their members' PFSP weight.
        if not model_w or self.rng.random() < p_cpu:
            self.main.chunk()
            self.chunks["cpu"] += 1
        else:
            self.main.chunk(self.model_player)
            self.chunks["models"] += 1
        for lv, rec in self.cpu_env.take().items():
            self.payoff.record(f"cpu{lv}", *rec)
        for slot, rec in self.model_env.take().items():
            self.payoff.record(self.opponents.members[slot].name, *rec)
        for ex in self.exploiters:
            self._exploiter_round(ex)
        steps = self.main.learner.train_steps
        if self.schedule.due(steps):
            self._snapshot(steps)
        self.log()

    def _exploiter_round(self, ex: Exploiter) -> None:
        for _ in range(self.cfg.league.exploiter_chunks):
            ex.fused.chunk()
        results = ex.fused.env.take()
        w, lo, d = (sum(r[i] for r in results.values()) for i in range(3))
        if w + lo + d:
            self.payoff.record(ex.name, wins=lo, losses=w, draws=d)  # the payoff keeps the main's side
            ex.life.record(w, lo, d)
        verdict = ex.life.verdict(ex.fused.learner.train_steps)
        if verdict == "promote":
            self._join(ex.name, "exploiter", ex.fused.learner.online, ex.fused.learner.train_steps)
            self.promotions += 1
        if verdict in ("promote", "reset"):
            ex.fused.stop()
            ex.life.reborn()
            self.exploiters[ex.index] = self._new_exploiter(ex.index, ex.life)
            self.resets += 1

    def _new_exploiter(self, index: int, life: ExploiterLife) -> Exploiter:
        lg = self.cfg.league
        cfg = _ditto_config(self.cfg, self.character)
        cfg = dataclasses.replace(
            cfg, fused=dataclasses.replace(cfg.fused, envs=lg.exploiter_envs,
                                           replay_ratio=lg.exploiter_replay_ratio or cfg.fused.replay_ratio),
            replay=dataclasses.replace(cfg.replay, capacity=min(cfg.replay.capacity, lg.exploiter_replay_capacity)),
            manager=dataclasses.replace(cfg.manager, burn_in=min(cfg.manager.burn_in, lg.exploiter_burn_in)),
            league=dataclasses.replace(lg, enabled=False))
        name = exploiter_name(index, life.generation)
        fused = FusedTrainer(cfg, self.run_dir / "league" / name, self.device,
                             seed=derive(self.seed, "exploiter", index, life.generation),
                             opponents=lambda env: Opponents.split([self.main_policy], env.num_envs, env, names=["main"]),
                             wrap_env=lambda env: ResultsEnv(env, key=lambda info: torch.zeros_like(info.cpu_level)))
        if lg.exploiter_init == "main":
            _start_from(fused, self.main.learner.online)
        self.payoff.add(name)
        return Exploiter(index, fused, life)

    def _snapshot(self, steps: int) -> None:
        name = f"snap-{steps}"
        self._join(name, "snapshot", self.main.learner.online, steps, rating=self.payoff.rating("main"))
        for old in self.schedule.take(steps, name):
            self.pool.retire(old)

    def _join(self, name: str, kind: str, net: torch.nn.Module, train_step: int, rating: float | None = None) -> None:
        """A frozen copy of ``net`` joins the pool as ``name`` (saved to the members' folder)."""
        from melee_agent.rl.model import save_model  # noqa: PLC0415

        copy_ = frozen(net)
        path = self.members_dir / f"{name}.safetensors"
        path.parent.mkdir(parents=True, exist_ok=True)
        save_model(path, copy_, version=0, train_step=train_step, action_set=self.cfg.env.action_set,
                   delay_frames=self.cfg.env.delay_frames, character=self.character, seed=self.seed,
                   stages=env_stages(self.cfg))
        policy = greedy(copy_)
        self.pool.add(PoolMember(name, kind, policy=policy, path=str(path), train_step=self.main.learner.train_steps))
        if name not in self.payoff.totals:  # a promoted exploiter keeps the record of its training games
            self.payoff.add(name, rating)
        self.opponents.set_member(name, policy)

    # --- what the run reports ---
    def log(self, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._last_log < LOG_EVERY_S:
            return
        self._last_log = now
        out: dict[str, float] = {f"league/elo/{k}": v for k, v in self.payoff.ratings.items()}
        for name in self.payoff.totals:
            if self.payoff.games(name):
                out[f"league/win_rate/{name}"] = self.payoff.win_rate(name)
        out.update({f"league/pfsp/{k}": v for k, v in self._weights.items()})
        out.update({"league/members": len(self.pool.drawable()), "league/snapshots": len(self.schedule.taken),
                    "league/exploiter_resets": self.resets, "league/exploiter_promotions": self.promotions})
        self.main.trainer.board.scalars(out, self.main.learner.train_steps)

    def report(self) -> dict[str, Any]:
        """``eval.json``'s ``league``: every member's record against the main and rating, snapshots, exploiters."""
        weights = self.pool.weights(self.payoff)
        rows = []
        for name, (w, lo, d) in self.payoff.totals.items():
            m = self.pool.members.get(name)
            kind = m.kind if m is not None else "exploiter"  # an exploiter in training is not a pool member
            rows.append({"name": name, "kind": kind, "cpu_level": m.level if m is not None else None,
                         "path": m.path if m is not None else None,
                         "joined_at_step": m.train_step if m is not None else None,
                         "drawable": bool(m is not None and m.drawable),
                         "elo": round(self.payoff.rating(name), 1),
                         "main_wins": w, "main_losses": lo, "main_draws": d,
                         "main_recent_win_rate": round(self.payoff.win_rate(name), 4) if w + lo + d else None,
                         "pfsp_weight": round(weights.get(name, 0.0), 4)})
        return {"main_elo": round(self.payoff.rating("main"), 1), "members": rows,
                "snapshots": [{"train_step": s, "name": n} for s, n in self.schedule.taken],
                "exploiters": [{"index": ex.index, "generation": ex.life.generation, "name": ex.name,
                                "recent_win_rate": ex.life.win_rate()} for ex in self.exploiters],
                "exploiter_resets": self.resets, "exploiter_promotions": self.promotions,
                "main_chunks": dict(self.chunks), "elo_k": self.payoff.k, "pfsp": f"f_hard, p = {self.pool.power}",
                "model_envs": self.model_env.num_envs, "members_dir": str(self.members_dir)}


def _start_from(fused: FusedTrainer, net: torch.nn.Module) -> None:
    """``fused``'s learner starts from ``net``'s weights: online, target and acting network (its optimizer's moments
    stay fresh)."""
    with torch.no_grad():
        torch._foreach_copy_(list(fused.learner.online.parameters()), list(net.parameters()))
    fused.learner.sync_target()
    fused.refresh_actor()


def _ditto_config(cfg: Config, character: str) -> Config:
    """The config of an arena of model opponents: the main's character on both ports, eager (opponents' forward
    passes run between frames), on the models' clock (``league.model_clock_frames``, else the CPU games' clock)."""
    clock = cfg.league.model_clock_frames or cfg.env.clock_frames
    env = dataclasses.replace(cfg.env, characters=[character, character], compile=False, clock_frames=clock)
    return dataclasses.replace(cfg, env=env)


__all__ = ["LeagueTrainer", "Exploiter", "greedy"]
