"""One batch of :meth:`Learner.update` computed by hand: double DQN's choice, the importance weights, Huber.

The online and target networks differ and the weights are not uniform, so each of these mistakes gives
another loss than the one checked (the test asserts that it does, on this very batch): the target
network choosing its own action (vanilla DQN), the online network used as its own target, the weights
dropped, the Huber loss turned into a squared error. The first Adam step is checked too: it moves every
parameter by ``lr * g / (|g| + eps)`` with ``g`` the gradient of the hand-computed loss.
"""

from __future__ import annotations

import copy
import math

import numpy as np
import torch

from melee_agent.rl.learner import Learner
from melee_agent.rl.model import DuelingDQN
from melee_agent.rl.replay import ROW_WIDTH, DeviceReplay, ReplayBatch
from melee_agent.rl.rows import ACTION, DISCOUNT, NEXT_OBS, OBS, REWARD

B, ACTIONS, DELTA, SCALE, LR = 6, 3, 1.0, 2.0, 1e-3


def huber(x: float, delta: float = DELTA) -> float:
    return 0.5 * x * x if abs(x) <= delta else delta * (abs(x) - 0.5 * delta)


def a_batch() -> tuple[Learner, ReplayBatch, np.ndarray]:
    torch.manual_seed(4)
    rng = np.random.default_rng(4)
    rows = np.zeros((B, ROW_WIDTH), np.float32)
    rows[:, OBS] = rng.normal(size=(B, 27))
    rows[:, NEXT_OBS] = rng.normal(size=(B, 27))
    rows[:, ACTION] = rng.integers(0, ACTIONS, B)
    rows[:, REWARD] = rng.normal(size=B)
    rows[:, DISCOUNT] = [0.99, 0.0, 0.9801, 0.99, 0.5, 0.99]  # one terminal row, one 2-step row
    weights = np.array([1.0, 0.2, 0.7, 0.4, 0.9, 0.05], np.float32)
    replay = DeviceReplay(capacity=16, block_size=B)  # the learner's real replay, holding the same rows
    replay.add(rows)
    learner = Learner(replay, num_actions=ACTIONS, lr=LR, grad_clip=1e9, huber_delta=DELTA, reward_scale=SCALE,
                      model=DuelingDQN(27, ACTIONS, shared=8, stream=8), metrics_every=1, cuda_graph=False)
    with torch.no_grad():  # two unrelated networks, no biases (a fresh one's bias picks one action everywhere)
        for net in (learner.online, learner.target):
            for name, p in net.named_parameters():
                p.copy_(0.5 * torch.randn_like(p) if name.endswith("weight") else torch.zeros_like(p))
    batch = ReplayBatch.from_rows(torch.from_numpy(rows), torch.arange(B), torch.from_numpy(weights))
    return learner, batch, rows


def losses_by_hand(rows: np.ndarray, weights: np.ndarray, q_on: list, q_on_next: list, q_tgt_next: list) -> dict:
    """The loss and the four mistaken ones, row by row in plain Python."""
    out = {"right": 0.0, "vanilla": 0.0, "online_target": 0.0, "unweighted": 0.0, "mse": 0.0, "errors": []}
    for i in range(len(rows)):
        a, r, disc = int(rows[i, ACTION]), float(rows[i, REWARD]), float(rows[i, DISCOUNT])
        q = float(q_on[i][a])
        best = max(range(ACTIONS), key=lambda b: q_on_next[i][b])  # the online network chooses...
        y = SCALE * r + disc * float(q_tgt_next[i][best])  # ...the target network values it
        y_vanilla = SCALE * r + disc * max(float(v) for v in q_tgt_next[i])
        y_online = SCALE * r + disc * float(q_on_next[i][best])
        out["errors"].append(q - y)
        out["right"] += weights[i] * huber(q - y) / len(rows)
        out["vanilla"] += weights[i] * huber(q - y_vanilla) / len(rows)
        out["online_target"] += weights[i] * huber(q - y_online) / len(rows)
        out["unweighted"] += huber(q - y) / len(rows)
        out["mse"] += weights[i] * 0.5 * (q - y) ** 2 / len(rows)
    return out


def test_one_update_is_the_double_dqn_huber_loss_weighted_by_row():
    learner, batch, rows = a_batch()
    weights = batch.weight.numpy()
    with torch.no_grad():
        q_on = learner.online(batch.obs).tolist()
        q_on_next = learner.online(batch.next_obs).tolist()
        q_tgt_next = learner.target(batch.next_obs).tolist()
    hand = losses_by_hand(rows, weights, q_on, q_on_next, q_tgt_next)
    # The batch tells the mistakes apart: the networks choose differently somewhere, some errors pass delta.
    assert any(np.argmax(q_on_next[i]) != np.argmax(q_tgt_next[i]) for i in range(B) if rows[i, DISCOUNT] > 0)
    assert min(abs(e) for e in hand["errors"]) < DELTA < max(abs(e) for e in hand["errors"])  # both of Huber's parts
    for mistake in ("vanilla", "online_target", "unweighted", "mse"):
        assert abs(hand[mistake] - hand["right"]) > 1e-3 * max(1.0, hand["right"]), mistake

    # The gradient of the hand loss, on a copy of the online network, for the Adam step below.
    net = copy.deepcopy(learner.online)
    q_all = net(batch.obs)
    hand_loss = 0.0
    for i in range(B):
        a = int(rows[i, ACTION])
        best = int(np.argmax(q_on_next[i]))
        y = SCALE * float(rows[i, REWARD]) + float(rows[i, DISCOUNT]) * q_tgt_next[i][best]
        err = q_all[i, a] - y
        piece = 0.5 * err * err if abs(float(err.detach())) <= DELTA else DELTA * (err.abs() - 0.5 * DELTA)
        hand_loss = hand_loss + float(weights[i]) * piece / B
    hand_loss.backward()
    before = [p.detach().clone() for p in learner.online.parameters()]

    learner.update(batch)
    metrics = learner._after_update()
    assert metrics is not None and math.isclose(metrics.loss, hand["right"], rel_tol=1e-5, abs_tol=1e-7)
    for p0, p1, g in zip(before, learner.online.parameters(), (p.grad for p in net.parameters())):
        moved = (p1.detach() - p0).flatten()
        want = (-LR * g / (g.abs() + 1e-8)).flatten()
        big = g.abs().flatten() > 1e-5  # Adam's first step is lr * sign(g) where the gradient is not ~0
        assert torch.allclose(moved[big], want[big], rtol=1e-3, atol=1e-7)
