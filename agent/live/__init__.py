"""Replies that survive: a turn runs to its end on the server, and any page attaches to it.

The transports (the chat socket, the chat API) start a turn with ``turn_run`` and follow it;
closing them only stops the following. ``attach`` is how a reloaded page, a second tab or an
SSE client with ``Last-Event-ID`` joins a conversation's running reply, in this process or,
with Redis, in another. The rooms: run.py (a turn as a task of the process), turns.py (the turns this process
runs, their event ids, buffer and followers), mirror.py (the Redis copy that other processes follow), attach.py
(where an attach is answered from), slots.py (how many attaches API tokens may hold), ready.py ("Your reply is ready" when nobody was following).
"""

from agent.live.attach import attach, attach_held, attach_open, conversation_check
from agent.live.run import turn_run
from agent.live.turns import live_turn

__all__ = [
    "attach",
    "attach_held",
    "attach_open",
    "conversation_check",
    "live_turn",
    "turn_run",
]
