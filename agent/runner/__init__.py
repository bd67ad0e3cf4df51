"""The chat turn, shared by both transports (WebSocket and SSE), and the scheduled run.

``begin_turn`` claims the conversation and saves the owner's message, so a refusal (bad input,
unknown conversation, CONFLICT) is an AppError raised before any event; ``stream_turn`` then
yields the turn's events (events.py), where failures become an ``error`` event and a saved error
reply. ``run_turn`` is the two in one generator. Events, in order: ``title`` (new conversation
only), ``start``, ``text`` and ``tool`` as they come, ``error`` (on failure), ``done``, and after
a conversation's first complete reply possibly a second ``title``: the model's (title.py).

The turn polls its lease about twice a second (cancel from any process, lease.py). The
transports do not iterate ``stream_turn`` themselves: agent/live runs it as a task of the
process, to its end, so a page that closes or reloads does not end the turn. A consumer that
stops iterating (``aclose()``, task cancellation: the process shutting down) ends it
``cancelled``; tool effects already done stay. ORM work runs in ``sync_to_async`` calls (db.py),
each its own short transaction at most: no transaction is ever open across a provider call.

The rooms: chat.py (the turn, start to saved reply), inputs.py (what it reads first),
messages.py (system prompt, window and running summary), model_loop.py (steps of model and
tools), lease.py, events.py, title.py (the model's title for a new conversation), and
scheduled.py (an automation's prompt, run without a conversation; its run saves one after).
"""

from agent.runner.chat import begin_turn, run_turn, stream_turn
from agent.runner.scheduled import run_scheduled_reply

__all__ = [
    "begin_turn",
    "run_scheduled_reply",
    "run_turn",
    "stream_turn",
]
