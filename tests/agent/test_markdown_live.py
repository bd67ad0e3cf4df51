"""A reply whose Markdown is costly to render leaves the live server answering: the render runs
off daphne's event loop, within its budget, and a later load of the conversation takes it from
the cache. Before, a 200,000-character reply of ``![`` froze every request for 4-13 s, and each
load of that conversation again for seconds."""

from __future__ import annotations

import threading
import time

import httpx
import pytest

from benchmarks.markdown_render import PATHOLOGICAL
from talorys.lib.markdown import MAX_CHARS, plain_html
from tests.agent.fake_openai import text
from tests.agent.test_runner import use_fake
from tests.agent.test_sse_live import logged_in, sse_events

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres]

# (input, characters): the longest reply one step can give (TALORYS_MAX_STEP_CHARS), past
# MAX_CHARS, and the longest the renderer tries.
HOSTILE = [("![", 200_000), ("[", 200_000), ("![", MAX_CHARS), ("a\\n\\n", MAX_CHARS)]


class HealthProbe:
    """Asks /api/health over and over on a connection of its own; the slowest answer."""

    def __init__(self, url: str) -> None:
        self._client = httpx.Client(base_url=url, timeout=30)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self.times: list[float] = []
        self.statuses: set[int] = set()

    def _run(self) -> None:
        while not self._stop.is_set():
            asked = time.monotonic()
            self.statuses.add(self._client.get("/api/health").status_code)
            self.times.append(time.monotonic() - asked)
            self._stop.wait(0.05)

    def __enter__(self) -> HealthProbe:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join(60)
        self._client.close()


def test_hostile_replies_leave_health_answering_and_load_from_the_cache(
    live_server_url, fake_openai
):
    use_fake(fake_openai)
    replies = [PATHOLOGICAL[name](size) for name, size in HOSTILE]
    for reply in replies:
        fake_openai.script(text(*[reply[at : at + 5_000] for at in range(0, len(reply), 5_000)]))
    client = logged_in(live_server_url)
    client.timeout = httpx.Timeout(60)
    dones, pages, loads = [], [], []
    with HealthProbe(live_server_url) as probe:
        for _ in replies:
            with client.stream("POST", "/api/chat", json={"text": "draw"}) as response:
                dones.append([data for _, name, data in sse_events(response) if name == "done"][-1])
            loaded = time.monotonic()
            pages.append(client.get(f"/api/conversations/{dones[-1]['conversation_id']}").json())
            loads.append(time.monotonic() - loaded)
        health_times = list(probe.times)
    client.close()
    assert len(health_times) > 5 and probe.statuses == {200}
    # Bounds far under the freeze this guards (4-13 s a reply on a quiet machine, more on a busy
    # one) and far over a busy machine's healthy answer (up to 1.8 s beside the suite).
    assert max(health_times) < 3.0, f"/api/health took up to {max(health_times):.2f} s"
    assert max(loads) < 8.0, f"the conversation took up to {max(loads):.2f} s to load"
    for reply, done, page in zip(replies, dones, pages, strict=True):
        assert done["status"] == "complete"
        # Past the size or the budget: the reply is shown as it is, escaped, now and on a load.
        assert done["html"] == plain_html(reply)
        assert page["messages"][-1]["html"] == done["html"]
