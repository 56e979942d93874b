"""The fight engine (``Arena(game="fight")``, and the dodging game against Melee's CPU): Fox and Marth as Melee
plays them.

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
  design);
* :mod:`.frame` -- one fight frame, in that order.

The dodging game (``game="dodge"``) is a set of rules played on this engine against Melee's CPU (the same Fox,
Marth and CPU as fights); against the designed CPU it keeps its earlier frame,
:func:`melee_agent.arena.dodge.frame.game_frame`, so that earlier results replay.
"""
