"""The fight mechanics (``Arena(game="fight")``): Fox and Marth in whole games of Melee.

One controller-driven state machine plays both fighters on ``[B, 2]`` tensors: Fox reads the
agent's controller state, Marth reads the one his CPU (:mod:`melee_agent.arena.cpu`) writes each frame.

* :mod:`.moves` -- the move table (every timed action of both characters, per frame and hitbox
  slot) built from ``arena/gamedata`` and libmelee's ``framedata.csv``;
* :mod:`.state` -- what a fight keeps beyond the dodging game's fields (hitlag, pending launch,
  stale-move queues, grabs, ledge, button edges, the CPU's plan);
* :mod:`.fighter` -- controller -> actions (attacks, specials, jumps, shield, dodges, grabs, ledge);
* :mod:`.physics` -- movement, gravity, launch speed and its decay, landing lag and L-cancel,
  walls, ledge catching;
* :mod:`.hits` -- hitboxes against hurtboxes, knockback, hitlag, hitstun, DI, shields, grabs,
  pummels and throws;
* :mod:`melee_agent.arena.cpu` -- the CPUs that play Marth (``melee``: the game's own; ``designed``: the earlier
  design); ``marth_cpu`` and ``melee_cpu`` here re-export them;
* :mod:`.frame` -- one fight frame, in that order.

The dodging game (``game="dodge"``) does not use any of this: its frame is
:func:`melee_agent.arena.dodge.frame.game_frame`, unchanged.
"""
