"""`melee-agent play`: a person plays the arena in the browser, or watches a running training's newest model.

The game runs server-side, in the arena, one frame every 1/60 s (the fight frame training plays);
the page draws each frame in a canvas and sends the keyboard or a gamepad as raw controller
frames (:class:`~melee_agent.arena.fight.pads.Pads`) over a WebSocket (docs/play.md).

* :mod:`.human` -- a browser's controller frame (JSON) checked and turned into ``Pads`` values;
* :mod:`.frames` -- one frame of a game with a person on one port (the CPU, or both ports' pads);
* :mod:`.opponent` -- a policy playing the other port from its own view, macro by macro;
* :mod:`.session` -- one person's games: delay, frames, the result, a rematch, what is kept;
* :mod:`.view` -- a frame as the JSON the page draws (the same geometry as ``watch``);
* :mod:`.replay_file` -- a game's frames saved, for ``watch --replay`` to draw;
* :mod:`.record` -- the person's games as experience rows (``--record``);
* :mod:`.clock` -- the 60 frames/s loop that plays a session and hands frames to the page;
* :mod:`.spectate` -- the newest published model of a run against the CPU, and its checks' curve;
* :mod:`.app` -- the FastAPI app: the pages, the WebSocket, the small JSON endpoints.
"""
