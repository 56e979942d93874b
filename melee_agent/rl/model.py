"""The Dueling DQN and its model files (safetensors with metadata, never pickle).

Architecture (Parr 2017, after Wang et al. 2016)::

    h    = relu(W_s x)                       # 27 -> 128, shared
    V(x) = w_v2 . relu(W_v1 h)               # 128 -> 512 -> 1
    A(x) = W_a2 relu(W_a1 h)                 # 128 -> 512 -> |A|
    Q(x, a) = V(x) + A(x, a) - mean_a' A(x, a')   (the mean per sample)

With ``action_embed = k`` (``learner.action_embed``), x is the state followed by a learned k-vector for each
fighter's action id (read back from its column, id / 400): ``x = [s, E[id_agent], E[id_opponent]]``. The state
gives the action as one number, so moves with neighbouring ids (Marth's up tilt 56, down tilt 57) lie 0.0025
apart, and a network that reads them as a line must learn a very steep step to tell them apart
(docs/results/dodging.md, "What hits the kept model at level 9"). The file's state layout is unchanged.

Example::

    >>> import torch
    >>> net = DuelingDQN(num_actions=5)
    >>> net(torch.zeros(3, 27)).shape
    torch.Size([3, 5])
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any, Sequence

import torch
from safetensors.torch import load as st_load_bytes
from safetensors.torch import save as st_save_bytes
from torch import nn

from melee_agent.io.files import atomic_write_bytes
from melee_agent.io.safetensors_header import HeaderError, read_metadata
from melee_agent.envs.state import LAYOUTS, PLAYER_DIM, STATE_DIM, STATE_FIELDS, STATE_LAYOUT

MODEL_SCHEMA = "melee-agent/model/1"
#: The stage a model file that records none trained on: every file made before stages were recorded
#: (the arena played Final Destination only).
DEFAULT_STAGE = "final_destination"


_ACTION_FIELD = next(i for i, f in enumerate(STATE_FIELDS) if f.name == "action")
#: The state's columns holding the agent's and the opponent's action ids (scaled by 1/400), in every layout.
ACTION_COLUMNS = (_ACTION_FIELD, PLAYER_DIM + _ACTION_FIELD)
ACTION_SCALE = STATE_FIELDS[_ACTION_FIELD].scale
#: Action ids an embedding has rows for: libmelee's Action values are below 400 (ids at or past it share the last).
ACTION_IDS = int(ACTION_SCALE)


class DuelingDQN(nn.Module):
    def __init__(self, state_dim: int = STATE_DIM, num_actions: int = 5, shared: int = 128, stream: int = 512,
                 action_embed: int = 0):
        super().__init__()
        if action_embed < 0:
            raise ValueError(f"action_embed must be 0 (none) or more, got {action_embed}")
        self.state_dim, self.num_actions, self.shared_size, self.stream_size = state_dim, num_actions, shared, stream
        self.action_embed_size = action_embed
        if action_embed:
            self.action_embed = nn.Embedding(ACTION_IDS, action_embed)
        self.shared = nn.Sequential(nn.Linear(state_dim + 2 * action_embed, shared), nn.ReLU())
        self.value = nn.Sequential(nn.Linear(shared, stream), nn.ReLU(), nn.Linear(stream, 1))
        self.advantage = nn.Sequential(nn.Linear(shared, stream), nn.ReLU(), nn.Linear(stream, num_actions))

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        h = self.shared(self.features(obs))
        adv = self.advantage(h)
        return self.value(h) + adv - adv.mean(dim=-1, keepdim=True)

    def features(self, obs: torch.Tensor) -> torch.Tensor:
        """The shared layer's input: the state, and with ``action_embed`` both fighters' action embeddings."""
        if not self.action_embed_size:
            return obs
        ids = (obs[..., list(ACTION_COLUMNS)] * ACTION_SCALE).round().long().clamp(0, ACTION_IDS - 1)
        return torch.cat((obs, self.action_embed(ids).flatten(-2)), dim=-1)

    def sizes(self) -> dict[str, int]:
        """The constructor's arguments (``action_embed`` only where set, so earlier files read the same)."""
        out = {"state_dim": self.state_dim, "num_actions": self.num_actions,
               "shared": self.shared_size, "stream": self.stream_size}
        if self.action_embed_size:
            out["action_embed"] = self.action_embed_size
        return out


def sizes_of_weights(weights: dict[str, torch.Tensor]) -> dict[str, int]:
    """The :meth:`DuelingDQN.sizes` of the network whose ``state_dict`` is ``weights``, read from their shapes.

    >>> sizes_of_weights(DuelingDQN(num_actions=5, shared=64).state_dict())
    {'state_dim': 27, 'num_actions': 5, 'shared': 64, 'stream': 512}
    """
    shared, width = weights["shared.0.weight"].shape
    num_actions, stream = weights["advantage.2.weight"].shape
    embed = int(weights["action_embed.weight"].shape[1]) if "action_embed.weight" in weights else 0
    out = {"state_dim": int(width) - 2 * embed, "num_actions": int(num_actions), "shared": int(shared),
           "stream": int(stream)}
    return out | ({"action_embed": embed} if embed else {})


def model_to_bytes(
    model: DuelingDQN,
    *,
    version: int,
    train_step: int,
    action_set: str,
    state_layout: str = STATE_LAYOUT,
    delay_frames: int | None = None,
    character: str | None = None,
    seed: int | None = None,
    stages: Sequence[str] | None = None,
) -> bytes:
    """Serialize the online network's weights with the docs/design.md metadata.

    ``delay_frames``, where given, is the input delay the network trained under (``env.delay_frames``),
    kept as metadata so that whoever plays the file (the UMI bot, ``eval``) can say when its own differs.
    ``character``, where given, is the character it plays (DESIGN.md "Ports": ``env.characters[0]``).
    ``seed``, where given, is the seed of the run that trained it (``train.seed``).
    ``stages``, where given, are the stages it trained on (``env.stage``), recorded as a JSON list (read back
    by :func:`trained_stages`).
    """
    expected = _expected_actions(action_set)
    if expected is not None and expected != model.num_actions:
        raise ValueError(f"action set {action_set!r} has {expected} actions, the network has {model.num_actions}")
    _check_layout_width(state_layout, model.state_dim, "the network")
    weights = {k: v.detach().to("cpu").contiguous() for k, v in model.state_dict().items()}
    meta = {
        "weights_sha256": weights_digest(weights),
        "schema": MODEL_SCHEMA,
        "version": str(int(version)),
        "train_step": str(int(train_step)),
        "state_layout": state_layout,
        "action_set": action_set,
        "sizes": json.dumps(model.sizes(), sort_keys=True),
    }
    if delay_frames is not None:
        if int(delay_frames) < 0:
            raise ValueError(f"delay_frames must be 0 or more, got {delay_frames}")
        meta["delay_frames"] = str(int(delay_frames))
    if character is not None:
        meta["character"] = str(character)
    if seed is not None:
        meta["seed"] = str(int(seed))
    if stages is not None:
        meta["stages"] = stages_json(stages)
    return st_save_bytes(weights, metadata=meta)


def weights_digest(weights: dict[str, torch.Tensor]) -> str:
    """sha256 over the tensors' names, dtypes, shapes and bytes (in name order).

    Stored in the file's own metadata so a model file vouches for itself: a download cut short
    or a bit flipped on disk is caught even where no ``X-Model-Sha256`` header came with it.
    """
    h = hashlib.sha256()
    for name in sorted(weights):
        t = weights[name].detach().to("cpu").contiguous()
        h.update(f"{name}|{t.dtype}|{tuple(t.shape)}|".encode())
        h.update(t.view(torch.uint8).numpy().tobytes() if t.numel() else b"")
    return h.hexdigest()


def _expected_actions(action_set: str | None) -> int | None:
    # A file naming a known action set must have that many outputs; unknown names are left to callers.
    from melee_agent.envs.actions import get_action_set  # noqa: PLC0415 (actions imports model's neighbours)

    try:
        return get_action_set(action_set).num_actions if action_set else None
    except KeyError:
        return None


class ModelMismatch(ValueError):
    """A whole model file made for something else: another schema, state layout or action set.

    Unlike a damaged download it does not get better by trying again.
    """


def model_from_bytes(
    data: bytes,
    *,
    action_set: str | None = None,
    state_layout: str | None = STATE_LAYOUT,
    device: str | torch.device = "cpu",
    origin: str = "model",
) -> tuple[DuelingDQN, dict[str, Any]]:
    """Rebuild a :class:`DuelingDQN` from model-file bytes, checking schema, layout and action set."""
    try:
        meta = read_metadata(data)
    except HeaderError as e:
        raise HeaderError(f"{origin}: {e}") from None
    if meta.get("schema") != MODEL_SCHEMA:
        raise ModelMismatch(f"{origin}: schema is {meta.get('schema')!r}, expected {MODEL_SCHEMA!r}")
    if state_layout is not None and meta.get("state_layout") != state_layout:
        raise ModelMismatch(
            f"{origin}: state layout {meta.get('state_layout')!r} does not match {state_layout!r}"
        )
    if action_set is not None and meta.get("action_set") != action_set:
        raise ModelMismatch(f"{origin}: action set {meta.get('action_set')!r} does not match {action_set!r}")
    try:
        sizes = json.loads(meta["sizes"])
        version, train_step = int(meta["version"]), int(meta["train_step"])
        model = DuelingDQN(**sizes)
    except (KeyError, TypeError, ValueError) as e:
        raise ValueError(f"{origin}: bad model metadata ({type(e).__name__}: {e})") from None
    _check_layout_width(meta.get("state_layout"), model.state_dim, f"{origin}: the network")
    expected = _expected_actions(meta.get("action_set"))
    if expected is not None and expected != model.num_actions:
        raise ValueError(f"{origin}: action set {meta.get('action_set')!r} has {expected} actions, "
                         f"the network has {model.num_actions}")
    try:
        weights = st_load_bytes(data)
        model.load_state_dict(weights)
    except Exception as e:  # noqa: BLE001 (safetensors' own error type, or a shape mismatch from torch)
        raise ValueError(f"{origin}: weights do not load ({type(e).__name__}: {e})") from None
    if "weights_sha256" in meta and weights_digest(weights) != meta["weights_sha256"]:
        raise ValueError(f"{origin}: the weights do not match the file's own weights_sha256 (damaged or altered)")
    model.to(device).eval()
    out: dict[str, Any] = dict(meta)
    out["version"] = version
    out["train_step"] = train_step
    out["sizes"] = sizes
    out["delay_frames"] = trained_delay(meta, origin)
    out["stages"] = list(trained_stages(meta, origin))
    out["sha256"] = hashlib.sha256(data).hexdigest()
    return model, out


def _check_layout_width(layout: str | None, state_dim: int, who: str) -> None:
    """A known state layout's width must be the network's input width (an unknown one is left to whoever reads it)."""
    known = LAYOUTS.get(layout or "")
    if known is not None and known.dim != state_dim:
        raise ValueError(f"{who} reads {state_dim} floats, but state layout {layout!r} has {known.dim}")


def trained_delay(meta: dict[str, str], origin: str = "model") -> int | None:
    """The input delay a model file says it trained under, or None for files that do not say (older ones).

    >>> trained_delay({"delay_frames": "18"}), trained_delay({})
    (18, None)
    """
    raw = meta.get("delay_frames")
    if raw is None:
        return None
    try:
        value = int(raw)
    except ValueError:
        value = -1
    if value < 0:
        raise ValueError(f"{origin}: bad model metadata (delay_frames {raw!r} is not a whole number of frames >= 0)")
    return value


def stages_json(stages: Sequence[str]) -> str:
    """The ``stages`` metadata value: a JSON list of stage names, at least one.

    >>> stages_json(["battlefield", "dreamland"])
    '["battlefield", "dreamland"]'
    """
    names = [str(s) for s in stages]
    if not names or not all(names):
        raise ValueError(f"stages must name at least one stage, got {list(stages)!r}")
    return json.dumps(names)


def trained_stages(meta: dict[str, Any], origin: str = "model") -> tuple[str, ...]:
    """The stages a model file says it trained on, first the one it plays by default; a file that records
    none (older ones) trained on Final Destination.

    >>> trained_stages({"stages": '["battlefield", "dreamland"]'}), trained_stages({})
    (('battlefield', 'dreamland'), ('final_destination',))
    """
    raw = meta.get("stages")
    if raw is None:
        return (DEFAULT_STAGE,)
    try:
        names = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        names = None
    if not isinstance(names, list) or not names or not all(isinstance(n, str) and n for n in names):
        raise ValueError(f"{origin}: bad model metadata (stages {raw!r} is not a JSON list of stage names)")
    return tuple(names)


def save_model(
    path: str | os.PathLike,
    model: DuelingDQN,
    *,
    version: int,
    train_step: int,
    action_set: str,
    state_layout: str = STATE_LAYOUT,
    delay_frames: int | None = None,
    character: str | None = None,
    seed: int | None = None,
    stages: Sequence[str] | None = None,
) -> str:
    """Write a model file atomically; returns its sha256."""
    data = model_to_bytes(model, version=version, train_step=train_step, action_set=action_set,
                          state_layout=state_layout, delay_frames=delay_frames,
                          character=character, seed=seed, stages=stages)
    atomic_write_bytes(path, data)
    return hashlib.sha256(data).hexdigest()


def load_model(
    path: str | os.PathLike,
    *,
    action_set: str | None = None,
    state_layout: str | None = STATE_LAYOUT,
    device: str | torch.device = "cpu",
) -> tuple[DuelingDQN, dict[str, Any]]:
    """Load a model file; a layout or action set other than the expected one is a ValueError."""
    with open(path, "rb") as f:
        data = f.read()
    return model_from_bytes(data, action_set=action_set, state_layout=state_layout, device=device,
                            origin=str(path))
