"""A real local HTTP server that speaks OpenAI's streaming chat-completions and embeddings.

Tests script what it answers (``server.script(reply, ...)``, one reply per request, in order)
and read what it was sent (``server.requests``). With nothing scripted it falls back to a small
default: a ``create_task`` call when the owner asks to add a task and the tool is offered, a
short confirmation after a tool result, an echo otherwise. Another process can use that default:

    python -m tests.agent.fake_openai --port 8765   # base URL http://127.0.0.1:8765/v1

``GET /v1/models`` lists ``server.models`` (two: ``fake-model``, the one tests configure, and
``fake-model-large``), or answers ``server.models_reply`` when set; ``server.models_asked``
counts its requests. ``POST /v1/embeddings`` has its own script and record, apart from the chat's:
``server.script_embeddings(reply, ...)`` and ``server.embedding_requests`` (each JSON body) and
``server.embedding_headers``. Its default answers every input with ``bag_of_words(text)``: a
hashed bag of words of ``embedding_dimension`` (16) numbers, normalised, so texts that share
words are close. ``vectors(...)``, ``json_reply(...)``, ``error(...)``, ``Reply(delay=...)``,
``Reply(drop_after=...)``, ``Gate()`` (silent until the test opens it) and ``Forever(...)``
build scripted answers, well formed or not:

    server.script_embeddings(
        vectors([1.0, 0.0], [0.0, 1.0], order=[1, 0]),  # sent out of order, with their index
        vectors([float("nan"), 1.0]),                   # NaN, written as JSON's bare NaN
        error(429, "slow down", **{"Retry-After": "7"}),
        Reply(parts=[], delay=5),                       # no status line for 5 s
    )
    server.script(events(chunk({"content": "Hal"}), drop_after=1))  # hangs up mid-answer
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import json
import math
import re
import select
import socket
import sys
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

DONE = b"data: [DONE]\n\n"


@dataclass
class Stall:
    """Send nothing for this long (the client may give up or hang up meanwhile)."""

    seconds: float


@dataclass
class Gate:
    """Send nothing until the test opens the gate (``gate.opened.set()``): a model that goes on
    exactly when the test is ready for it, however slow the machine. Gives up (the reply stops
    there, unfinished) after ``timeout`` seconds."""

    opened: threading.Event = field(default_factory=threading.Event)
    timeout: float = 120.0


@dataclass
class Forever:
    """Send ``part`` every ``every`` seconds until the client hangs up: a server that keeps the
    stream alive (``b": keep-alive\\n\\n"``) or trickles text, and never finishes."""

    part: bytes
    every: float = 0.1


@dataclass
class Reply:
    parts: list[bytes | Stall | Gate | Forever]
    status: int = 200
    content_type: str = "text/event-stream"
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds of silence before the status line
    # Hang up after this many parts, without ending the chunked body: a server that dies
    # (or a proxy that cuts it off) in the middle of an answer.
    drop_after: int | None = None


def sse(payload: dict[str, Any] | str, *, space: bool = True, newline: str = "\n") -> bytes:
    data = payload if isinstance(payload, str) else json.dumps(payload)
    return f"data:{' ' if space else ''}{data}{newline}{newline}".encode()


def chunk(
    delta: dict[str, Any] | None = None,
    *,
    finish_reason: str | None = None,
    usage: tuple[int, int] | None = None,
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "model": "fake-model",
        "choices": [{"index": 0, "delta": delta or {}, "finish_reason": finish_reason}],
    }
    if usage is not None:
        body["usage"] = _usage(usage)
    return body


def usage_chunk(usage: tuple[int, int]) -> dict[str, Any]:
    """What ``stream_options.include_usage`` adds: usage and an empty ``choices``."""
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "choices": [],
        "usage": _usage(usage),
    }


def _usage(usage: tuple[int, int]) -> dict[str, int]:
    return {"prompt_tokens": usage[0], "completion_tokens": usage[1], "total_tokens": sum(usage)}


def events(
    *items: dict[str, Any] | bytes | Stall | Gate | Forever, done: bool = True, **reply: Any
) -> Reply:
    """A stream of chunks (dicts), raw bytes, stalls, gates and a ``Forever``, then ``[DONE]``
    unless ``done=False``."""
    parts: list[bytes | Stall | Gate | Forever] = [
        sse(item) if isinstance(item, dict) else item for item in items
    ]
    return Reply(parts=parts + ([DONE] if done else []), **reply)


def text(*pieces: str, usage: tuple[int, int] | None = (12, 5), done: bool = True) -> Reply:
    items: list[dict[str, Any]] = [chunk({"role": "assistant", "content": ""})]
    items += [chunk({"content": piece}) for piece in pieces]
    items.append(chunk(finish_reason="stop"))
    if usage is not None:
        items.append(usage_chunk(usage))
    return events(*items, done=done)


def tool_calls(
    *calls: tuple[str, str],
    split: int = 3,
    repeat: bool = False,
    legacy: bool = False,
    usage: tuple[int, int] | None = (20, 9),
) -> Reply:
    """Tool calls given as (name, arguments JSON text), each argument string split into ``split``
    deltas. ``repeat`` sends id, type and name again in every delta (as some servers do);
    ``legacy`` sends the old ``function_call`` field instead of ``tool_calls``."""
    items: list[dict[str, Any]] = []
    for index, (name, arguments) in enumerate(calls):
        call_id = f"call_{index + 1}"
        size = max(1, -(-len(arguments) // split))
        pieces = [arguments[i : i + size] for i in range(0, len(arguments), size)] or [""]
        for number, piece in enumerate(pieces):
            if legacy:
                function = {"arguments": piece} | ({"name": name} if number == 0 or repeat else {})
                items.append(chunk({"function_call": function}))
                continue
            call: dict[str, Any] = {"index": index, "function": {"arguments": piece}}
            if number == 0 or repeat:
                call |= {"id": call_id, "type": "function"}
                call["function"]["name"] = name
            items.append(chunk({"tool_calls": [call]}))
    items.append(chunk(finish_reason="function_call" if legacy else "tool_calls"))
    if usage is not None:
        items.append(usage_chunk(usage))
    return events(*items)


def error(status: int, message: str, **headers: str) -> Reply:
    body = json.dumps({"error": {"message": message, "type": "fake_error", "code": status}})
    return Reply(
        parts=[body.encode()], status=status, content_type="application/json", headers=headers
    )


def json_reply(payload: Any, status: int = 200, **headers: str) -> Reply:
    """``payload`` as a JSON body; NaN and infinities come out as JSON's bare NaN/Infinity."""
    body = json.dumps(payload).encode()
    return Reply(parts=[body], status=status, content_type="application/json", headers=headers)


def completion(content: str, **reply: Any) -> Reply:
    """A non-streamed chat completion whose message is ``content`` (JSON mode's answer)."""
    body = {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "model": "fake-model",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
    }
    return Reply(parts=[json.dumps(body).encode()], content_type="application/json", **reply)


def verdict(kind: str, memory_id: int | None = None, reason: str = "fake") -> Reply:
    """A conflict check's answer (memory/conflict.py)."""
    return completion(json.dumps({"verdict": kind, "memory_id": memory_id, "reason": reason}))


# With nothing scripted, a JSON-mode request (the conflict check) hears "unrelated".
DEFAULT_VERDICT = {"verdict": "unrelated", "memory_id": None, "reason": "fake default"}


def embeddings_payload(vectors: list[Any], model: str = "fake-embedder") -> dict[str, Any]:
    items = [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)]
    return {"object": "list", "data": items, "model": model, "usage": _embedding_usage(vectors)}


def vectors(*embedded: Any, order: list[int] | None = None, index: bool = True) -> Reply:
    """An /embeddings answer holding these embeddings (anything JSON can hold, to test a client).
    ``order`` is the positions in the order the items are sent; ``index=False`` leaves it out."""
    payload = embeddings_payload(list(embedded))
    items = payload["data"]
    if order is not None:
        items = payload["data"] = [items[position] for position in order]
    if not index:
        for item in items:
            del item["index"]
    return json_reply(payload)


def _embedding_usage(vectors: list[Any]) -> dict[str, int]:
    return {"prompt_tokens": 3 * len(vectors), "total_tokens": 3 * len(vectors)}


def bag_of_words(text: str, dimension: int = 16) -> list[float]:
    """Each word (lowercased ``\\w+``) adds one to a bucket picked by its hash; then the vector is
    scaled to length 1. The same text always gives the same vector, on any machine."""
    vector = [0.0] * dimension
    for word in re.findall(r"\w+", text.lower()) or [""]:
        digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
        vector[int.from_bytes(digest, "big") % dimension] += 1.0
    length = math.sqrt(sum(value * value for value in vector))
    return [value / length for value in vector]


def default_embedding_reply(body: dict[str, Any], dimension: int) -> Reply:
    texts = body.get("input")
    texts = [texts] if isinstance(texts, str) else texts
    if not isinstance(texts, list) or not all(isinstance(text, str) for text in texts):
        return error(400, "'input' must be a string or a list of strings")
    dimension = body.get("dimensions") or dimension
    model = str(body.get("model") or "fake-embedder")
    return json_reply(embeddings_payload([bag_of_words(t, dimension) for t in texts], model))


class FakeOpenAI:
    def __init__(
        self, host: str = "127.0.0.1", port: int = 0, *, embedding_dimension: int = 16
    ) -> None:
        self._replies: collections.deque[Reply] = collections.deque()
        self._embedding_replies: collections.deque[Reply] = collections.deque()
        # JSON-mode requests (response_format set, not streamed) have their own script, so a
        # conflict check inside a turn does not take the turn's scripted steps.
        self._json_replies: collections.deque[Reply] = collections.deque()
        self.json_requests: list[dict[str, Any]] = []
        # Other non-streamed requests (a side question in plain text, e.g. the title asked again
        # when JSON mode failed) have theirs too; the default answers no text.
        self._plain_replies: collections.deque[Reply] = collections.deque()
        self.plain_requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.embedding_dimension = embedding_dimension
        self.embedding_requests: list[dict[str, Any]] = []
        self.embedding_headers: list[dict[str, str]] = []
        # What ``GET /v1/models`` lists; ``models_reply``, when set, is answered instead (an
        # error, a malformed body). ``models_asked`` counts the requests.
        self.models = ["fake-model", "fake-model-large"]
        self.models_reply: Reply | None = None
        self.models_asked = 0
        # Set when a client hangs up before its reply was fully sent.
        self.disconnected = threading.Event()
        # TCP connections accepted: a client that keeps its connection alive makes one.
        self.connections = 0
        self._httpd = _Server((host, port), _Handler)
        self._httpd.fake = self  # type: ignore[attr-defined]
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def script(self, *replies: Reply) -> None:
        with self._lock:
            self._replies.extend(replies)

    def script_embeddings(self, *replies: Reply) -> None:
        """Answers for the next /embeddings requests, one each, in order; then the default."""
        with self._lock:
            self._embedding_replies.extend(replies)

    def script_json(self, *replies: Reply) -> None:
        """Answers for the next JSON-mode chat requests, in order; then DEFAULT_VERDICT."""
        with self._lock:
            self._json_replies.extend(replies)

    def script_plain(self, *replies: Reply) -> None:
        """Answers for the next non-streamed chat requests outside JSON mode, in order; then an
        empty message."""
        with self._lock:
            self._plain_replies.extend(replies)

    def start(self) -> FakeOpenAI:
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def _next_reply(self, body: dict[str, Any], headers: dict[str, str]) -> Reply:
        if body.get("response_format") and not body.get("stream"):
            with self._lock:
                self.json_requests.append(body)
                if self._json_replies:
                    return self._json_replies.popleft()
            return completion(json.dumps(DEFAULT_VERDICT))
        if body.get("stream") is False:
            with self._lock:
                self.plain_requests.append(body)
                return self._plain_replies.popleft() if self._plain_replies else completion("")
        with self._lock:
            self.requests.append(body)
            self.headers.append(headers)
            return self._replies.popleft() if self._replies else default_reply(body)

    def _next_embedding_reply(self, body: dict[str, Any], headers: dict[str, str]) -> Reply:
        with self._lock:
            self.embedding_requests.append(body)
            self.embedding_headers.append(headers)
            if self._embedding_replies:
                return self._embedding_replies.popleft()
            return default_embedding_reply(body, self.embedding_dimension)


def default_reply(body: dict[str, Any]) -> Reply:
    messages = body.get("messages") or [{}]
    last = messages[-1]
    if last.get("role") == "tool":
        return text("Done: ", str(last.get("content", ""))[:200])
    said = str(last.get("content") or "")
    offered = {tool["function"]["name"] for tool in body.get("tools") or []}
    wanted = re.search(r"\badd (?:a )?task(?: to)?\s+(.+)", said, re.IGNORECASE)
    if wanted and "create_task" in offered and body.get("tool_choice") != "none":
        title = wanted.group(1).strip().rstrip(".!")
        return tool_calls(("create_task", json.dumps({"title": title})))
    return text("You said: ", said)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    # A listen backlog like a real model server's: with socketserver's default of 5, tests that
    # start many turns at once (test_connection_pool.py) saw some connects reset, reported as
    # PROVIDER_UNREACHABLE (benchmarks/concurrent_turns.py hit the same).
    request_queue_size = 128

    def process_request(self, request: Any, client_address: Any) -> None:
        with self.fake._lock:  # type: ignore[attr-defined]
            self.fake.connections += 1  # type: ignore[attr-defined]
        super().process_request(request, client_address)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client hanging up on a kept-alive connection is normal here, not worth a traceback.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # chunked bodies and keep-alive, like real servers

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        fake: FakeOpenAI = self.server.fake  # type: ignore[attr-defined]
        if self.path.rstrip("/") != "/v1/models":
            self.send_error(404)
            return
        with fake._lock:
            fake.models_asked += 1
            listed = [{"id": m, "object": "model", "owned_by": "fake"} for m in fake.models]
            reply = fake.models_reply or json_reply({"object": "list", "data": listed})
        self._send(reply)

    def do_POST(self) -> None:
        fake: FakeOpenAI = self.server.fake  # type: ignore[attr-defined]
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        path = self.path.rstrip("/")
        if path.endswith("/chat/completions"):
            next_reply = fake._next_reply
        elif path.endswith("/embeddings"):
            next_reply = fake._next_embedding_reply
        else:
            self.send_error(404)
            return
        try:
            body = json.loads(raw)
        except ValueError:
            self.send_error(400)
            return
        reply = next_reply(body, dict(self.headers.items()))
        try:
            self._send(reply)
        except (BrokenPipeError, ConnectionResetError):
            fake.disconnected.set()
            self.close_connection = True

    def _send(self, reply: Reply) -> None:
        if reply.delay and self._client_left_within(reply.delay):
            raise ConnectionResetError
        self.send_response(reply.status)
        self.send_header("Content-Type", reply.content_type)
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.wfile.flush()
        for sent, part in enumerate(reply.parts):
            if sent == reply.drop_after:
                self.connection.shutdown(socket.SHUT_RDWR)
                self.close_connection = True
                return
            if isinstance(part, Stall):
                if self._client_left_within(part.seconds):
                    raise ConnectionResetError
                continue
            if isinstance(part, Gate):
                deadline = time.monotonic() + part.timeout
                while not part.opened.is_set() and time.monotonic() < deadline:
                    if self._client_left_within(0.05):
                        raise ConnectionResetError
                continue
            if isinstance(part, Forever):
                while not self._client_left_within(part.every):
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(part.part), part.part))
                    self.wfile.flush()
                raise ConnectionResetError
            self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _client_left_within(self, seconds: float) -> bool:
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            readable, _, _ = select.select([self.connection], [], [], min(left, 0.05))
            if readable:
                try:
                    if self.connection.recv(1, socket.MSG_PEEK) == b"":
                        return True
                except OSError:
                    return True
                time.sleep(min(left, 0.05))  # pipelined bytes, not a hang-up
        return False


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--embedding-dimension", type=int, default=16)
    options = parser.parse_args()
    server = FakeOpenAI(options.host, options.port, embedding_dimension=options.embedding_dimension)
    print(f"fake OpenAI server at http://{options.host}:{server.port}/v1", flush=True)
    try:
        server._httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server._httpd.server_close()


if __name__ == "__main__":
    main()
