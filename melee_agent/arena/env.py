"""`Arena`: B independent Fox-vs-Marth games on Final Destination, stepped in lockstep as tensors.

One ``step`` is one decision: every environment plays its chosen action's whole controller
sequence, frame by frame; an environment whose sequence (or episode) ends early is frozen for
the remaining frames of the call. Finished episodes reset themselves.

Example::

    >>> import torch
    >>> env = Arena(num_envs=4, cpu_level=9, seed=0)
    >>> obs = env.reset(); obs.shape
    torch.Size([4, 27])
    >>> obs, reward, done, info = env.step(torch.zeros(4, dtype=torch.long))
    >>> sorted(info)[:4]
    ['damage_dealt', 'damage_taken', 'episode_frame', 'episode_return']
"""

from __future__ import annotations

from typing import Any

import torch

from melee_agent.actions import get_action_set
from melee_agent.arena import storage
from melee_agent.arena.async_step import DEALT, FRAMES, HIT, LOST, REWARD, TAKEN, TOOK, frame_async, step_async
from melee_agent.arena.compiled import compiled
from melee_agent.arena.sim import intangible
from melee_agent.arena.storage import ENV_ROWS
from melee_agent.arena.tables import AGENT, CPU, CPU_LEVELS, E, P, build_tables
from melee_agent.rewards import MAX_FRAMES, check_reward


class Arena:
    def __init__(self, num_envs: int, cpu_level: int = 9, device: str | torch.device = "cpu", seed: int = 0,
                 action_set: str = "untouchable", reward: str = "untouchable", max_frames: int = MAX_FRAMES,
                 compile: bool = False):
        if num_envs <= 0:
            raise ValueError(f"num_envs must be positive, got {num_envs}")
        if cpu_level not in CPU_LEVELS:
            raise ValueError(f"cpu_level must be 1-9, got {cpu_level}")
        self.num_envs = num_envs
        self.cpu_level = cpu_level
        self.device = torch.device(device)
        self.seed = int(seed)
        # A tensor, so that a compiled frame does not specialize (and recompile) on each seed.
        self._seed = torch.tensor(self.seed, dtype=torch.long, device=self.device)
        self.compiled = bool(compile)
        self._frame_async = compiled(frame_async) if compile else frame_async
        self._finish_decision = compiled(storage.finish_decision) if compile else storage.finish_decision
        self.action_set = action_set
        self.reward_kind = check_reward(reward)
        self.max_frames = max_frames
        aset = get_action_set(action_set)
        self.num_actions = aset.num_actions
        self.noop_index = aset.index("noop") if "noop" in aset.names else aset.index("none_neutral")
        # [button, action, frame]: a frame's controller state is one row per button (contiguous).
        self._table = torch.as_tensor(aset.table, device=self.device).permute(2, 0, 1).contiguous()
        self._lengths = torch.as_tensor(aset.lengths, device=self.device)
        self.T = build_tables(self.device)
        lv = CPU_LEVELS[cpu_level]
        self.level = {k: torch.tensor(float(v), device=self.device) for k, v in vars(lv).items()}
        self.level["smart"] = torch.tensor(cpu_level >= 7, device=self.device)
        self._spawn_x = torch.tensor([-40.0, 40.0], device=self.device)  # guess: respawn spots
        # What frame_async needs besides the state, fixed for the arena's lifetime.
        self._frame_args = (self._table, self._lengths, self.noop_index, self.T, self.level, self._seed,
                            self._spawn_x, self.reward_kind == "untouchable", self.max_frames)
        # Field-major, player-major storage [N, 2, B]: one player's field is contiguous, so the
        # simulator's elementwise ops stream memory (and vectorize when compiled); S and En stay
        # [B, 2, N] and [B, N] views for callers.
        self._fields = torch.zeros(P.N, 2, num_envs, device=self.device)
        self.S = self._fields.permute(2, 1, 0)
        self._env_fields = torch.zeros(ENV_ROWS, num_envs, device=self.device)
        self.En = self._env_fields.t()
        self.En[:, E.ENV_ID] = torch.arange(num_envs, device=self.device, dtype=torch.float32)
        self.En[:, E.EPISODE] = -1
        self._all = torch.ones(num_envs, dtype=torch.bool, device=self.device)

    # --- state ---
    def _reset_envs(self, mask: torch.Tensor) -> None:
        storage.reset_envs(self._fields, self._env_fields, mask, self._seed)

    def observe(self, previous_action: torch.Tensor | None = None) -> torch.Tensor:
        prev = self.En[:, E.PREV_ACTION] if previous_action is None else previous_action
        return storage.observe(self._fields, prev, self.T, self.num_actions)

    def players(self) -> dict[str, dict[str, torch.Tensor]]:
        """Raw per-player fields named as libmelee's PlayerState (plus stock), for inspection."""
        names = {"position_x": P.X, "position_y": P.Y, "speed_x": P.VX, "speed_y": P.VY, "action": P.ACT,
                 "action_frame": P.AF, "on_ground": P.GND, "jumps_left": P.JUMPS, "shield_strength": P.SHIELD,
                 "hitstun_frames_left": P.STUN, "percent": P.PCT, "stock": P.STOCK}
        out = {}
        for who, p in (("agent", AGENT), ("opponent", CPU)):
            fields = {k: self.S[:, p, c].clone() for k, c in names.items()}
            fields["facing"] = self.S[:, p, P.FACE] > 0
            fields["invulnerable"] = intangible(self.S, self.T)[:, p]
            out[who] = fields
        return out

    def reset(self) -> torch.Tensor:
        self._reset_envs(self._all)
        self._ready = None  # step_async: every environment chooses next
        return self.observe()

    step_async = step_async

    def close(self) -> None:
        """Nothing to release (the arena holds only tensors); here so every environment has it."""

    # --- stepping ---
    @torch.inference_mode()
    def step(self, actions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, dict[str, Any]]:
        actions = torch.as_tensor(actions, device=self.device).long().view(-1)
        if actions.shape[0] != self.num_envs:
            raise ValueError(f"expected {self.num_envs} actions, got {actions.shape[0]}")
        B, S, En = self.num_envs, self.S, self.En
        lens = self._lengths[actions.clamp(0, self.num_actions - 1)]
        if bool(((actions < 0) | (actions >= self.num_actions)).any()):
            raise ValueError(f"actions must be in [0, {self.num_actions})")
        # Every environment plays its whole macro: frame by frame through the same frame_async as
        # step_async, with environments whose macro is over frozen until the longest one ends.
        active = self._all
        start = self._all
        done = torch.zeros_like(active)
        terminal, truncated = done.clone(), done.clone()
        acc = tuple(torch.zeros(B, device=self.device) for _ in range(HIT + 1))
        cur, mf = actions, torch.zeros_like(actions)
        for f in range(int(lens.max())):
            if f > 0:
                S0, E0 = S.clone(), En.clone()
            new_acc, cur, mf, ready, done_now, end, cut = self._frame_async(
                self._fields, self._env_fields, start, actions, acc, cur, mf, *self._frame_args)
            if f > 0:
                S.copy_(torch.where(active.view(-1, 1, 1), S, S0))
                En.copy_(torch.where(active.view(-1, 1), En, E0))
            acc = tuple(torch.where(active, n, o) for n, o in zip(new_acc, acc))
            terminal |= end & active
            truncated |= cut & active
            done |= done_now & active
            active = active & ~ready
            start = torch.zeros_like(start)
        reward = acc[REWARD]
        out = self._finish_decision(self._fields, self._env_fields, self._all, done, actions.float(), reward, self.T,
                                    self.num_actions, self._seed, self.compiled)
        info: dict[str, Any] = {
            "hit": acc[HIT] > 0, "terminal": terminal, "truncated": truncated, "frames": acc[FRAMES].long(),
            "episode_frame": out["episode_frame"].long(), "episode_return": out["episode_return"],
            "damage_taken": acc[TAKEN], "damage_dealt": acc[DEALT], "stocks_lost": acc[LOST].long(),
            "stocks_taken": acc[TOOK].long(),
            "final_obs": out["final"],
        }
        return out["next"], reward, done, info
