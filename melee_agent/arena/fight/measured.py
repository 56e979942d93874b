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
#: a few numbers per character, by what the fighter is doing, are a simplification: ``ecb_air`` for falls, jumps and
#: the rest, ``ecb_double_jump`` in a double jump (the legs tucked higher), ``ecb_air_dodge`` in an air dodge.
#: Measured on landings (an airborne frame, more than 11 frames after leaving the ground, out of hitstun, followed by
#: LANDING or LANDING_SPECIAL on the main floor or a platform) as the value that most of them bracket: the last airborne
#: position lies below the surface by less than it, and the next frame's, moved by the last frame's change with gravity
#: (an air dodge's speed by its decay 0.9), by at least it. Read off ../shared/replays and slippi-js's test replays
#: except ``teams_time_p3_redVSp1p2_blueVSp4_green_winner_blue.slp``, the Battlefield game kept out to check the
#: figures on (docs/motion.md): Fox 4.4 (79 of 84 landings; 4.4 only), a double jump 6.55 (13 of 20; 6.4-6.7), an air
#: dodge 4.85 (12 of 17; 4.8-4.9); Marth 3.85 (25 of 29; 3.8-3.9), a double jump 4.75 (3 of 3; 4.2-5.3), an air dodge
#: 6.35 (4 of 7; 6.0-6.7). Marth's last two rest on few landings. The one number before (Fox 4.0, Marth 4.2) was read
#: off flat-ground landings of two replays only.
MEASURED = {
    Character.FOX: dict(dash_run_frame=11, dash_frames=21, run_brake_frames=18, turn_frames=11, turn_flip_frame=6,
                        squat_frames=7, squat_rv_frames=10, landing_frames=27, squat_dodge_share=1.0, ecb_air=4.4,
                        ecb_double_jump=6.55, ecb_air_dodge=4.85),
    Character.MARTH: dict(dash_run_frame=15, dash_frames=27, run_brake_frames=26, turn_frames=11, turn_flip_frame=8,
                          squat_frames=7, squat_rv_frames=8, landing_frames=30, squat_dodge_share=0.5, ecb_air=3.85,
                          ecb_double_jump=4.75, ecb_air_dodge=6.35),
}
