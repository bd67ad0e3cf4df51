"""The load benchmark's clients (benchmarks/load.py): chat turns over /ws/chat/, API CRUD over
HTTP, the burst and its probe, and the check of what the database kept against what they saw."""

from __future__ import annotations

import asyncio
import collections
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from benchmarks._load_fake import answer_pieces
from benchmarks._websocket import Closed, Refused, WebSocket

# A turn refused with one of these (an ``error`` event, or the handshake's HTTP status) was
# refused cleanly: the server said no, in words, and kept nothing half-done.
CLEAN_CODES = {"CONFLICT", "SERVICE_UNAVAILABLE", "RATE_LIMITED", "BUDGET_EXHAUSTED"}
CLEAN_STATUSES = {409, 429, 503}
TURN_TIMEOUT = 120.0


@dataclass
class Session:
    url: str
    port: int
    cookies: dict[str, str]
    csrf_token: str

    @property
    def cookie(self) -> str:
        return "; ".join(f"{name}={value}" for name, value in self.cookies.items())

    def client(self, connections: int = 10) -> httpx.AsyncClient:
        limits = httpx.Limits(max_connections=connections, max_keepalive_connections=connections)
        return httpx.AsyncClient(
            base_url=self.url,
            cookies=self.cookies,
            headers={"X-CSRFToken": self.csrf_token, "Origin": self.url},
            timeout=60,
            limits=limits,
        )


async def login(url: str, password: str, username: str = "owner") -> Session:
    async with httpx.AsyncClient(base_url=url, headers={"Origin": url}) as client:
        response = await client.post(
            "/api/auth/login", json={"username": username, "password": password}
        )
        response.raise_for_status()
        return Session(
            url=url,
            port=httpx.URL(url).port or 80,
            cookies=dict(client.cookies),
            csrf_token=response.json()["csrf_token"],
        )


@dataclass
class Turn:
    """One turn as its client saw it. ``outcome``: complete, refused CODE, http STATUS, error
    CODE (an error after the start), dropped, timeout or the reply's other status."""

    text: str
    outcome: str = ""
    conversation_id: int | None = None
    started: bool = False  # a ``start`` event came: the owner's message was saved
    streamed: str = ""
    first_text: float | None = None  # seconds from the send to the first ``text`` event

    @property
    def clean(self) -> bool:
        """Completed, or refused in words (the burst's rule)."""
        kind, _, detail = self.outcome.partition(" ")
        if kind in ("refused", "error"):
            return detail in CLEAN_CODES
        if kind == "http":
            return int(detail) in CLEAN_STATUSES
        return self.outcome == "complete"

    @property
    def is_500(self) -> bool:
        return self.outcome in ("http 500", "error INTERNAL", "refused INTERNAL")


async def run_turn(ws: WebSocket, turn: Turn, expected: str) -> Turn:
    """Send the turn's frame and read its events until ``done`` (or a refusal before ``start``)."""
    frame: dict[str, Any] = {"type": "send", "text": turn.text}
    if turn.conversation_id is not None:
        frame["conversation_id"] = turn.conversation_id
    sent = time.monotonic()
    await ws.send_json(frame)
    failed = ""
    while True:
        event = await ws.receive_json()
        kind = event.get("type")
        if kind == "title" or (
            # A late event of this socket's previous turn (its title, said after its ``done``).
            turn.conversation_id is not None
            and event.get("conversation_id") not in (None, turn.conversation_id)
        ):
            continue
        if kind == "start":
            turn.started = True
            turn.conversation_id = event["conversation_id"]
        elif kind == "text":
            if turn.first_text is None:
                turn.first_text = time.monotonic() - sent
            turn.streamed += event["delta"]
        elif kind == "error":
            if not turn.started:
                turn.outcome = f"refused {event.get('code')}"
                return turn
            failed = f"error {event.get('code')}"
        elif kind == "done":
            status = event.get("status")
            if failed:
                turn.outcome = failed
            elif status == "complete":
                turn.outcome = "complete" if turn.streamed == expected else "garbled"
            else:
                turn.outcome = str(status)
            return turn


async def one_turn(ws: WebSocket, turn: Turn, pieces: int) -> Turn:
    expected = "".join(answer_pieces(turn.text, pieces))
    try:
        return await asyncio.wait_for(run_turn(ws, turn, expected), TURN_TIMEOUT)
    except TimeoutError:
        turn.outcome = "timeout"
    except Closed:
        turn.outcome = "dropped"
    return turn


@dataclass
class Requests:
    """HTTP requests made: latencies (seconds) and the unexpected answers."""

    latencies: list[float] = field(default_factory=list)
    statuses: collections.Counter[int] = field(default_factory=collections.Counter)
    unexpected: list[str] = field(default_factory=list)

    async def call(
        self, client: httpx.AsyncClient, method: str, path: str, expect: int, **kwargs: Any
    ) -> httpx.Response | None:
        started = time.monotonic()
        try:
            response = await client.request(method, path, **kwargs)
        except httpx.HTTPError as error:
            self.statuses[0] += 1
            self.unexpected.append(f"{method} {path}: {type(error).__name__}")
            return None
        self.latencies.append(time.monotonic() - started)
        self.statuses[response.status_code] += 1
        if response.status_code != expect:
            self.unexpected.append(f"{method} {path}: {response.status_code} {response.text[:200]}")
            return None
        return response


@dataclass
class Load:
    turns: list[Turn] = field(default_factory=list)
    crud: Requests = field(default_factory=Requests)
    socket_failures: list[str] = field(default_factory=list)

    @property
    def errors(self) -> list[str]:
        bad = [f"turn {t.text!r}: {t.outcome}" for t in self.turns if t.outcome != "complete"]
        return bad + self.crud.unexpected + self.socket_failures


async def turn_client(session: Session, number: int, until: float, pieces: int, load: Load) -> None:
    """Turns in one conversation of its own, one after another, until ``until``."""
    ws: WebSocket | None = None
    conversation_id = None
    sent = 0
    while time.monotonic() < until:
        if ws is None:
            try:
                ws = await WebSocket.connect(session.port, "/ws/chat/", session.cookie)
            except (Refused, Closed) as error:
                load.socket_failures.append(f"client {number}: {error}")
                await asyncio.sleep(0.5)
                continue
        turn = Turn(text=f"load {number}.{sent}", conversation_id=conversation_id)
        sent += 1
        load.turns.append(await one_turn(ws, turn, pieces))
        conversation_id = turn.conversation_id or conversation_id
        if turn.outcome in ("dropped", "timeout"):
            await ws.close()
            ws = None
    if ws is not None:
        await ws.close()


async def crud_client(session: Session, number: int, until: float, load: Load) -> None:
    """Tasks and notes made, listed, changed and deleted, over and over, until ``until``."""
    calls = load.crud
    async with session.client(connections=2) as client:
        round_ = 0
        while time.monotonic() < until:
            round_ += 1
            for kind, body in (
                ("tasks", {"title": f"Load task {number}.{round_}"}),
                ("notes", {"title": f"Load note {number}.{round_}", "content": "Some text."}),
            ):
                made = await calls.call(client, "POST", f"/api/{kind}", 201, json=body)
                await calls.call(client, "GET", f"/api/{kind}", 200)
                if made is None:
                    continue
                item = f"/api/{kind}/{made.json()['id']}"
                await calls.call(client, "PATCH", item, 200, json={"title": body["title"] + "!"})
                await calls.call(client, "DELETE", item, 204)


async def load_phase(
    session: Session,
    *,
    seconds: float,
    turns: int,
    crud: int,
    pieces: int,
    every: float | None = None,
    sample: Callable[[], Any] | None = None,
) -> Load:
    """``turns`` chat clients and ``crud`` API clients for ``seconds``; ``sample`` (run in a
    thread) every ``every`` seconds meanwhile."""
    load = Load()
    until = time.monotonic() + seconds
    clients = [turn_client(session, n, until, pieces, load) for n in range(turns)]
    clients += [crud_client(session, n, until, load) for n in range(crud)]

    async def sampler() -> None:
        assert sample is not None and every is not None
        while True:
            await asyncio.sleep(every)
            await asyncio.to_thread(sample)

    watcher = asyncio.create_task(sampler()) if sample is not None else None
    await asyncio.gather(*clients)
    if watcher is not None:
        watcher.cancel()
    return load


@dataclass
class Burst:
    turns: list[Turn]
    probe: Requests
    seconds: float

    @property
    def outcomes(self) -> collections.Counter[str]:
        return collections.Counter(turn.outcome for turn in self.turns)


async def burst_turn(session: Session, turn: Turn, go: asyncio.Event, pieces: int) -> Turn:
    """One turn of the burst, on a socket of its own, sent when ``go`` is set."""
    try:
        ws = await WebSocket.connect(session.port, "/ws/chat/", session.cookie)
    except Refused as error:
        turn.outcome = f"http {error.status}"
        return turn
    except (Closed, OSError):
        turn.outcome = "not connected"  # no answer to the handshake: reset, or closed unanswered
        return turn
    await go.wait()
    await one_turn(ws, turn, pieces)
    await ws.close()
    return turn


async def burst_phase(session: Session, *, count: int, pieces: int) -> Burst:
    """``count`` turns at once, each in a new conversation, while a separate client keeps
    listing tasks: every turn completes or is refused cleanly, and the list keeps answering."""
    go = asyncio.Event()
    turns = [Turn(text=f"burst {n}") for n in range(count)]
    tasks = [asyncio.create_task(burst_turn(session, turn, go, pieces)) for turn in turns]
    probe = Requests()
    await asyncio.sleep(0.5)  # the sockets are open (or refused) before the frames go
    started = time.monotonic()
    go.set()

    async def probing() -> None:
        async with session.client(connections=1) as client:
            while not all(task.done() for task in tasks):
                await probe.call(client, "GET", "/api/tasks", 200)
                await asyncio.sleep(0.2)

    await asyncio.gather(probing(), *tasks)
    return Burst(turns=turns, probe=probe, seconds=time.monotonic() - started)


def check_database(conninfo: str, turns: list[Turn], pieces: int) -> list[str]:
    """What the database kept against what the clients saw: each started turn's owner message
    once, its reply once, complete with the streamed text when the client saw it complete, and
    no conversation or message the clients never saw begin."""
    import psycopg

    with psycopg.connect(conninfo) as conn:
        rows = conn.execute(
            "SELECT conversation_id, role, status, content FROM agent_message ORDER BY id"
        ).fetchall()
    kept: dict[int, list[tuple[str, str, str]]] = collections.defaultdict(list)
    for conversation_id, role, status, content in rows:
        kept[conversation_id].append((role, status, content))
    seen: dict[int, list[Turn]] = collections.defaultdict(list)
    for turn in turns:
        if turn.started and turn.conversation_id is not None:
            seen[turn.conversation_id].append(turn)
    problems = [
        f"conversation {c}: kept, but no client saw its turn start"
        for c in kept.keys() - seen.keys()
    ]
    for conversation_id, started in seen.items():
        messages = kept.get(conversation_id, [])
        owner = [content for role, _, content in messages if role == "user"]
        replies = [(status, content) for role, status, content in messages if role == "assistant"]
        sent = [turn.text for turn in started]
        if owner != sent:
            lost = [text for text in sent if text not in owner]
            extra = [text for text, n in collections.Counter(owner).items() if n > 1]
            problems.append(
                f"conversation {conversation_id}: owner messages lost {lost}, duplicated {extra}"
            )
        if len(replies) != len(started):
            problems.append(
                f"conversation {conversation_id}: {len(started)} turns, {len(replies)} replies"
            )
            continue
        for turn, (status, content) in zip(started, replies, strict=True):
            if status == "streaming":
                problems.append(f"{turn.text!r}: reply left streaming")
            if turn.outcome == "complete" and (
                status != "complete" or content != "".join(answer_pieces(turn.text, pieces))
            ):
                problems.append(f"{turn.text!r}: streamed complete, kept {status} {content!r}")
    return problems


def percentile(values: list[float], share: float) -> float:
    if not values:
        return float("nan")
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[round(share * 100) - 1]
