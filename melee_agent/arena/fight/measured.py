"""Motion frame counts no source here gives, read off real replays (marked measured, with n).

Measured with ``/work`` replays: ``../shared/replays`` and slippi-js's 47 public test replays (issue 49),
counting, for each action, the last action frame before the player's next action (libmelee
``action_frame``). The game's own numbers are animation lengths in the characters' ``.dat`` files,
which meleedb's attribute dump does not carry.
"""

from __future__ import annotations

from melee.enums import Character

#: Per character: frames of the initial dash before it becomes a run (Fox 11, n 47; Marth 15, n 12; SmashWiki
#: "Dash" gives the same initial dash lengths); frames of a run brake before standing (Fox 18, n 4; Marth 26, n 1);
#: frames of a turn (11 both, Fox n 16, Marth n 24) and the turn's frame on which the fighter faces the other
#: way (Fox 6, n 28; Marth 8, n 36: meleedb turnDuration 4 and 6, plus 2).
MEASURED = {
    Character.FOX: dict(dash_frames=11, run_brake_frames=18, turn_frames=11, turn_flip_frame=6),
    Character.MARTH: dict(dash_frames=15, run_brake_frames=26, turn_frames=11, turn_flip_frame=8),
}
