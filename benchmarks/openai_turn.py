"""Time to first text through /v1/chat/completions (the OpenAI-compatible endpoint) against the
web chat's POST /api/chat, on a live daphne with the same fake model.

    .venv/bin/python benchmarks/openai_turn.py [--runs 3] [--warmup 1]
                                               [--redis-url redis://127.0.0.1:6379/11]

The stack is benchmarks/load.py's ``live_stack``: a throwaway PostgreSQL database, the owner, the
fake model server in its own process (benchmarks/_load_fake.py, no pause before any piece) and
daphne on ``--redis-url`` (flushed). The owner logs in (the web chat's session) and makes a
``write`` token (the OpenAI client's key). Then, ``--warmup`` + ``--runs`` rounds, each:

- web chat: POST /api/chat with a new message (a new conversation), timed from the send to the
  first ``text`` event, read to the end;
- /v1 new chat: POST /v1/chat/completions, ``stream: true``, one user message (a new
  conversation), timed to the first chunk with content, read to ``[DONE]``;
- web chat continued: POST /api/chat with a next message in the web chat's conversation;
- /v1 continued: the /v1 chat resent whole with a next message, as a client does (history
  matched against the conversation, only the new message added), timed the same way.

Each reply is checked against what the fake model streams. The figures are the median of the
rounds (``--runs``, three by default), in milliseconds; a failed turn exits 1.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks._load_clients import Session, login  # noqa: E402
from benchmarks._load_fake import answer_pieces  # noqa: E402
from benchmarks._results import figure  # noqa: E402
from benchmarks.load import PASSWORD, live_stack  # noqa: E402

REDIS_URL = "redis://127.0.0.1:6379/11"
PIECES = 3
QUESTION = "What did I plan for the garden this weekend?"


async def web_first_text(
    client: httpx.AsyncClient, text: str, conversation_id: int | None = None
) -> tuple[float, int]:
    """Milliseconds from POST /api/chat to its first ``text`` event, and the conversation;
    checked to the end."""
    first, name, streamed = None, "", ""
    payload = {"text": text, "conversation_id": conversation_id}
    sent = time.monotonic()
    async with client.stream("POST", "/api/chat", json=payload) as response:
        if response.status_code != 200:
            raise RuntimeError(f"POST /api/chat: {response.status_code} {await response.aread()}")
        async for line in response.aiter_lines():
            if line.startswith("event: "):
                name = line.removeprefix("event: ")
            elif line.startswith("data: "):
                data = json.loads(line.removeprefix("data: "))
                conversation_id = data.get("conversation_id") or conversation_id
                if name == "text":
                    first = first if first is not None else time.monotonic() - sent
                    streamed += data["delta"]
    if first is None or conversation_id is None or streamed != "".join(answer_pieces(text, PIECES)):
        raise RuntimeError(f"web chat {text!r}: streamed {streamed!r}")
    return first * 1000, conversation_id


async def v1_first_text(
    client: httpx.AsyncClient, token: str, messages: list[dict[str, str]]
) -> tuple[float, str]:
    """Milliseconds from POST /v1/chat/completions to its first chunk with content, and the
    content; checked against the fake model's answer, read to ``[DONE]``."""
    body = {"model": "talorys", "stream": True, "messages": messages}
    headers = {"Authorization": f"Bearer {token}"}
    first, content, finished = None, "", False
    sent = time.monotonic()
    async with client.stream("POST", "/v1/chat/completions", json=body, headers=headers) as r:
        if r.status_code != 200:
            raise RuntimeError(f"POST /v1/chat/completions: {r.status_code} {await r.aread()}")
        async for line in r.aiter_lines():
            if line == "data: [DONE]":
                finished = True
            elif line.startswith("data: {"):
                delta = json.loads(line.removeprefix("data: "))["choices"][0]["delta"]
                if delta.get("content"):
                    first = first if first is not None else time.monotonic() - sent
                    content += delta["content"]
    wanted = "".join(answer_pieces(messages[-1]["content"], PIECES))
    if first is None or not finished or content != wanted:
        raise RuntimeError(f"/v1 {messages[-1]['content']!r}: streamed {content!r}")
    return first * 1000, content


async def measure(session: Session, *, runs: int, warmup: int) -> dict[str, list[float]]:
    names = ("web chat", "/v1 new chat", "web chat continued", "/v1 continued")
    times: dict[str, list[float]] = {name: [] for name in names}
    async with session.client(connections=1) as client:
        made = await client.post("/api/auth/tokens", json={"name": "bench", "scope": "write"})
        made.raise_for_status()
        token = made.json()["token"]
        for number in range(warmup + runs):
            text = f"{QUESTION} ({number})"
            web, conversation_id = await web_first_text(client, text + " on the web")
            opening = [{"role": "user", "content": text + " from a client"}]
            new, said = await v1_first_text(client, token, opening)
            web_next, _ = await web_first_text(client, text + " and then?", conversation_id)
            chat = [*opening, {"role": "assistant", "content": said}]
            follow_up = {"role": "user", "content": text + " and then?"}
            continued, _ = await v1_first_text(client, token, [*chat, follow_up])
            if number >= warmup:
                for name, value in zip(names, (web, new, web_next, continued), strict=True):
                    times[name].append(value)
    return times


def report(times: dict[str, list[float]]) -> None:
    floors = {
        "/v1 new chat": statistics.median(times["web chat"]),
        "/v1 continued": statistics.median(times["web chat continued"]),
    }
    print("openai_turn: daphne on PostgreSQL and Redis, the fake model (no pause), new owner")
    print(f"time to first text, median of {len(times['web chat'])} (ms):")
    for name, values in times.items():
        middle = statistics.median(values)
        runs = ", ".join(f"{value:.1f}" for value in values)
        print(f"  {name:20} {middle:8.1f}   ({runs})")
        figure(
            "openai_turn",
            f"{name} time to first text (median)",
            middle,
            "ms",
            floor=floors.get(name),
            floor_name="the web chat's (POST /api/chat)" if name in floors else "",
            database="postgresql",
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="rounds counted")
    parser.add_argument("--warmup", type=int, default=1, help="rounds not counted")
    parser.add_argument("--redis-url", default=REDIS_URL, help="flushed: a database of its own")
    options = parser.parse_args()
    with live_stack(options.redis_url, pieces=PIECES, pause=0) as stack:
        session = asyncio.run(login(stack.url, PASSWORD))
        try:
            times = asyncio.run(measure(session, runs=options.runs, warmup=options.warmup))
        except RuntimeError as error:
            print(f"FAIL: {error}")
            return 1
    report(times)
    return 0


if __name__ == "__main__":
    sys.exit(main())
