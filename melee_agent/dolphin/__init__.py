"""Real Melee: Slippi Dolphin through libmelee, split by job.

- :mod:`.launch`: the paths checked, the build's launch options, a free spectator port;
- :mod:`.iso`: the disc header read: Melee NTSC 1.02 or one line saying what the disc is;
- :mod:`.display`: a private Xvfb for a build that needs a display;
- :mod:`.session`: one Dolphin process with its console and controllers, started or cleaned up whole;
- :mod:`.scenes`: Melee's scenes, and a libmelee console that keeps the one it last read;
- :mod:`.quit`: quitting a game with the wrong setup (L+R+A held, START tapped);
- :mod:`.supervisor`: keeping it in a game (menus, setup check, sudden death, watchdog, restarts);
- :mod:`.env`: :class:`DolphinEnv`, the arena's environment API on top.

The reward and episode rules are :class:`melee_agent.envs.rewards.GameStateRules`, the arena's.
"""

from melee_agent.dolphin.env import DolphinEnv
from melee_agent.dolphin.errors import DolphinError
from melee_agent.dolphin.launch import LaunchOptions, check_paths, free_udp_port, launch_options
from melee_agent.dolphin.session import Session, StartFailed, replay_session, start_dolphin
from melee_agent.dolphin.supervisor import RestartLimiter, Supervisor, Watchdog

__all__ = ["DolphinEnv", "DolphinError", "LaunchOptions", "RestartLimiter", "Session", "StartFailed", "Supervisor",
           "Watchdog", "check_paths", "free_udp_port", "launch_options", "replay_session", "start_dolphin"]
