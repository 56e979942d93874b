"""One fight frame for B environments: timers -> controllers -> actions -> movement -> hits -> shields -> KOs.

:func:`fight_frame` has the signature and result of the dodging game's
:func:`~melee_agent.arena.dodge.frame.game_frame` (a :class:`~melee_agent.arena.dodge.frame.FrameResult`), so
the arena's frame loop (:func:`melee_agent.arena.async_step.frame_async`) runs either. Everything is
elementwise over environments: B = 1 and B = 1,024 play the same games.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from melee.enums import Action
from torch import Tensor

from melee_agent.arena.env_state import CPU, EnvState, PlayerState, contiguous
from melee_agent.arena.cpu import CPUS, Cpu, CpuDecision, check_cpu
from melee_agent.arena.cpu.designed import DesignedCpu, FightLevels
from melee_agent.arena.cpu.melee import MeleeCpu, MeleeLevels
from melee_agent.arena.fight import fighter, hits, pads, physics
from melee_agent.arena.fight.pads import Pads
from melee_agent.arena.fight.fighter import STANDING, set_free, start, slot_row
from melee_agent.arena.fight.moves import FightTable, Slot, build_table
from melee_agent.arena.fight.state import ECB_LOCK, FightState, Pad
from melee_agent.arena.dodge.frame import FrameResult
from melee_agent.arena.stage_table import StageGeo
from melee_agent.arena.stages import stage_named

_FD = stage_named("final_destination")
EDGE = _FD.edge_x  # libmelee stages.py (arena/stages.py): Final Destination's edge, 85.5657
BLAST_LEFT, BLAST_RIGHT, BLAST_TOP, BLAST_BOTTOM = _FD.blast  # stages.py
RESPAWN_INVULNERABLE = 120  # SmashWiki: 120 frames of invincibility after respawning (DESIGN.md)
SHIELD_MAX = 60.0  # SmashWiki shield: 60 HP
SHIELD_DECAY = 0.28  # SmashWiki shield: -0.28 per frame while held
SHIELD_REGEN = 0.07  # SmashWiki shield: +0.07 per frame while not held
#: SmashWiki "Perfect shield": in Melee a shield pressed about four frames before the hit powershields it (no
#: shield damage): a hit on the shield's frames 1-4. Played with ``cpu = "melee"`` only (``designed`` keeps
#: the earlier rules, so its games replay as they were).
PERFECT_SHIELD_FRAMES = 4


@dataclass(frozen=True)
class FightConsts:
    """What a fight frame needs besides the state, built once per arena."""

    table: FightTable
    levels: FightLevels
    melee_levels: MeleeLevels
    cpu: str = "designed"  # which CPU plays Marth (one of CPUS)
    player: Cpu | None = None  # that CPU as an object (:mod:`melee_agent.arena.cpu`), built once with the tables

    @classmethod
    def build(cls, device: torch.device, num_envs: int, cpu: str = "designed") -> FightConsts:
        levels, melee_levels = FightLevels.build(device), MeleeLevels.build(device)
        player = MeleeCpu(melee_levels) if check_cpu(cpu) == "melee" else DesignedCpu(levels)
        return cls(build_table(device, num_envs), levels, melee_levels, cpu, player)

    @property
    def perfect_shield_frames(self) -> int:
        """The perfect-shield window this fight plays (0: none, the designed CPU's rules)."""
        return PERFECT_SHIELD_FRAMES if self.cpu == "melee" else 0


def count_down(state: EnvState) -> tuple[EnvState, Tensor]:
    """A new frame: frames count up and timers down, except for a fighter frozen in hitlag."""
    ps, fs, g = state.players, state.fight, state.game
    frozen = fs.hitlag_left > 0
    live = ~frozen
    dec = lambda v: torch.where(live, (v - 1).clamp(min=0), v)  # noqa: E731
    stun_ends = live & (ps.hitstun_frames_left == 1)
    ps = ps._replace(action_frame=torch.where(live, ps.action_frame + 1, ps.action_frame),
                     hitstun_frames_left=dec(ps.hitstun_frames_left), busy_left=dec(ps.busy_left),
                     invulnerability_left=(ps.invulnerability_left - 1).clamp(min=0))
    ps = physics.free_after_stun(ps, stun_ends)
    fs = fs._replace(hitlag_left=(fs.hitlag_left - 1).clamp(min=0), lcancel_left=(fs.lcancel_left - 1).clamp(min=0),
                     ledge_wait=(fs.ledge_wait - 1).clamp(min=0), grab_left=dec(fs.grab_left), ecb_lock=dec(fs.ecb_lock))
    g = g._replace(tick=g.tick + 1, episode_frame=g.episode_frame + 1)
    return state._replace(players=ps, fight=fs, game=g), frozen


def _shields(ps: PlayerState, T: FightTable) -> PlayerState:
    """Shields shrink while held and grow back otherwise (SmashWiki rates); at 0 the shield breaks."""
    holding = (ps.action == float(Action.SHIELD.value)) & (ps.move < 0)
    value = torch.where(holding, ps.shield_strength - SHIELD_DECAY, (ps.shield_strength + SHIELD_REGEN).clamp(max=SHIELD_MAX))
    broken = holding & (value <= 0)
    ps = ps._replace(shield_strength=torch.where(broken, hits.SHIELD_AFTER_BREAK, value))
    return start(ps, broken, slot_row(T, Slot.SHIELD_BREAK), T)


def _landed_clears_credit(ps: PlayerState, fs: FightState) -> FightState:
    """A fighter standing on the ground again, out of hitstun and hitlag with no launch pending, clears
    the KO credit (SmashWiki "Self-destruct": in Melee the credit resets when the character touches the
    ground; a grounded hit keeps it through its hitlag and launch)."""
    landed = (ps.on_ground > 0) & (ps.hitstun_frames_left <= 0) & (fs.hitlag_left <= 0) & (fs.launch_kb <= 0)
    return fs._replace(ko_credit=torch.where(landed, -1.0, fs.ko_credit))


def _moved(before: PlayerState, after: PlayerState, fs: FightState, ko: Tensor) -> FightState:
    """Each fighter's position change this frame (``pos_delta``, what Melee's CPU predicts with); 0 on a KO."""
    return fs._replace(pos_dx=torch.where(ko, 0.0, after.position_x - before.position_x),
                       pos_dy=torch.where(ko, 0.0, after.position_y - before.position_y))


def beyond(ps: PlayerState, geo: StageGeo | None = None) -> Tensor:
    """``[B, 2]``: past a blast zone (each environment's stage's; None: Final Destination's)."""
    x, y = ps.position_x, ps.position_y
    if geo is None:
        return (x < BLAST_LEFT) | (x > BLAST_RIGHT) | (y > BLAST_TOP) | (y < BLAST_BOTTOM)
    return (x < geo.blast_l) | (x > geo.blast_r) | (y > geo.blast_t) | (y < geo.blast_b)


def _blast_zones(ps: PlayerState, fs: FightState, spawn_x: Tensor, was_beyond: Tensor,
                 geo: StageGeo | None = None) -> tuple[PlayerState, FightState, Tensor]:
    """KOs past the stage's blast zones (after this frame's movement, or already before it): a stock lost, a respawn
    with 120 frames of invincibility at ``spawn_x`` (``[2]`` or ``[B, 2]``: the stage's respawn spots)."""
    x = ps.position_x
    ko = beyond(ps, geo) | was_beyond
    # Who gets the KO: the move on credit (-1: none, a self-destruct), kept past the respawn.
    fs = fs._replace(ko_cause=torch.where(ko, fs.ko_credit, fs.ko_cause))
    # The revival platform is left out: the fighter reappears standing at its spawn spot (as in the dodging arena).
    reset = dict(position_y=0.0, speed_x=0.0, speed_y=0.0, speed_x_attack=0.0, speed_y_attack=0.0, percent=0.0,
                 on_ground=1.0, jumps_left=2.0, hitstun_frames_left=0.0, fast_falling=0.0, hit_done=0.0,
                 shield_strength=SHIELD_MAX, invulnerability_left=float(RESPAWN_INVULNERABLE))
    ps = ps._replace(stock=ps.stock - ko.float(), position_x=torch.where(ko, spawn_x, x),
                     **{k: torch.where(ko, v, getattr(ps, k)) for k, v in reset.items()})
    ps = set_free(ps, ko, STANDING)
    fresh = fs.fresh()
    keep = ("stale", "a_held", "b_held", "z_held", "shield_held", "stick_x_prev", "stick_y_prev", "cpu_plan", "cpu_timer",
            "ko_cause", "cpu_x80")
    melee = ("cpu_act", "cpu_wait", "cpu_count")  # [B]: the melee CPU's memory, cleared when Marth is KO'd
    fs = fs._replace(**{k: torch.where(ko, getattr(fresh, k), getattr(fs, k)) for k in fs._fields
                        if k not in keep and k not in melee})
    fs = fs._replace(**{k: torch.where(ko[:, CPU], getattr(fresh, k), getattr(fs, k)) for k in melee})
    return ps, fs, ko


def fight_frame(state: EnvState, ctrl: Tensor, consts: FightConsts, seed: int | Tensor, spawn_x: Tensor,
                opponent: tuple[Tensor, Tensor] | None = None) -> FrameResult:
    """Advance every fight one frame; ``ctrl`` is the agent's controller state ``[len(TABLE_COLUMNS), B]``;
    ``opponent``, where given, is port 1's controller state (same layout) and the ``[B]`` mask of environments
    where it, not the CPU, plays port 1 (DESIGN.md "Ports": a model opponent)."""
    other = None if opponent is None else (fighter.agent_pad(opponent[0]), opponent[1])
    return fight_frame_fox(state, fighter.agent_pad(ctrl), consts, seed, spawn_x, other)[0]


def cpu_control(state: EnvState, consts: FightConsts, seed: int | Tensor) -> CpuDecision:
    """Marth's controller this frame from the fight's CPU object (after :func:`count_down`)."""
    player = consts.player
    if player is None:  # a FightConsts made by hand, without build()
        player = MeleeCpu(consts.melee_levels) if consts.cpu == "melee" else DesignedCpu(consts.levels)
    return player.control(state, consts.table, seed, consts.table.stages.at(state.game.stage).edge_b())


def fight_frame_fox(state: EnvState, fox: tuple[Tensor, ...], consts: FightConsts, seed: int | Tensor,
                    spawn_x: Tensor, opponent: tuple[tuple[Tensor, ...], Tensor] | None = None
                    ) -> tuple[FrameResult, Pad]:
    """:func:`fight_frame` from Fox's controller as ``[B]`` a, b, jump, z, shield, sx, sy; also both pads played
    (what ``cpu-report`` reads the CPU's presses from)."""
    was_beyond = beyond(state.players, consts.table.stages.at(state.game.stage))
    state, frozen = count_down(state)
    cpu = cpu_control(state, consts, seed)
    state = state._replace(fight=cpu.fight, game=state.game._replace(cpu_cooldown=cpu.cooldown))
    port1 = tuple(cpu.pad)
    if opponent is not None:  # port 1 played by a controller other than the CPU where the mask holds
        port1 = tuple(torch.where(opponent[1], o, m) for o, m in zip(opponent[0], port1))
    pad = Pad(*(torch.stack((f, m), 1) for f, m in zip(fox, port1)))
    return play(state, pad, frozen, consts.table, spawn_x, was_beyond, consts.perfect_shield_frames), pad


def fight_frame_pads(state: EnvState, raw: Pads, consts: FightConsts, spawn_x: Tensor) -> FrameResult:
    """Advance every fight one frame from both ports' raw controller frames (:class:`~.pads.Pads`, ``[B, 2]``):
    the game's reading of them (:func:`~.pads.read`), no CPU."""
    was_beyond = beyond(state.players, consts.table.stages.at(state.game.stage))
    state, frozen = count_down(state)
    pad = pads.read(raw, state.fight.a_held > 0)
    return play(state, pad, frozen, consts.table, spawn_x, was_beyond)


def play(state: EnvState, pad: Pad, frozen: Tensor, T: FightTable, spawn_x: Tensor,
         was_beyond: Tensor | None = None, perfect_shield_frames: int = 0) -> FrameResult:
    """The rest of a frame once both controllers are known (after :func:`count_down`): what tests drive directly.

    Each environment plays on its stage (``T.stages`` by ``state.game.stage``): its floor, platforms, ledges, blast
    zones and respawn spots (which take the place of ``spawn_x``: Final Destination's are the same)."""
    geo = T.stages.at(state.game.stage)
    platforms = T.stages.num_platforms > 0
    lifted = state.players.on_ground > 0  # on the ground as the frame began: a takeoff this frame is physics' business
    ps, fs = fighter.advance(state.players, state.fight, pad, T, geo.edge, frozen, platforms)
    fs = _lock_ecb(ps, fs, lifted)
    ps, fs = physics.step(ps, fs, pad, T, geo.edge, frozen, lifted & (ps.on_ground == 0), geo if platforms else None)
    ps, fs, damage = hits.resolve(ps, fs, T, frozen, perfect_shield_frames)
    ps, fs = hits.apply_launch(ps, fs, pad)
    fs = _lock_ecb(ps, fs, lifted)
    ps = _shields(ps, T)
    fs = _landed_clears_credit(ps, fs)
    ps, fs, ko = _blast_zones(ps, fs, geo.respawn, torch.zeros_like(frozen) if was_beyond is None else was_beyond, geo)
    fs = _moved(state.players, ps, fs, ko)
    return FrameResult(state._replace(players=contiguous(ps), fight=FightState(*(t.contiguous() for t in fs))),
                       damage, ko)


def _lock_ecb(ps: PlayerState, fs: FightState, lifted: Tensor) -> FightState:
    """Leaving the ground (a jump, a drop, a walk off, a launch) locks the collision box's bottom at the feet for
    ECB_LOCK frames (doldecomp/melee ``ftCommon_8007D5D4``)."""
    return fs._replace(ecb_lock=torch.where(lifted & (ps.on_ground == 0), float(ECB_LOCK), fs.ecb_lock))


__all__ = ["fight_frame", "fight_frame_fox", "fight_frame_pads", "cpu_control", "play", "count_down", "FightConsts",
           "EDGE", "CPU", "CPUS", "check_cpu"]
