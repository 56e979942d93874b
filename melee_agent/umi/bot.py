"""The ``umi.Bot`` that plays a trained model: greedy macros, played frame by frame, one memory per game.

Each game's memory is three numbers (``umi.Bot`` keeps it per game and hands this batch's rows to
:meth:`MeleeAgentBot.act`, resetting a game's row on its first frame): ``action``, the decision being
played (and, once it ends, the previous action the state's last float shows), ``macro``, the macro it
plays (the action's own, or after a shine the post-shine one of ``untouchable-paper``:
:meth:`~melee_agent.envs.actions.ActionSet.macro_index`), and ``position``, the frame of that macro to
play next. Where ``position`` is 0 the game decides: its frame is encoded to the 27 floats
(:func:`~melee_agent.umi.frames.encode_frames`) and the model's greedy action starts; every game then
plays one controller row of its macro. That is the arena's and
Dolphin's loop, one frame per reply. The input delay is the session's (``session.delay``), applied
by the arena: the bot never queues inputs.

A bot may hold a model per stage (:meth:`MeleeAgentBot.for_stages`): every frame says the stage its game is
on (``umi.frame.FRAME``'s ``stage``, an internal stage id), and each game is played by its stage's model (the
default model on stages none is named for). A game never changes stage, so its memory is always its own
model's.

Example::

    >>> from melee_agent.envs.actions import ACTION_SETS
    >>> controller_table(ACTION_SETS["untouchable"]).shape   # actions, frames, UMI controller row
    (5, 32, 13)
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import numpy as np
import torch
import umi
from umi.frame import BUTTONS as UMI_BUTTONS
from umi.frame import CTRL_FIELDS, NEUTRAL_CTRL
from umi.frame import STAGES as UMI_STAGES

from melee_agent.envs.actions import COL, ActionSet, get_action_set
from melee_agent.rl.model import DuelingDQN, model_from_bytes
from melee_agent.envs.state import STATE_LAYOUT, get_layout
from melee_agent.umi.frames import encode_frames

#: In an exported bot's folder: the model of every stage not named, and the folder of each named stage's own.
WEIGHTS, STAGE_FOLDER = "model.safetensors", "stages"

#: Where each UMI controller value comes from in :meth:`ActionSet.table` (None: held neutral).
_SOURCE: dict[str, str | None] = {
    "main_x": "stick_x", "main_y": "stick_y", "c_x": None, "c_y": None, "shoulder": "l_shoulder",
    **{b: (b if b in COL else None) for b in UMI_BUTTONS},
}


def controller_table(action_set: ActionSet) -> np.ndarray:
    """Every macro's frames as UMI controller rows: float32 ``[M, T_max, 13]`` (``umi.frame.CTRL_FIELDS``; the
    actions' own macros first, as :attr:`ActionSet.table`).

    The same controller states Dolphin presses through ``melee.Controller`` (C stick neutral,
    D-pad up released); frames past an action's end are neutral and never played.
    """
    table = action_set.table
    out = np.broadcast_to(NEUTRAL_CTRL, table.shape[:2] + (len(CTRL_FIELDS),)).copy()
    for k, field in enumerate(CTRL_FIELDS):
        source = _SOURCE[field]
        if source is not None:
            out[..., k] = table[..., COL[source]]
    return out


class ModelPlayer:
    """One model file's network and the tables it plays: its macros as controller rows, their lengths, the
    post-shine remap, and the state layout each frame is encoded to."""

    def __init__(self, model: DuelingDQN, action_set: ActionSet, meta: dict[str, Any] | None = None):
        if model.num_actions != action_set.num_actions:
            raise ValueError(f"the network has {model.num_actions} outputs, action set {action_set.name!r} "
                             f"{action_set.num_actions} actions")
        self.model = model.eval()
        self.action_set = action_set
        self.meta = dict(meta or {})
        self.ctrl = controller_table(action_set)
        self.lengths = action_set.lengths
        self.remap = action_set.remap_table  # [A, A]: the macro of decision a after decision p
        #: The state layout the model file records (what each frame is encoded to).
        self.layout = get_layout(self.meta.get("state_layout", STATE_LAYOUT))
        if self.layout.dim != model.state_dim:
            raise ValueError(f"the network reads {model.state_dim} floats, state layout {self.layout.name!r} has "
                             f"{self.layout.dim}")

    @classmethod
    def from_bytes(cls, data: bytes, origin: str = "model") -> ModelPlayer:
        """A player from model-file bytes (any action set the file names); a bad file is a ValueError naming it."""
        try:
            model, meta = model_from_bytes(data, state_layout=None, origin=origin)  # any layout: frames are encoded in it
        except ValueError as e:  # some of its messages (not a safetensors file, ...) do not name the file
            raise ValueError(str(e) if str(e).startswith(f"{origin}:") else f"{origin}: {e}") from None
        try:
            action_set = get_action_set(str(meta.get("action_set")))
        except KeyError as e:
            raise ValueError(f"{origin}: {e.args[0]}") from None
        meta["origin"] = origin
        return cls(model, action_set, meta)

    @property
    def num_actions(self) -> int:
        return self.action_set.num_actions

    @property
    def label(self) -> str:
        return f"{os.path.basename(str(self.meta.get('origin', 'model')))} ({self.action_set.name})"

    def decide(self, frames: np.ndarray, previous_action: np.ndarray) -> np.ndarray:
        """The model's greedy actions ``[N]`` for these frames."""
        obs = torch.from_numpy(encode_frames(frames, previous_action, self.num_actions, self.layout.name))
        return self.model(obs).argmax(dim=1).numpy()

    def play(self, frames: np.ndarray, action: np.ndarray, macro: np.ndarray, position: np.ndarray) -> np.ndarray:
        """One controller row per game of ``frames`` (``[N, 13]``); the games' memories move on in place."""
        choose = position == 0
        if choose.any():
            previous = action[choose]
            action[choose] = self.decide(frames[choose], previous)
            macro[choose] = self.remap[action[choose], previous]
        ctrl = self.ctrl[macro, position]
        position += 1
        position[position >= self.lengths[macro]] = 0
        return ctrl


def stage_id(name: str) -> int:
    """UMI's internal id of a stage named as ``env.stage`` names it (``battlefield``: libmelee's name in lower case).

    >>> stage_id("final_destination"), stage_id("Battlefield")
    (25, 24)
    """
    key = str(name).strip().upper()
    if key not in UMI_STAGES:
        raise ValueError(f"{name!r} is not a stage a championship game is played on; use one of "
                         f"{', '.join(sorted(k.lower() for k in UMI_STAGES))}")
    return UMI_STAGES[key]


class MeleeAgentBot(umi.Bot):
    """A Dueling DQN playing Fox; build it with :meth:`from_bytes` or :meth:`from_file` (one model for every stage),
    or :meth:`for_stages` (a model per stage, chosen by each frame's ``stage``)."""

    name = "melee-agent"
    characters = "FOX"
    deterministic = True

    def __init__(self, model: DuelingDQN, action_set: ActionSet, meta: dict[str, Any] | None = None):
        self.players = [ModelPlayer(model, action_set, meta)]
        #: The player of each internal stage id (UMI frames' ``stage``): the first, the default, where none is named.
        self.stage_player = np.zeros(256, np.int64)

    @classmethod
    def from_player(cls, player: ModelPlayer) -> MeleeAgentBot:
        return cls(player.model, player.action_set, player.meta)

    @classmethod
    def from_bytes(cls, data: bytes, origin: str = "model") -> MeleeAgentBot:
        """A bot from model-file bytes (any action set the file names); a bad file is a ValueError naming it."""
        return cls.from_player(ModelPlayer.from_bytes(data, origin))

    @classmethod
    def from_file(cls, path: str | os.PathLike) -> MeleeAgentBot:
        with open(path, "rb") as f:
            return cls.from_bytes(f.read(), origin=str(path))

    @classmethod
    def for_stages(cls, default: ModelPlayer, by_stage: dict[str, ModelPlayer]) -> MeleeAgentBot:
        """A bot that plays ``by_stage[stage]`` in games on that stage (names as ``env.stage``'s) and ``default``
        on every other stage."""
        bot = cls.from_player(default)
        for name, player in by_stage.items():
            k = next((i for i, p in enumerate(bot.players) if p is player), None)
            if k is None:
                bot.players.append(player)
                k = len(bot.players) - 1
            bot.stage_player[stage_id(name)] = k
        return bot

    @classmethod
    def from_folder(cls, folder: str | os.PathLike) -> MeleeAgentBot:
        """The bot an exported zip holds: ``model.safetensors`` (every stage not named) and ``stages/STAGE.safetensors``
        (that stage's model), where there are any."""
        folder = Path(folder)
        default = ModelPlayer.from_bytes((folder / WEIGHTS).read_bytes(), origin=WEIGHTS)
        by_stage = {f.stem: ModelPlayer.from_bytes(f.read_bytes(), origin=f"{STAGE_FOLDER}/{f.name}")
                    for f in sorted((folder / STAGE_FOLDER).glob("*.safetensors"))}
        return cls.for_stages(default, by_stage)

    # The default player's: what one model's bot always had.
    @property
    def model(self) -> DuelingDQN:
        return self.players[0].model

    @property
    def action_set(self) -> ActionSet:
        return self.players[0].action_set

    @property
    def meta(self) -> dict[str, Any]:
        return self.players[0].meta

    @property
    def num_actions(self) -> int:
        return self.action_set.num_actions

    def stage_models(self) -> dict[str, str]:
        """Which model plays on each championship stage (its label), ``"every other stage"`` for the default's."""
        named = {k.lower(): self.players[int(self.stage_player[v])].label for k, v in UMI_STAGES.items()
                 if self.stage_player[v] != 0}
        return {**dict(sorted(named.items())), "every other stage": self.players[0].label}

    def setup(self, session: umi.Session) -> None:
        torch.set_num_threads(1)  # a small network: one thread answers one game fastest, and shares the cores
        trained_on = ", ".join(self.meta.get("stages") or ["final_destination"])  # model_from_bytes read them
        print(f"melee-agent umi: {self.action_set.name} model (version {self.meta.get('version', '?')}, trained on "
              f"{trained_on}), delay {session.delay} (applied by the arena), up to {session.max_games} games in "
              f"{session.lanes} lane(s)", file=sys.stderr, flush=True)
        if len(self.players) > 1:
            print("melee-agent umi: a model per stage: " + "; ".join(f"{k}: {v}" for k, v in self.stage_models().items()),
                  file=sys.stderr, flush=True)
        for player in self.players:
            trained = player.meta.get("delay_frames")
            if trained is not None and trained != session.delay:
                print(f"melee-agent umi: warning: {'the model ' + player.label + ' ' if len(self.players) > 1 else 'this model '}"
                      f"trained with {trained} frames of input delay and the "
                      f"session plays {session.delay}; enter it on the {trained}-frame leaderboard, or train with "
                      f"env.delay_frames = {session.delay}", file=sys.stderr, flush=True)

    @property
    def trained_delay(self) -> int | None:
        """The input delay the (default) model file says it trained under (None: the file does not say), as
        :func:`melee_agent.rl.model.model_from_bytes` read it."""
        return self.meta.get("delay_frames")

    def initial_state(self, n: int) -> dict[str, np.ndarray]:
        """A new game's memory: no macro under way, previous action 0 (as an arena episode starts)."""
        return {"action": np.zeros(n, np.int64), "macro": np.zeros(n, np.int64), "position": np.zeros(n, np.int64)}

    def decide(self, frames: np.ndarray, previous_action: np.ndarray) -> np.ndarray:
        """The default model's greedy actions ``[N]`` for these frames."""
        return self.players[0].decide(frames, previous_action)

    def act(self, batch: umi.Batch, state: dict[str, np.ndarray]) -> tuple[umi.Actions, dict[str, np.ndarray]]:
        action, macro, position = state["action"].copy(), state["macro"].copy(), state["position"].copy()
        if len(self.players) == 1:
            ctrl = self.players[0].play(batch.frames, action, macro, position)
        else:
            # A game stays on its stage, so its memory is always its own stage's model's.
            who = self.stage_player[batch.frames["stage"]]
            ctrl = np.empty((len(who), len(CTRL_FIELDS)), np.float32)
            for k in np.unique(who):
                rows = np.flatnonzero(who == k)
                a, m, p = action[rows], macro[rows], position[rows]
                ctrl[rows] = self.players[int(k)].play(batch.frames[rows], a, m, p)
                action[rows], macro[rows], position[rows] = a, m, p
        return umi.Actions(ctrl=ctrl), {"action": action, "macro": macro, "position": position}


def serve_file(path: str | os.PathLike, bot_class: type[MeleeAgentBot] = MeleeAgentBot,
               socket_path: str | None = None) -> None:
    """Load a model file and play until the arena shuts the session down (``UMI_SOCKET`` or ``socket_path``)."""
    bot = bot_class.from_file(path)
    umi.serve(bot, argv=["--socket", socket_path] if socket_path else [])
