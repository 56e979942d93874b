"""n-step experience rows from a segment of vectorized play (Ape-X, rlpyt).

A segment is ``T`` decisions in ``B`` environments. For decision ``t`` in environment ``b`` the
row is::

    m        = min(n, decisions until the episode ends (inclusive), decisions left in the segment)
    reward   = sum_{k<m} gamma^k r[t+k]
    next_obs = next_obs[t+m-1]            (the last state seen: the pre-reset one at an episode end)
    discount = 0 if the episode ended in a terminal state at t+m-1, else gamma^m

so a cut episode (time limit) and a segment boundary both bootstrap from the last state, and a
terminal state does not. Rows are ``[T*B, 57]`` float32 in the replay's column order (``2d + 3`` wide for
a state of ``d`` floats: :func:`melee_agent.rl.rows.columns`).

Environments that decide asynchronously record a frame for every environment but a decision only
where ``ready`` holds; :func:`ready_rows` gathers each environment's decisions into its own
sequence (in one pass, no per-environment loop) before the windows are taken.
:class:`NStepStream` does the same for decisions that arrive a chunk at a time, as the fused
training loop plays them: a row leaves once its window is whole (``n`` decisions, or the episode's
end), so chunk boundaries cut no return short, and ``close()`` ends the segment.

Example::

    >>> import torch
    >>> obs = torch.zeros(3, 1, 27); nxt = torch.ones(3, 1, 27)
    >>> rows = nstep_rows(obs, torch.tensor([[1], [2], [3]]), torch.tensor([[1.0], [1.0], [1.0]]),
    ...                   nxt, torch.tensor([[False], [True], [False]]), torch.tensor([[False], [True], [False]]),
    ...                   n=3, gamma=0.5)
    >>> rows[:, 27:30].tolist()  # action, reward, discount
    [[1.0, 1.5, 0.0], [2.0, 1.0, 0.0], [3.0, 1.0, 0.5]]
"""

from __future__ import annotations

import torch

from melee_agent.rl.rows import ROW_WIDTH, columns

#: What a segment records per decision (``[T, B, ...]`` each), in this order.
FIELDS = ("obs", "act", "rew", "nxt", "done", "term")


def nstep_rows(obs: torch.Tensor, action: torch.Tensor, reward: torch.Tensor, next_obs: torch.Tensor,
               done: torch.Tensor, terminal: torch.Tensor, n: int, gamma: float) -> torch.Tensor:
    """Build n-step rows from ``[T, B, ...]`` segment tensors (``next_obs`` pre-reset at ends)."""
    rows, _ = _windows(obs, action, reward, next_obs, done, terminal, n, gamma)
    return rows.reshape(-1, rows.shape[-1])


def _windows(obs: torch.Tensor, action: torch.Tensor, reward: torch.Tensor, next_obs: torch.Tensor,
             done: torch.Tensor, terminal: torch.Tensor, n: int, gamma: float,
             valid: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Rows ``[T, B, 57]`` and whether each window is whole (``[T, B]``: ``n`` decisions, or it reached
    the episode's end). ``valid`` (``[T, B]``, a prefix in each column) marks the decisions that exist:
    a window stops at the first one that does not, as at a segment's end."""
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    T, B = action.shape
    dev = reward.device
    reward = reward.to(torch.float32)
    ret = torch.zeros(T, B, device=dev)
    scale = torch.ones(T, B, device=dev)  # gamma^k while the window is still open
    open_ = torch.ones(T, B, dtype=torch.bool, device=dev) if valid is None else valid.clone()
    last = torch.arange(T, device=dev).view(T, 1).expand(T, B).clone()  # index of the window's last step
    ended_terminal = torch.zeros(T, B, dtype=torch.bool, device=dev)
    ended = torch.zeros(T, B, dtype=torch.bool, device=dev)
    steps = torch.zeros(T, B, device=dev)
    for k in range(n):
        idx = torch.arange(T, device=dev) + k
        j = idx.clamp(max=T - 1)
        inside = (idx < T).view(T, 1) & open_
        if valid is not None:
            inside &= valid[j]
        ret += torch.where(inside, scale * reward[j], 0.0)
        steps += inside.float()
        last = torch.where(inside, j.view(T, 1).expand(T, B), last)
        ends = inside & done[j]
        ended |= ends
        ended_terminal |= inside & terminal[j]
        open_ = inside & ~ends
        scale = scale * gamma
    discount = torch.where(ended_terminal, 0.0, gamma ** steps)
    b = torch.arange(B, device=dev).view(1, B).expand(T, B)
    c = columns(obs.shape[-1])  # the state layout's width sets the row's
    rows = torch.empty(T, B, c.width, device=dev)
    rows[..., c.obs] = obs
    rows[..., c.action] = action.to(torch.float32)
    rows[..., c.reward] = ret
    rows[..., c.discount] = discount
    rows[..., c.next_obs] = next_obs[last, b]
    whole = ended | (steps == n)
    return rows, whole if valid is None else whole & valid


def _by_env(rec: dict[str, torch.Tensor], ready: torch.Tensor, length: int,
            head: dict[str, torch.Tensor] | None = None,
            head_count: torch.Tensor | None = None) -> tuple[dict[str, torch.Tensor], torch.Tensor]:
    """Each environment's decisions as its own column: ``[length, B, ...]`` tensors whose column ``b``
    holds ``head``'s first ``head_count[b]`` entries, then the frames of ``rec`` where ``ready``, in
    order; and the count per column. Entries past the count are left as zeros."""
    B = ready.shape[1]
    base = torch.zeros(B, dtype=torch.long, device=ready.device) if head_count is None else head_count
    t, b = ready.nonzero(as_tuple=True)  # row-major: frame order within each environment
    pos = base[b] + (ready.long().cumsum(0) - 1)[t, b]
    out = {}
    for k in FIELDS:
        v = rec[k]
        col = torch.zeros((length, *v.shape[1:]), dtype=v.dtype, device=v.device)
        if head is not None:
            h = head[k].shape[0]
            col[:h] = head[k]  # entries past head_count are overwritten below or stay invalid
        col[pos, b] = v[t, b]
        out[k] = col
    return out, base + ready.long().sum(0)


def _env_major(x: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
    """The kept ``[T, B]`` entries of ``x`` ``[T, B, ...]``, environment by environment, each in order."""
    return x.transpose(0, 1)[keep.transpose(0, 1)]


def ready_rows(rec: dict[str, torch.Tensor], ready: torch.Tensor, n: int, gamma: float) -> torch.Tensor:
    """The rows of a segment whose environments decide asynchronously: each environment's decisions
    (its frames where ``ready``) as one sequence, rows environment by environment (what calling
    :func:`nstep_rows` on each environment's own decisions and concatenating gives)."""
    length = int(ready.sum(0).max()) if ready.numel() else 0
    if length == 0:
        return torch.zeros(0, columns(rec["obs"].shape[-1]).width, device=ready.device)
    col, count = _by_env(rec, ready, length)
    valid = torch.arange(length, device=ready.device).view(length, 1) < count.view(1, -1)
    rows, _ = _windows(*(col[k] for k in FIELDS), n, gamma, valid=valid)
    return _env_major(rows, valid)


class NStepStream:
    """n-step rows from decisions that arrive a chunk at a time; each row leaves once its window is whole.

    Up to ``n - 1`` decisions per environment wait for the decisions that complete their windows, so
    the rows of chunks ``c_1 ... c_k`` followed by :meth:`close` are exactly the rows of one segment
    ``c_1 + ... + c_k`` (:func:`ready_rows`), in another order.

    Example::

        >>> import torch
        >>> s = NStepStream(n=3, gamma=0.5, num_envs=1)
        >>> rec = {"obs": torch.zeros(2, 1, 27), "act": torch.zeros(2, 1, dtype=torch.long),
        ...        "rew": torch.ones(2, 1), "nxt": torch.ones(2, 1, 27),
        ...        "done": torch.zeros(2, 1, dtype=torch.bool), "term": torch.zeros(2, 1, dtype=torch.bool)}
        >>> s.push(rec, torch.ones(2, 1, dtype=torch.bool)).shape[0], s.pending   # both wait for a third decision
        (0, 2)
        >>> s.close()[:, 28].tolist()   # the segment ends: returns over what was seen
        [1.5, 1.0]
    """

    def __init__(self, n: int, gamma: float, num_envs: int, device: str | torch.device = "cpu"):
        if n < 1:
            raise ValueError(f"n must be >= 1, got {n}")
        self.n, self.gamma, self.device = n, gamma, torch.device(device)
        self.head: dict[str, torch.Tensor] | None = None  # the waiting decisions, [n - 1, B, ...]
        self.count = torch.zeros(num_envs, dtype=torch.long, device=self.device)

    @property
    def pending(self) -> int:
        """Decisions waiting for their windows to close (one host read)."""
        return int(self.count.sum())

    def push(self, rec: dict[str, torch.Tensor], ready: torch.Tensor) -> torch.Tensor:
        """Take a chunk's ``[T, B, ...]`` records; return the rows whose windows are now whole."""
        length = (self.n - 1) + int(ready.sum(0).max() if ready.numel() else 0)
        if length == 0:
            return torch.zeros(0, columns(rec["obs"].shape[-1]).width, device=self.device)
        col, total = _by_env(rec, ready, length, self.head, self.count if self.head is not None else None)
        valid = torch.arange(length, device=self.device).view(length, 1) < total.view(1, -1)
        rows, whole = _windows(*(col[k] for k in FIELDS), self.n, self.gamma, valid=valid)
        # A window that is not whole reaches the end of what was seen with no episode end in it: only the
        # last n - 1 decisions of a column can be such, and they wait for the next chunk.
        waiting = valid & ~whole
        keep = waiting.long().sum(0)
        first = total - keep
        idx = (first.view(1, -1) + torch.arange(self.n - 1, device=self.device).view(-1, 1)).clamp(max=length - 1)
        b = torch.arange(idx.shape[1], device=self.device).view(1, -1).expand_as(idx)
        self.head = {k: col[k][idx, b] for k in FIELDS}
        self.count = keep
        return _env_major(rows, whole)

    def close(self) -> torch.Tensor:
        """The waiting decisions' rows, bootstrapped from the last state seen (a segment's end)."""
        if self.head is None or self.n == 1:
            width = ROW_WIDTH if self.head is None else columns(self.head["obs"].shape[-1]).width
            return torch.zeros(0, width, device=self.device)
        valid = torch.arange(self.n - 1, device=self.device).view(-1, 1) < self.count.view(1, -1)
        rows, _ = _windows(*(self.head[k] for k in FIELDS), self.n, self.gamma, valid=valid)
        out = _env_major(rows, valid)
        self.count = torch.zeros_like(self.count)
        return out
