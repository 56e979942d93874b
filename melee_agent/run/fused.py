"""Fused training: the arena, acting, n-step rows, the device replay and the learner in one process.

``melee-agent train --fused`` (``train.fused = true``, arena only). Nothing crosses to the host or
over HTTP: the arena's tensors become rows on its device (:class:`~melee_agent.workers.nstep.NStepStream`),
the rows go straight into the device replay (:meth:`~melee_agent.rl.replay.DeviceReplay.write`), and the
learner (captured as a CUDA graph on CUDA) trains on them, acting with its own online network (or a
copy refreshed every ``fused.act_refresh_steps`` train steps). One loop, read top to bottom::

    repeat:
        rows, stats = play fused.chunk_frames frames in every environment        (Ape-X epsilons per env)
        replay.write(rows, priority = |TD| under the online network if prioritized)
        once the replay holds manager.burn_in rows:
            owed += len(rows) * fused.replay_ratio / learner.batch_size
            while owed >= 1: learner.step(); owed -= 1                          (publish, checkpoint)

The learner, the replay, checkpoints (and ``--resume``), published models and TensorBoard are the
manager's own parts (:class:`melee_agent.manager.trainer.Trainer`), so a fused run folder reads like a
``train`` one. The manager and workers stay the way to train on Dolphin and on VM fleets.

Example::

    >>> import tempfile
    >>> from melee_agent.config import load_config
    >>> cfg = load_config("small", ["manager.burn_in=64", "fused.envs=4"])
    >>> with tempfile.TemporaryDirectory() as d:
    ...     fused = FusedTrainer(cfg, d)
    ...     fused.work(seconds=0.0, chunks=40)
    ...     steps, rows, version = fused.progress()
    ...     fused.stop()
    >>> steps > 0 and rows > 64
    True
"""

from __future__ import annotations

import copy
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

import torch

from melee_agent.config import Config
from melee_agent.envs.make import make_env

if TYPE_CHECKING:
    from melee_agent.arena.env import Arena
    from melee_agent.arena.ports import Opponents
    from melee_agent.manager.trainer import Trainer
    from melee_agent.workers.play import SegmentPlayer

LOG_EVERY_S = 2.0  # TensorBoard status scalars, as the manager's training thread writes them


def fused_envs(cfg: Config) -> int:
    """The arena's batch: ``fused.envs``, else the environments `train`'s workers would play together."""
    return cfg.fused.envs or cfg.worker.envs * cfg.train.workers


def repeat(step: Callable[[], None], seconds: float, times: int | None = None) -> None:
    """Call ``step`` until ``seconds`` of wall time have passed, or exactly ``times`` times when given (a test's
    count, independent of the machine's speed)."""
    end = time.monotonic() + seconds
    done = 0
    while (times is None and time.monotonic() < end) or (times is not None and done < times):
        step()
        done += 1


class FusedTrainer:
    """The arena, acting, rows, replay and learner of one run, on one device (see the module's docstring).

    ``work(seconds)`` trains for a while and returns (the run's periodic checks go between calls);
    ``progress()`` is ``(train steps, rows written, model version)``; ``model_bytes()`` the newest
    published model file; ``stop()`` ends the segment, checkpoints and closes TensorBoard.
    """

    def __init__(self, cfg: Config, run_dir: str | Path, device: str = "cpu", resume: bool = False,
                 seed: int | None = None, opponents: Callable[[Arena], Opponents] | None = None,
                 wrap_env: Callable[[Any], Any] | None = None):
        # The manager's and the workers' parts, composed in this process (the one other place than
        # training.py that composes roles; the core modules never import them).
        from melee_agent.manager.trainer import Trainer  # noqa: PLC0415

        if cfg.env.env != "arena":
            raise ValueError(f"train --fused runs the embedded arena, not env.env = {cfg.env.env!r}; for Dolphin "
                             "start `melee-agent manager` and workers")
        self.cfg = cfg
        if cfg.fused.torch_threads > 0:
            torch.set_num_threads(cfg.fused.torch_threads)
        # The run's seed (train.seed unless given): the arena and the acting player play from it; the replay and
        # the network from seeds derived from it (the trainer's).
        self.seed = cfg.train.seed if seed is None else seed
        self.trainer: Trainer = Trainer(cfg, run_dir, device, resume=resume, seed=self.seed)
        self.learner, self.replay = self.trainer.learner, self.trainer.replay
        envs = fused_envs(cfg)
        self.env = make_env(cfg, num_envs=envs, device=device, seed=self.seed)
        if opponents is not None:  # port 1's controllers other than the CPU (arena.ports), before the first reset
            self.env.set_opponents(opponents(self.env))
        if wrap_env is not None:  # e.g. the league's tally of each game's result (league/results_env.py)
            self.env = wrap_env(self.env)
        self.players: list[SegmentPlayer] = []
        self.player: SegmentPlayer = self.add_player(self.env, self.seed)
        refresh = cfg.fused.act_refresh_steps
        self.actor = copy.deepcopy(self.learner.online).requires_grad_(False) if refresh else self.learner.online
        self._refreshed_at = self.learner.train_steps
        self.owed = 0.0  # train steps earned by rows written and not yet taken
        self._last_log = 0.0
        self.frames = 0

    def add_player(self, env: Any, seed: int) -> SegmentPlayer:
        """A player over ``env`` whose rows this learner trains on too (the league's arena of model opponents
        beside the CPU's): its own games and n-step stream, Ape-X epsilons spread over its environments."""
        from melee_agent.workers.play import SegmentPlayer, ape_x_epsilon, env_epsilons  # noqa: PLC0415

        w, n = self.cfg.worker, env.num_envs
        epsilon: float | torch.Tensor = ape_x_epsilon(0, 1, w.epsilon_base, w.epsilon_alpha)
        if w.epsilon_per_env and n > 1:
            epsilon = env_epsilons(0, 1, n, w.epsilon_base, w.epsilon_alpha)
        player = SegmentPlayer(env, epsilon, w.n_step, self.cfg.learner.gamma, seed=seed, stream=True)
        self.players.append(player)
        return player

    # --- what the run reads ---
    def progress(self) -> tuple[int, int, int]:
        """``(train steps, rows written into the replay, published model version)``."""
        return self.learner.train_steps, self.trainer.rows_ingested, self.trainer.version

    def model_bytes(self) -> bytes:
        """The newest published model file (``manager.publish_every`` steps apart, as `train` serves it)."""
        return self.trainer.model.data

    def can_train(self) -> bool:
        return len(self.replay) >= max(self.cfg.manager.burn_in, self.cfg.learner.batch_size)

    # --- the loop ---
    def work(self, seconds: float, chunks: int | None = None) -> None:
        """Play and train for ``seconds`` of wall time (or exactly ``chunks`` chunks)."""
        repeat(self.chunk, seconds, chunks)

    def chunk(self, player: SegmentPlayer | None = None) -> None:
        """One chunk: play (``player``, default the first), write the rows, take the train steps they earn."""
        cfg, trainer = self.cfg, self.trainer
        player = player or self.player
        rows, stats = player.play(self.actor, cfg.fused.chunk_frames)
        self._write(rows)
        step = self.learner.train_steps
        now = time.monotonic()
        if not stats.empty and player is self.player:  # episode/ tags: the first arena's games (the CPU's)
            trainer.board.episodes(stats, step)
            trainer.board.workers(stats, step)
        self.frames += stats.frames
        trainer.ingest.frame_rate.add(float(stats.frames), now)
        if self.can_train():
            self.owed += rows.shape[0] * cfg.fused.replay_ratio / cfg.learner.batch_size
            self._train(int(self.owed))
            self.owed -= int(self.owed)
        if now - self._last_log > LOG_EVERY_S:
            trainer.log_status()
            self._last_log = now

    def _write(self, rows: torch.Tensor) -> None:
        n = rows.shape[0]
        if n == 0:
            return
        priority = None
        if self.replay.prioritized:
            from melee_agent.workers.priorities import td_priorities  # noqa: PLC0415

            priority = td_priorities(self.learner.online, rows, self.cfg.learner.reward_scale)
        self.replay.write(rows, priority)
        self.trainer.ingest.rows_ingested += n
        self.trainer.ingest.ingest_rate.add(n)

    def _train(self, steps: int) -> None:
        """The manager's train-step loop (:class:`~melee_agent.manager.trainer.TrainSteps`: log, publish,
        checkpoint), the acting copy refreshed after every step that makes it K steps old."""
        k = self.cfg.fused.act_refresh_steps
        self.trainer.thread.steps.take(steps, after=self._refresh_due if k else None)

    def _refresh_due(self, step: int) -> None:
        if step - self._refreshed_at >= self.cfg.fused.act_refresh_steps:  # never K steps behind, within a chunk too
            self.refresh_actor()

    def refresh_actor(self) -> None:
        """The acting network takes the online network's weights (nothing to copy when it acts with the online one)."""
        if self.actor is not self.learner.online:
            with torch.no_grad():
                torch._foreach_copy_(list(self.actor.parameters()), list(self.learner.online.parameters()))
        self._refreshed_at = self.learner.train_steps

    def stop(self) -> None:
        """Write the rows still waiting for their n-step windows, checkpoint, close TensorBoard and the ledger."""
        for player in self.players:
            self._write(player.close())
            player.env.close()
        self.trainer.stop()
