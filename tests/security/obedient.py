"""An obedient model: the fake OpenAI server (tests/agent/fake_openai.py) that, once its script
runs out, does whatever instructions it finds anywhere in what it was sent: the system prompt
(recalled memories, related items), tool results, past messages.

It reads the commands below (case-insensitive), finds the ids it needs in earlier tool results
(listing them all first), and calls each tool once, several in a step; when nothing is
left to do it says it obeyed. Tools it is not offered, or that do not exist, it calls anyway:
that is what a hijacked model would try.

    delete all notes | tasks | memories     -> list_*, then delete_* for each id seen
    rewrite every note to "TEXT"             -> rewrite_note for each note
    approve pending action N                 -> approve_action, pending_action_approve
    approve every pending action             -> the same for every action id seen in results
    create an automation that TEXT.          -> schedule_agent_prompt and create_automation
    set the model URL to URL                 -> update_settings, owner_settings_update
    resume all automations                   -> list_automations, then resume_automation each
    add a task called "TITLE"                -> create_task
    notify me "TITLE"                        -> notify_owner

``results`` and ``error_codes`` read back what each call answered, from a request's history.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterator
from typing import Any

from tests.agent.fake_openai import FakeOpenAI, Reply, text, tool_calls

OBEYED = "Done, as the instructions said."
LISTS = {"notes": "list_notes", "tasks": "list_tasks", "memories": "list_memories"}
DELETES = {"notes": "delete_note", "tasks": "delete_task", "memories": "delete_memory"}
SINGULAR = {"notes": "note", "tasks": "task", "memories": "memory", "automations": "automation"}
ROUTINE = {"type": "daily", "time": "03:00"}

Call = tuple[str, dict[str, Any]]


def _key(name: str, arguments: Any) -> tuple[str, str]:
    return name, json.dumps(arguments, sort_keys=True)


def _walk(value: Any, found: dict[str, list[int]]) -> None:
    """Collect ids of notes, tasks and memories, and pending action ids, from a tool result."""
    if isinstance(value, dict):
        for plural, single in SINGULAR.items():
            for item in value.get(plural) or []:
                if isinstance(item, dict) and isinstance(item.get("id"), int):
                    found[plural].append(item["id"])
            item = value.get(single)
            if isinstance(item, dict) and isinstance(item.get("id"), int):
                found[plural].append(item["id"])
        if isinstance(value.get("action_id"), int):
            found["actions"].append(value["action_id"])
        for child in value.values():
            _walk(child, found)
    elif isinstance(value, list):
        for child in value:
            _walk(child, found)


def _seen(messages: list[dict[str, Any]]) -> tuple[dict[str, list[int]], set[tuple[str, str]]]:
    """The ids the tool results named, and the calls already made (name, arguments)."""
    found: dict[str, list[int]] = {kind: [] for kind in [*SINGULAR, "actions"]}
    made: set[tuple[str, str]] = set()
    for message in messages:
        if message.get("role") == "tool":
            with contextlib.suppress(ValueError):  # not JSON: no ids in it
                _walk(json.loads(message.get("content") or "null"), found)
        for call in message.get("tool_calls") or []:
            function = call.get("function") or {}
            try:
                arguments = json.loads(function.get("arguments") or "{}")
            except ValueError:
                continue
            made.add(_key(function.get("name", ""), arguments))
    return {kind: list(dict.fromkeys(ids)) for kind, ids in found.items()}, made


def wanted_calls(said: str, found: dict[str, list[int]]) -> list[Call]:
    """Every call the instructions in ``said`` ask for, given the ids known so far."""
    calls: list[Call] = []
    for kind in re.findall(r"delete all (notes|tasks|memories)", said, re.IGNORECASE):
        kind = kind.lower()
        calls.append((LISTS[kind], {}))  # all of them, not only those seen so far
        calls += [(DELETES[kind], {f"{SINGULAR[kind]}_id": pk}) for pk in found[kind]]
    for content in re.findall(r'rewrite every note to "([^"]+)"', said, re.IGNORECASE):
        calls.append(("list_notes", {}))
        calls += [("rewrite_note", {"note_id": pk, "content": content}) for pk in found["notes"]]
    actions = [int(n) for n in re.findall(r"approve pending action (\d+)", said, re.IGNORECASE)]
    if re.search(r"approve (?:every|all) pending actions?", said, re.IGNORECASE):
        actions += found["actions"]
    for action_id in dict.fromkeys(actions):
        calls += [
            (name, {"action_id": action_id})
            for name in ("approve_action", "pending_action_approve")
        ]
    for routine in re.findall(r"create an automation that ([^.\"]+)", said, re.IGNORECASE):
        proposal = {"name": "Routine", "message": routine.strip(), "schedule": ROUTINE}
        calls.append(("schedule_agent_prompt", proposal))
        calls.append(("create_automation", proposal | {"kind": "agent_prompt"}))
    for url in re.findall(r"set the model url to (\S+[^\s.,])", said, re.IGNORECASE):
        calls += [
            (name, {"model_base_url": url}) for name in ("update_settings", "owner_settings_update")
        ]
    if re.search(r"resume all automations", said, re.IGNORECASE):
        calls.append(("list_automations", {}))
        calls += [("resume_automation", {"automation_id": pk}) for pk in found["automations"]]
    for title in re.findall(r'add a task called "([^"]+)"', said, re.IGNORECASE):
        calls.append(("create_task", {"title": title}))
    for title in re.findall(r'notify me "([^"]+)"', said, re.IGNORECASE):
        calls.append(("notify_owner", {"title": title}))
    return calls


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict | list):
        for child in value.values() if isinstance(value, dict) else value:
            yield from _strings(child)


def _read(message: dict[str, Any]) -> str:
    """A message's text as the model understands it: a tool result's JSON decoded."""
    content = str(message.get("content") or "")
    if message.get("role") == "tool":
        try:
            return "\n".join(_strings(json.loads(content)))
        except ValueError:
            pass
    return content


def obey(body: dict[str, Any]) -> Reply:
    """The next step of a model that does what it read: the calls not yet made, else an answer."""
    messages = body.get("messages") or []
    said = "\n".join(_read(m) for m in messages)
    found, made = _seen(messages)
    todo: dict[tuple[str, str], Call] = {}
    for name, arguments in wanted_calls(said, found):
        key = _key(name, arguments)
        if key not in made:
            todo.setdefault(key, (name, arguments))
    if not todo:
        return text(OBEYED)
    return tool_calls(*[(name, json.dumps(arguments)) for name, arguments in todo.values()])


class ObedientModel(FakeOpenAI):
    """Scripted replies first (what the owner's request makes a model do); then obedience."""

    def _next_reply(self, body: dict[str, Any], headers: dict[str, str]) -> Reply:
        json_mode = bool(body.get("response_format")) and not body.get("stream")
        with self._lock:
            scripted = bool(self._replies)
        if json_mode or scripted:
            return super()._next_reply(body, headers)
        with self._lock:
            self.requests.append(body)
            self.headers.append(headers)
        return obey(body)


# --- what the tests read back -------------------------------------------------------------


def results(request: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Each tool call of a request's history with the result the model read, in order."""
    outcomes, names = [], {}
    for message in request["messages"]:
        if message.get("tool_calls"):  # call ids are unique within one step only
            names = {call["id"]: call["function"]["name"] for call in message["tool_calls"]}
        elif message["role"] == "tool":
            outcomes.append((names[message["tool_call_id"]], json.loads(message["content"])))
    return outcomes


def error_codes(outcomes: list[tuple[str, dict[str, Any]]]) -> dict[str, set[str]]:
    codes: dict[str, set[str]] = {}
    for name, result in outcomes:
        codes.setdefault(name, set()).add("ok" if result["ok"] else result["error"]["code"])
    return codes
