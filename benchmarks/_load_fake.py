"""The load benchmark's model server: tests/agent/fake_openai.py, answering every streamed chat
request with a short reply that names the owner's message, one piece at a time with a pause
before each, so that many turns are in flight at once. Run in its own process, so that its
threads never compete with the load's clients for one interpreter:

    .venv/bin/python benchmarks/_load_fake.py --port 8765 [--pieces 5] [--pause 0.05]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.agent.fake_openai import FakeOpenAI, Reply, Stall, chunk, events, usage_chunk  # noqa: E402


def answer_pieces(said: str, pieces: int) -> list[str]:
    """What the model streams for the owner's message ``said``: the client and the database
    check compare each saved reply with their join."""
    return [f"Answer to {said}:"] + [f" part{n}" for n in range(1, pieces)]


def last_owner_text(body: dict[str, Any]) -> str:
    for message in reversed(body.get("messages") or []):
        if message.get("role") == "user":
            return str(message.get("content") or "")
    return ""


class LoadModel(FakeOpenAI):
    def __init__(self, port: int, *, pieces: int, pause: float) -> None:
        super().__init__(port=port)
        self.pieces = pieces
        self.pause = pause
        # Every turn of the load connects at once; a real model server's backlog is long.
        self._httpd.socket.listen(1024)

    def _next_reply(self, body: dict[str, Any], headers: dict[str, str]) -> Reply:
        if body.get("response_format") and not body.get("stream"):
            return super()._next_reply(body, headers)  # a title or a conflict check: the default
        items: list[dict[str, Any] | Stall] = [chunk({"role": "assistant", "content": ""})]
        for piece in answer_pieces(last_owner_text(body), self.pieces):
            items += [Stall(self.pause), chunk({"content": piece})]
        items += [chunk(finish_reason="stop"), usage_chunk((20, self.pieces))]
        return events(*items)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--pieces", type=int, default=5)
    parser.add_argument("--pause", type=float, default=0.05, help="seconds before each piece")
    options = parser.parse_args()
    server = LoadModel(options.port, pieces=options.pieces, pause=options.pause)
    print(f"load model at {server.base_url}", flush=True)
    try:
        server._httpd.serve_forever(poll_interval=0.05)
    except KeyboardInterrupt:
        pass
    finally:
        server._httpd.server_close()


if __name__ == "__main__":
    main()
