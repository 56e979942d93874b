"""Play one segment with a fixed model: epsilon-greedy actions, n-step rows, episode statistics.

This is the part of a worker that touches the environment; it knows nothing about HTTP, so the
same code feeds the manager, an in-process learner, or a test.

Ape-X exploration: worker ``i`` of ``N`` uses ``epsilon_i = base^(1 + alpha * i / (N - 1))``
(``base`` 0.4, ``alpha`` 7), so a fleet spans 0.4 down to 0.4^8 ~ 0.00066; one worker uses 0.4.

Example::

    >>> round(ape_x_epsilon(0, 8), 3), round(ape_x_epsilon(7, 8), 5)
    (0.4, 0.00066)
"""

from __future__ import annotations

import threading
import time

import torch

from melee_agent.rl.model import DuelingDQN
from melee_agent.envs.rewards import game_result, reached_limit
from melee_agent.rl.rows import ROW_WIDTH
from melee_agent.io.segment_stats import SegmentStats
from melee_agent.envs.vecenv import VecEnv
from melee_agent.workers.nstep import NStepStream, nstep_rows, ready_rows


def env_epsilons(index: int, count: int, envs: int, base: float = 0.4, alpha: float = 7.0) -> torch.Tensor:
    """Ape-X epsilons spread over every environment of the fleet: env ``j`` of worker ``i`` is actor
    ``i * envs + j`` of ``count * envs``, so one worker with 64 environments explores like 64 actors."""
    total = count * envs
    return torch.tensor([ape_x_epsilon(index * envs + j, total, base, alpha) for j in range(envs)])


def ape_x_epsilon(index: int, count: int, base: float = 0.4, alpha: float = 7.0) -> float:
    if count < 1 or not 0 <= index < count:
        raise ValueError(f"worker index must be in [0, {count}), got {index}")
    if count == 1:
        return base
    return base ** (1 + alpha * index / (count - 1))


class SegmentPlayer:
    """Keeps an environment running across segments; ``play`` returns rows and stats for one."""

    def __init__(self, env: VecEnv, epsilon: float | torch.Tensor, n_step: int, gamma: float, seed: int = 0,
                 stream: bool = False):
        self.env = env
        # stream=True: play() returns only the rows whose n-step windows are whole; the rest wait for the
        # next play() (so short segments cut no return short) until close() (:class:`NStepStream`).
        self.stream = NStepStream(n_step, gamma, env.num_envs, env.device) if stream else None
        # One epsilon for all environments, or one per environment ([B]).
        self.epsilon = torch.as_tensor(epsilon, dtype=torch.float32, device=env.device).expand(env.num_envs)
        self.n_step = n_step
        self.gamma = gamma
        self.obs = env.reset()
        self.chooses = torch.ones(env.num_envs, dtype=torch.bool, device=env.device)
        self.dec_obs = torch.zeros_like(self.obs)
        self.dec_act = torch.zeros(env.num_envs, dtype=torch.long, device=env.device)
        self.gen = torch.Generator(device=env.device).manual_seed(seed)
        # Per environment: the running episode was hit (a damage episode goes on after a hit).
        self.ep_hit = torch.zeros(env.num_envs, dtype=torch.bool, device=env.device)
        # Per environment: the running episode's stocks taken and lost and damage dealt (fights' statistics).
        self.ep_game = torch.zeros(env.num_envs, 3, device=env.device)

    @torch.inference_mode()
    def act(self, model: DuelingDQN, obs: torch.Tensor, uniform: bool = False) -> torch.Tensor:
        """Epsilon-greedy actions; ``uniform``: every action at random (before the first train step)."""
        B = obs.shape[0]
        explore = torch.rand(B, generator=self.gen, device=obs.device) < self.epsilon
        rand = torch.randint(0, self.env.num_actions, (B,), generator=self.gen, device=obs.device)
        if uniform:
            return rand
        return torch.where(explore, rand, model(obs).argmax(1))

    @torch.inference_mode()
    def play(self, model: DuelingDQN, frames_per_env: int, max_steps: int | None = None,
             stop: threading.Event | None = None, uniform: bool = False) -> tuple[torch.Tensor, SegmentStats]:
        """Play until every environment has played ``frames_per_env`` frames (or ``max_steps`` decisions,
        or ``stop`` is set: what was played so far is returned, so a stopping worker keeps it).

        ``uniform``: act uniformly at random, as DQN fills its replay before learning starts (Stable-Baselines3's
        ``learning_starts``). An untrained network's greedy action is one fixed macro, whatever it sees: where
        that is a 32-frame roll the replay filled with one row per roll, and a 15-minute run of the default
        config (seed 1) was still at its first train step after 10 minutes.

        Environments decide asynchronously (``step_async``), so none waits for another's macro;
        each environment's transitions are then turned into n-step rows alone.
        """
        t0 = time.perf_counter()
        env, stats = self.env, SegmentStats()
        rec: dict[str, list[torch.Tensor]] = {k: [] for k in ("obs", "act", "rew", "nxt", "done", "term", "ready")}
        played = torch.zeros(env.num_envs, device=env.device)
        obs = self.obs
        while True:
            action = self.act(model, obs, uniform)
            # The state and action of each environment's current decision (set when it was ready).
            self.dec_obs = torch.where(self.chooses.unsqueeze(1), obs, self.dec_obs)
            self.dec_act = torch.where(self.chooses, action, self.dec_act)
            nxt, reward, done, info = env.step_async(action)
            ready = info.ready
            for k, v in (("obs", self.dec_obs), ("act", self.dec_act), ("rew", reward), ("nxt", info.final_obs),
                         ("done", done), ("term", info.terminal), ("ready", ready)):
                rec[k].append(v.clone())
            self.chooses = ready
            played += torch.where(ready, info.frames, 0)
            self.ep_hit |= info.hit & ready
            got = torch.stack((info.stocks_taken.float(), info.stocks_lost.float(), info.damage_dealt.float()), 1)
            self.ep_game += torch.where(ready.unsqueeze(1), got, 0.0)
            if bool(done.any()):
                # Untouched: reached the frame limit never hit; a cut by a game's end or a restart is not.
                untouched = done & ~self.ep_hit & reached_limit(info.truncated, info.episode_frame, env.max_frames)
                stats.episodes += int(done.sum())
                stats.return_sum += float(info.episode_return[done].sum())
                stats.length_sum += float(info.episode_frame[done].sum())
                stats.untouched += int(untouched.sum())
                # Counted per level on the device (a Python loop over ended episodes costs per episode: at
                # B = 262,144 hundreds end every frame).
                ended = torch.bincount(info.cpu_level[done], minlength=10).tolist()
                kept = torch.bincount(info.cpu_level[done & untouched], minlength=10).tolist()
                for lv, (e, k) in enumerate(zip(ended, kept)):
                    if e:
                        counts = stats.per_level.setdefault(str(lv), [0, 0])
                        counts[0] += e
                        counts[1] += k
                self.ep_hit &= ~done
                games = done & info.game_over
                if bool(games.any()):  # fights: whole games played to their end
                    won = game_result(info.agent_stocks, info.opponent_stocks, info.agent_percent,
                                      info.opponent_percent) > 0
                    taken, lost, dealt = self.ep_game[games].sum(0).tolist()
                    stats.games += int(games.sum())
                    stats.wins += int((won & games).sum())
                    stats.stocks_taken += round(taken)
                    stats.stocks_lost += round(lost)
                    stats.damage_dealt += float(dealt)
                self.ep_game[done] = 0.0
            stats.hits += int((info.hit & ready).sum())
            obs = nxt
            stats.steps += int(ready.sum())
            if bool((played >= frames_per_env).all()) or (max_steps is not None and stats.steps >= max_steps) \
                    or (stop is not None and stop.is_set()):
                break
        self.obs = obs
        stats.frames = int(played.sum())
        rows = self._rows({k: torch.stack(v) for k, v in rec.items()})
        stats.seconds = time.perf_counter() - t0
        return rows, stats

    def _rows(self, r: dict[str, torch.Tensor]) -> torch.Tensor:
        if self.stream is not None:
            return self.stream.push(r, r["ready"])
        if bool(r["ready"].all()):
            return nstep_rows(r["obs"], r["act"], r["rew"], r["nxt"], r["done"], r["term"], self.n_step, self.gamma)
        return ready_rows(r, r["ready"], self.n_step, self.gamma)

    def close(self) -> torch.Tensor:
        """End the segment of a streaming player (``stream=True``): the rows still waiting for their
        windows, bootstrapped from the last state seen; an empty tensor otherwise."""
        if self.stream is None:
            return torch.zeros(0, ROW_WIDTH, device=self.env.device)
        return self.stream.close()
