"""`melee-agent bench arena`: game frames per second summed over environments.

Three loops per batch size B, all through ``step_async`` (every environment advances every
frame): noop actions (a 1-frame macro in the games' own sets, so every call is one frame; ``basic``'s
noop holds 3 frames), random actions, and Dueling
DQN action selection (argmax over Q for the environments whose decision is due, as a worker
does). The simulator runs compiled (``Arena(compile=True)``) unless ``--eager``; compiling
happens before the clock starts. One Dolphin at full speed plays 60 frames per second.

``--side-by-side GAME`` compares two games' arenas instead: noop, in one process, taking half-second
turns, so that the host's drift over a run falls on both alike.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from typing import Any

import torch
from melee_agent.cli import flags

TARGET_NOOP = 1_000_000  # frames/s at B = 4,096 with noop actions
TARGET_DQN = 200_000  # frames/s with Dueling DQN selection in the loop
TARGET_GPU = 50_000_000  # frames/s at the best B on a GPU (issue 26: about 1,000x CuLE's best per GPU)
CPU_ENVS, GPU_ENVS = "1,64,1024,4096", "4096,16384,65536,262144"


def add_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--envs", default=None,
                   help=f"comma-separated batch sizes (default: {CPU_ENVS} on the CPU, {GPU_ENVS} on CUDA)")
    p.add_argument("--seconds", type=flags.positive_float, default=3.0, help="measured time per loop (default: %(default)s)")
    p.add_argument("--quick", action="store_true", help="B = 1 and 64, 0.5 s each (for tests)")
    p.add_argument("--eager", action="store_true", help="run the simulator op by op instead of compiled")
    p.add_argument("--game", default="dodge", choices=("dodge", "fight"), help="the arena's game (default: %(default)s)")
    p.add_argument("--side-by-side", default=None, choices=("dodge", "fight"), metavar="GAME",
                   help="instead of the three loops: --game's arena and GAME's, noop, in one process taking "
                        "half-second turns for --seconds each, and the ratio of their frames/s (the host's drift, "
                        "seen at 9-14.5 ms a call for the same work, then falls on both alike)")
    p.add_argument("--delay", type=flags.nonneg_int, default=0, help="input delay in frames (default: %(default)s)")
    p.add_argument("--cpu", default="melee", choices=("melee", "designed"),
                   help="the CPU on port 1: Melee's own (what the configs train against) or the designed one "
                        "(what this bench played before it had the flag) (default: %(default)s)")
    p.add_argument("--action-set", default=None,
                   help="the action set played (default: the game's own: untouchable for dodge, fight for fight)")


def _arena(B: int, device: str, compile: bool, game: str, delay: int, cpu: str, action_set: str | None = None):
    """The arena every loop of this bench plays: ``B`` environments against the CPU at level 9, seed 0."""
    from melee_agent.arena import Arena  # noqa: PLC0415

    return Arena(B, cpu_level=9, device=device, seed=0, compile=compile, game=game, delay_frames=delay,
                 action_set=action_set, cpu=cpu)


@torch.inference_mode()
def _measure(B: int, kind: str, seconds: float, device: str, compile: bool, game: str = "dodge",
             delay: int = 0, action_set: str | None = None, cpu: str = "melee") -> dict[str, float]:
    from melee_agent.rl.model import DuelingDQN  # noqa: PLC0415

    env = _arena(B, device, compile, game, delay, cpu, action_set)
    obs = env.reset()
    torch.manual_seed(0)  # the same (untrained) network every run, so runs compare
    model = DuelingDQN(num_actions=env.num_actions).to(device).eval()
    gen = torch.Generator(device=device).manual_seed(0)
    a = torch.zeros(B, dtype=torch.long, device=device)
    ready = torch.ones(B, dtype=torch.bool, device=device)

    decisions, decision_frames = 0, 0

    def one() -> int:
        nonlocal obs, a, ready, decisions, decision_frames
        if kind == "random":
            a = torch.randint(0, env.num_actions, (B,), generator=gen, device=device)
        elif kind == "dqn":
            due = ready.nonzero().view(-1)  # only decisions that are due: a worker's loop
            a = a.index_copy(0, due, model(obs.index_select(0, due)).argmax(1))
        chose = ready
        obs, _, _, info = env.step_async(a)
        ready = info.ready
        # One host read per call for the bookkeeping: decisions that ended, the frames of their whole
        # macros, and the frames this call played (every environment advances the same frames per call;
        # those that chose at this call have played exactly them, while another's info.frames counts its
        # macro since earlier calls too).
        n, f, played = torch.stack((ready.sum(), torch.where(ready, info.frames, 0).sum(),
                                    torch.where(chose, info.frames, 0).max())).tolist()
        decisions += n
        decision_frames += f
        return B * played

    for _ in range(5):
        one()
    frames, calls, decisions, decision_frames = 0, 0, 0, 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        frames += one()
        calls += 1
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    dt = time.perf_counter() - t0
    return {"envs": B, "loop": kind, "frames_per_s": frames / dt, "ms_per_call": 1e3 * dt / calls,
            "x_one_dolphin": frames / dt / 60.0, "frames_per_decision": decision_frames / max(decisions, 1)}


TURN_S = 0.5  # one arena's turn in --side-by-side: short beside the host's drift, long beside a call (~15 ms)


@torch.inference_mode()
def _side_by_side(B: int, games: tuple[str, str], seconds: float, device: str, compile: bool, delay: int,
                  cpu: str) -> dict[str, Any]:
    """Noop frames/s of two games' arenas in one process, taking :data:`TURN_S` turns until each has played
    ``seconds``: the median turn's milliseconds a call per game, and the first game's frames/s over the second's."""
    arenas = []
    for game in games:
        env = _arena(B, device, compile, game, delay, cpu)
        env.reset()
        noop = torch.full((B,), env.noop_index, dtype=torch.long, device=device)
        for _ in range(5):  # compiling (or loading the compiled graphs) before the clock starts
            env.step_async(noop)
        arenas.append((env, noop))
    turns: list[list[float]] = [[], []]
    while len(turns[0]) * TURN_S < seconds:
        for (env, noop), ms in zip(arenas, turns):
            t0, calls = time.perf_counter(), 0
            while time.perf_counter() - t0 < TURN_S:
                env.step_async(noop)
                calls += 1
            if device.startswith("cuda"):
                torch.cuda.synchronize()
            ms.append(1e3 * (time.perf_counter() - t0) / calls)
    med = [statistics.median(ms) for ms in turns]
    return {"envs": B, "games": list(games), "turns": len(turns[0]), "turn_s": TURN_S,
            "median_ms_per_call": dict(zip(games, med)),
            "frames_per_s": {g: B / m * 1e3 for g, m in zip(games, med)},
            "ms_per_call_by_turn": dict(zip(games, turns)), "ratio": med[1] / med[0]}


def _run_side_by_side(args: argparse.Namespace, sizes: list[int], seconds: float, compile: bool) -> dict[str, Any]:
    games = (args.game, args.side_by_side)
    if args.action_set:
        raise ValueError("--side-by-side plays each game's own action set: drop --action-set")
    if games[0] == games[1]:
        raise ValueError(f"--side-by-side must name the other game than --game ({args.game!r})")
    rows = [_side_by_side(B, games, seconds, args.device, compile, args.delay, args.cpu) for B in sizes]
    print(f"noop frames per second side by side, one process, {TURN_S} s turns (CPU {args.cpu} level 9, delay "
          f"{args.delay}, {args.device}, {'compiled' if compile else 'eager'}, {torch.get_num_threads()} threads)")
    print(f"{'envs':>6}  {games[0]:>12}  {games[1]:>12}  {games[0] + ' / ' + games[1]:>15}  {'turns':>6}")
    for r in rows:
        fps = r["frames_per_s"]
        print(f"{r['envs']:>6}  {fps[games[0]]:>12,.0f}  {fps[games[1]]:>12,.0f}  {r['ratio']:>15.3f}  {r['turns']:>6}")
    return {"device": args.device, "torch": torch.__version__, "compiled": compile, "games": list(games),
            "cpu": args.cpu, "delay_frames": args.delay, "threads": torch.get_num_threads(), "side_by_side": rows}


def run(args: argparse.Namespace) -> dict[str, Any]:
    envs = args.envs or (GPU_ENVS if args.device.startswith("cuda") else CPU_ENVS)
    try:
        sizes = [1, 64] if args.quick else [int(x) for x in envs.split(",")]
    except ValueError:
        raise ValueError(f"--envs must be comma-separated integers, got {envs!r}") from None
    seconds = 0.5 if args.quick else args.seconds
    if any(b <= 0 for b in sizes):
        raise ValueError(f"--envs must be positive batch sizes, got {envs}")
    compile = not args.eager
    if args.side_by_side:
        return _run_side_by_side(args, sizes, seconds, compile)
    from melee_agent.envs.actions import get_action_set  # noqa: PLC0415
    from melee_agent.arena.games import GAMES  # noqa: PLC0415

    action_set = args.action_set or GAMES[args.game].action_set
    try:
        noop_frames = len(get_action_set(action_set).actions[get_action_set(action_set).noop_index].frames)
    except KeyError as e:
        raise ValueError(f"--action-set: {e.args[0]}") from None
    rows = []
    for B in sizes:
        for kind in ("noop", "random", "dqn"):
            t0 = time.perf_counter()
            rows.append(_measure(B, kind, seconds, args.device, compile, args.game, args.delay, action_set, args.cpu))
            # One line per loop as it ends: compiling a large B takes minutes, and a run cut short still shows these.
            print(f"  B={B:,} {kind}: {rows[-1]['frames_per_s']:,.0f} frames/s ({time.perf_counter() - t0:.0f} s, "
                  f"{'compiling' if compile else 'setup'} included)", file=sys.stderr, flush=True)
    print(f"arena game frames per second, summed over environments (game {args.game}, CPU {args.cpu} level 9, "
          f"actions {action_set} "
          f"(noop: {noop_frames} frame{'s' if noop_frames > 1 else ''}), delay {args.delay}, {args.device}, "
          f"{'compiled' if compile else 'eager'}, {torch.get_num_threads()} threads; one Dolphin = 60 frames/s)")
    print(f"{'envs':>6}  {'noop':>12}  {'random':>12}  {'dqn':>12}  {'ms/call (noop)':>14}  {'frames/decision (dqn)':>21}")
    by = {(r["envs"], r["loop"]): r for r in rows}
    for B in sizes:
        print(f"{B:>6}  {by[(B, 'noop')]['frames_per_s']:>12,.0f}  {by[(B, 'random')]['frames_per_s']:>12,.0f}  "
              f"{by[(B, 'dqn')]['frames_per_s']:>12,.0f}  {by[(B, 'noop')]['ms_per_call']:>14.2f}  "
              f"{by[(B, 'dqn')]['frames_per_decision']:>21.1f}")
    best_noop = max(r["frames_per_s"] for r in rows if r["loop"] == "noop")
    best_dqn = max(r["frames_per_s"] for r in rows if r["loop"] == "dqn")
    targets = {
        "noop_frames_per_s_at_4096": {"target": TARGET_NOOP, "measured": by.get((4096, "noop"), {}).get("frames_per_s"),
                                      "met": by.get((4096, "noop"), {}).get("frames_per_s", 0) >= TARGET_NOOP},
        "dqn_frames_per_s_best": {"target": TARGET_DQN, "measured": best_dqn, "met": best_dqn >= TARGET_DQN},
    }
    if args.device.startswith("cuda"):
        targets = {"noop_frames_per_s_best_gpu": {"target": TARGET_GPU, "measured": best_noop,
                                                  "met": best_noop >= TARGET_GPU}, **targets}
    for name, t in targets.items():
        m = t["measured"]
        print(f"target {name}: {t['target']:,} -> {'n/a' if m is None else f'{m:,.0f}'} "
              f"({'met' if t['met'] else 'NOT met'})")
    gpu = torch.cuda.get_device_name(args.device) if args.device.startswith("cuda") else None
    return {"device": args.device, "gpu": gpu, "torch": torch.__version__, "compiled": compile, "game": args.game, "cpu": args.cpu,
            "action_set": action_set, "delay_frames": args.delay, "threads": torch.get_num_threads(), "results": rows,
            "targets": targets,
            "best_noop_frames_per_s": best_noop}
