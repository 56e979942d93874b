"""`melee-agent play`: a person plays the arena in the browser against a policy or the CPU, or watches a running
training's newest model (``--spectate RUN_DIR``). See docs/play.md and :mod:`melee_agent.play`."""

from __future__ import annotations

import argparse
from pathlib import Path

from melee_agent.games import game_of

from melee_agent.cli import flags
from melee_agent.cli.manager import check_listen

PLAY_PORT, SPECTATE_PORT = 8765, 8766


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("play", help="play the arena in the browser against a policy or the CPU, or spectate a "
                                    "running training's newest model (--spectate RUN_DIR)")
    p.add_argument("--policy", default=None,
                   help="the opponent: MODEL.safetensors, pretrained:NAME (a fight model shipped with melee-agent, "
                        "e.g. pretrained:fight) or a scripted policy (noop, random, fighter); default: the CPU at "
                        "--cpu-level")
    p.add_argument("--as", dest="human", default="fox", choices=("fox", "marth"),
                   help="the character you play (default: %(default)s). Against the CPU you play Fox (the arena's "
                        "CPU plays Marth only); against a policy either: the policy plays the other")
    p.add_argument("--cpu-level", type=int, default=9, help="the CPU's level, 1-9 (default: %(default)s)")
    p.add_argument("--cpu", default="melee", choices=("designed", "melee"),
                   help="which CPU plays Marth: Melee's own AI or the arena's designed one (default: %(default)s)")
    p.add_argument("--delay-frames", type=flags.nonneg_int, default=0,
                   help="frames between your controller and the game reading it, as netplay's delay "
                        "(default: %(default)s)")
    p.add_argument("--seconds", type=flags.positive_float, default=480.0,
                   help="the game's clock in seconds (default: %(default)s, Melee's 8:00)")
    p.add_argument("--stage", default=None, metavar="NAME",
                   help="the stage: final_destination, battlefield, yoshis_story, dreamland, fountain_of_dreams or "
                        "pokemon_stadium (default: the --policy model's first, else final_destination)")
    p.add_argument("--seed", type=flags.seed, default=0, help="the arena's seed (default: %(default)s)")
    p.add_argument("--compile", action=argparse.BooleanOptionalAction, default=True,
                   help="compile the arena's frame in the background (about 2 minutes on a 2-core CPU the first "
                        "time, seconds once cached; the game plays eagerly, slower, until then) so that it keeps "
                        "60 frames/s (default: on)")
    p.add_argument("--save", default=None, metavar="DIR",
                   help="save every finished game (and the page's Save button) as a replay of its frames in DIR, "
                        "for `melee-agent watch --replay FILE`")
    p.add_argument("--record", default=None, metavar="DIR",
                   help="keep your games as experience rows (an experience batch file per game) in DIR")
    p.add_argument("--spectate", default=None, metavar="RUN_DIR",
                   help="watch the newest model a running training publishes in RUN_DIR against the CPU, live")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default: %(default)s, this machine only)")
    p.add_argument("--port", type=flags.port_or_free, default=None,
                   help=f"port (default: {PLAY_PORT}; {SPECTATE_PORT} with --spectate; 0: a free one)")
    p.set_defaults(func=run)


def _policy_settings(policy: str | None) -> tuple[str, int, str]:
    """The policy's action set, the delay it trained under and its label on the page (the stage: :func:`_stage`)."""
    from melee_agent.cli.common import model_settings  # noqa: PLC0415
    from melee_agent.envs.state import STATE_LAYOUT  # noqa: PLC0415

    if policy is None:
        return "fight", 0, "CPU"
    settings = model_settings(policy)
    if settings is None:
        if Path(policy).suffix == ".safetensors" and not Path(policy).is_file():
            raise ValueError(f"--policy: model file not found: {policy}")
        return "fight", 0, policy
    if "env.game" not in settings or not game_of(settings["env.game"]).whole_games:
        raise ValueError(f"--policy {policy}: the model plays {settings.get('env.game', 'an unknown game')} "
                         f"(action set {settings['env.action_set']!r}); play needs a fight model (action set fight)")
    layout = settings.get("env.state_layout", STATE_LAYOUT)
    if layout != STATE_LAYOUT:  # the page's game and its recorded rows are the 27 floats'
        raise ValueError(f"--policy {policy}: the model reads state layout {layout!r}; play serves models of "
                         f"{STATE_LAYOUT!r}")
    return settings["env.action_set"], int(settings.get("env.delay_frames", 0)), Path(policy).name


def _stage(asked: str | None, policy: str | None) -> str:
    """``--stage``, else the model's first stage (its file's ``stages``), else Final Destination."""
    from melee_agent.cli.common import model_settings, stage_override  # noqa: PLC0415

    if asked is not None:
        return stage_override(asked)[0].split("=", 1)[1]
    return str((model_settings(policy) or {}).get("env.stage", "final_destination")) if policy else "final_destination"


def build_app(args: argparse.Namespace):  # noqa: ANN201
    """The FastAPI app ``args`` ask for (everything checked before anything is served)."""
    from melee_agent.play.app import create_play_app, create_spectate_app  # noqa: PLC0415

    if args.spectate is not None:
        from melee_agent.play.spectate import Spectator  # noqa: PLC0415

        return create_spectate_app(Spectator(args.spectate, args.cpu_level, args.seed))
    from melee_agent.play.session import PlayOptions, PlaySession, check_options  # noqa: PLC0415
    from melee_agent.rl.policies import make_policy  # noqa: PLC0415

    action_set, policy_delay, label = _policy_settings(args.policy)
    o = PlayOptions(policy=args.policy, human=args.human, cpu_level=args.cpu_level, cpu=args.cpu,
                    delay_frames=args.delay_frames, seconds=args.seconds, seed=args.seed, action_set=action_set,
                    policy_delay=policy_delay, label=label if args.policy else "", compile=args.compile,
                    stage=_stage(getattr(args, "stage", None), args.policy))
    check_options(o)
    policy = None
    if args.policy is not None:
        try:
            policy = make_policy(args.policy, action_set, seed=args.seed)
        except (ValueError, FileNotFoundError) as e:
            raise ValueError(f"--policy: {e}") from None
    session = PlaySession(o, policy, keep_rows=args.record is not None)
    return create_play_app(session, Path(args.save) if args.save else None,
                           Path(args.record) if args.record else None)


def run(args: argparse.Namespace) -> int:
    import uvicorn  # noqa: PLC0415

    from melee_agent.manager.spawn import free_port  # noqa: PLC0415

    port = args.port if args.port is not None else (SPECTATE_PORT if args.spectate else PLAY_PORT)
    port = port or free_port()
    check_listen(args.host, port)
    app = build_app(args)
    config = uvicorn.Config(app, host=args.host, port=port, log_level="warning", ws="auto")
    server = uvicorn.Server(config)
    print(f"open http://{args.host}:{port}/ in a browser (Ctrl-C stops)", flush=True)
    server.run()
    return 0
