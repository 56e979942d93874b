"""Motion frame counts no source here gives, read off real replays (marked measured, with n).

Measured with ``/work`` replays: ``../shared/replays`` and slippi-js's 47 public test replays (issue 49),
counting, for each action, the last action frame before the player's next action (libmelee
``action_frame``). The game's own numbers are animation lengths in the characters' ``.dat`` files,
which meleedb's attribute dump does not carry.
"""

from __future__ import annotations

from melee.enums import Character

#: Per character: the dash's last frame before it may become a run, the stick held forward (Fox 11, n 49; Marth 15,
#: n 12; SmashWiki's initial dash lengths are the same); the dash's length, after which it stands (Fox 21, n 6; Marth
#: 27, n 4); frames of a run brake before standing (Fox 18, n 4; Marth 26, n 1);
#: frames of a turn (11 both, Fox n 16, Marth n 24) and the turn's frame on which the fighter faces the other
#: way (Fox 6, n 28; Marth 8, n 36: meleedb turnDuration 4 and 6, plus 2).
#: Crouching: the squat's (CROUCH_START) frames before the wait (7 both, Fox n 11, Marth n 8) and the rise's
#: (CROUCH_END) before standing (Fox 10, n 5; Marth 8, n 3). A normal landing's whole animation, past its lag, when
#: nothing interrupts it (Marth 30, n 4; Fox: never seen to end, its longest 27 (n 1), used as a lower bound).
#: A wavedash straight out of the jump squat (an air dodge down on the jump's first airborne frame, landing on it): the
#: share of the dodge's horizontal speed that moves the fighter on that landing frame (Fox 1.0, n 36; Marth 0.5, n 22,
#: every one exact to 0.001 whatever the stick's angle). The mechanism is not in the sources here (likely the
#: environment collision of the jump's first frame, whose body box differs per character); from the next frame the
#: slide moves by the whole speed, as any wavedash's.
#: The collision box's bottom above the fighter's position in the air (once its lock after leaving the ground is over):
#: the game's follows the animation (doldecomp/melee ``mpColl_LoadECB_JObj``: the lowest of six bones, at least 0), so
#: this one number per character is a simplification. Measured as the value that most landings on flat ground bracket
#: (the last airborne position lies below the surface by less than it, the next frame's by at least it) in
#: ``pyslippi_game.slp`` and ``libmelee_test_game_1.slp``: Fox 4.0 (17 of 21 landings out of a jump, a fall, a drop or
#: an air dodge; double jumps land higher, about 6), Marth 4.2 (15 of 21, aerials included).
MEASURED = {
    Character.FOX: dict(dash_run_frame=11, dash_frames=21, run_brake_frames=18, turn_frames=11, turn_flip_frame=6,
                        squat_frames=7, squat_rv_frames=10, landing_frames=27, squat_dodge_share=1.0, ecb_air=4.0),
    Character.MARTH: dict(dash_run_frame=15, dash_frames=27, run_brake_frames=26, turn_frames=11, turn_flip_frame=8,
                          squat_frames=7, squat_rv_frames=8, landing_frames=30, squat_dodge_share=0.5, ecb_air=4.2),
}
