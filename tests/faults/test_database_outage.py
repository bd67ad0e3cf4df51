"""PostgreSQL goes away under a live daphne, then comes back.

The daphne reaches PostgreSQL through a relay the test cuts (tests/faults/tcp_cut.py): open
connections are reset and new ones refused, as when the server stops. While it is away every
request answers 503 with the envelope and Retry-After (never a 500) and /api/health says the
database is unavailable; once it is back the same session works again with no restart and
nothing saved before is lost. The outage lasts 10 s, as long as the pool's timeout: requests
that wait for a connection through it still answer 503, and the pool's reconnect attempts
during it do not keep it from recovering after.
"""

from __future__ import annotations

import time

import httpx
import pytest
from django.db import connection

from tests.conftest import OWNER_PASSWORD
from tests.faults.postgres import database_url
from tests.faults.tcp_cut import TcpCut
from tests.waiting import wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.postgres]

OUTAGE_SECONDS = 10


@pytest.fixture
def postgres_relay(needs_postgres):
    db = connection.settings_dict
    relay = TcpCut((db["HOST"] or "127.0.0.1", int(db["PORT"] or 5432))).start()
    yield relay
    relay.stop()


@pytest.fixture(params=["pool", "no-pool"])
def live_server_env(request, postgres_relay) -> dict[str, str]:
    """The live daphne (tests/conftest.py) on the relay; with the connection pool production
    uses by default, and without it (TALORYS_DB_POOL=0)."""
    url = database_url(host="127.0.0.1", port=postgres_relay.port)
    env = {"TALORYS_TEST_DATABASE_URL": url}
    if request.param == "pool":
        # A short wait for a free connection, so a request during the outage fails in 1 s.
        env |= {"TALORYS_DB_POOL_MAX_SIZE": "4", "TALORYS_DB_POOL_TIMEOUT_SECONDS": "1"}
    return env


def signed_in(url: str) -> httpx.Client:
    client = httpx.Client(base_url=url, timeout=10)
    answer = client.post("/api/auth/login", json={"username": "owner", "password": OWNER_PASSWORD})
    assert answer.status_code == 200, answer.text
    client.headers["X-CSRFToken"] = answer.json()["csrf_token"]
    return client


def assert_unavailable(answer: httpx.Response) -> None:
    assert answer.status_code == 503, (answer.status_code, answer.text)
    assert answer.headers["content-type"].startswith("application/json")
    assert answer.json()["error"]["code"] == "SERVICE_UNAVAILABLE"
    assert answer.json()["error"]["message"]
    assert int(answer.headers["Retry-After"]) > 0


def test_requests_answer_503_while_postgres_is_away_and_recover_by_themselves(
    live_server_url, postgres_relay
):
    client = signed_in(live_server_url)
    before = client.post("/api/tasks", json={"title": "Saved before the outage"})
    assert before.status_code in (200, 201), before.text

    postgres_relay.cut()
    cut_at = time.monotonic()
    try:
        assert_unavailable(client.get("/api/tasks"))
        assert_unavailable(client.post("/api/tasks", json={"title": "During the outage"}))
        # What a monitor sees (no session: with one, the session read answers the envelope).
        health = httpx.get(f"{live_server_url}/api/health", timeout=10)
        assert health.status_code == 503
        assert health.json() == {"status": "degraded"}  # an anonymous monitor: the status only
        time.sleep(max(0.0, OUTAGE_SECONDS - (time.monotonic() - cut_at)))
    finally:
        postgres_relay.restore()

    # Back by itself: no restart, the same session (its row was in PostgreSQL all along).
    def recovered() -> bool:
        status = client.get("/api/tasks").status_code
        assert status in (200, 503), status
        return status == 200

    wait_for(recovered, "the server to recover", interval=0.2)
    answer = client.get("/api/tasks")
    titles = [task["title"] for task in answer.json()["items"]]
    assert titles == ["Saved before the outage"]  # kept, and nothing from the outage
    assert client.post("/api/tasks", json={"title": "After"}).status_code in (200, 201)
    assert client.get("/api/health").json()["database"] == "ok"
