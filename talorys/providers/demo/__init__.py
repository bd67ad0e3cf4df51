"""The demo provider: no model server, deterministic, and labelled as demo.

It understands a few plain requests and acts on them the way a model would, by calling the
registered tools (the runner and executor run them for real), then answers from the tool
results. Everything else gets a short note saying what it understands. Each step reads only
``messages``: the owner's last message says what to do, and the tool messages after it say what
has been done so far in this turn.

Which module understands what:
- provider.py: DemoProvider, the dispatcher: each step to the module for its request;
- parse.py: which request the owner's message is, and the help for anything else;
- turn.py: reading the turn (the tool calls made so far and what each returned);
- events.py: answering with a tool call, or with text streamed in deltas;
- facts.py: a fact the owner tells, filed in one wording per subject, and the answer once stored;
- workspace.py: tasks and notes (create, list, find, complete and delete) and the answers;
- choosing.py: which task the owner named, among those a search found (none, one or several);
- reminders.py: a reminder at a time, and the answer once it is set;
- times.py: the owner's clock, the time a reminder is due, and how the answer says it;
- verdicts.py: memory conflict verdicts (memory/conflict.py asks it, not the chat);
- titles.py: a new conversation's short title (agent/services.py asks it, not the chat).
"""

from talorys.providers.demo.provider import DemoProvider

__all__ = ["DemoProvider"]
