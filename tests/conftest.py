"""Shared fixtures: the owner, an API client that behaves like the browser, and service gates."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import time_machine
from asgiref.sync import async_to_sync
from channels.testing import WebsocketCommunicator
from django.core.cache import cache
from django.db import connection, connections
from django.test import AsyncClient, Client

from config.celery import app as celery_app
from tests.forked_daphne import Forked, Parent
from tests.services import chromium_path, redis_url, require_services
from tests.waiting import HANG_SECONDS, wait_for

# channels' test communicator gives a socket's handshake 1 s by default: a loaded two-core machine
# took longer (a full run failed on it). Every test's handshake may take up to HANG_SECONDS.
WebsocketCommunicator.connect.__defaults__ = (HANG_SECONDS,)

OWNER_PASSWORD = "correct horse battery staple"

# The push service, a browser's push keys and the channels' receivers (automations, approvals and
# the API's tests use them as well as tests/notifications); how transactional tests empty tables.
pytest_plugins = ["tests.notifications.servers", "tests.database"]


def _missing(what: str) -> None:
    message = f"{what} is not available"
    if require_services():
        pytest.fail(f"{message}, and TALORYS_REQUIRE_SERVICES=1")
    pytest.skip(f"{message}; set it up or run .ci/run")


# --- lanes: `make test` runs the whole suite; `make test-fast` leaves out the slow lanes ---------

# A test is in a slow lane when it drives a browser, fuzzes the API, injects faults into real
# servers, or runs the product (daphne, a Celery worker, manage.py) in a subprocess. The folder
# or the fixture says so; a test that starts a process by itself carries
# @pytest.mark.subprocess.
SLOW_LANES = ("browser", "fuzz", "faults", "subprocess")
_LANE_FOLDERS = {"browser": "browser", "faults": "faults", "load": "subprocess"}
_LANE_FIXTURES = {
    "chromium": "browser",
    "live_server_url": "subprocess",
    "live_servers": "subprocess",
}
_LANE_FILES = {"test_api_fuzz.py": "fuzz"}


def _lanes(item: pytest.Item) -> set[str]:
    path = Path(str(item.fspath)).relative_to(ROOT / "tests")
    lanes = {_LANE_FOLDERS[path.parts[0]]} if path.parts[0] in _LANE_FOLDERS else set()
    lanes |= {_LANE_FILES[path.name]} if path.name in _LANE_FILES else set()
    names = set(getattr(item, "fixturenames", ()))
    return lanes | {lane for fixture, lane in _LANE_FIXTURES.items() if fixture in names}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        for lane in _lanes(item):
            item.add_marker(lane)


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup, django_db_blocker):
    """pytest-django's, and before it drops the test database: end the connections that a
    process a test started (a daphne, a Celery worker) may still hold on it while it exits. The
    drop failed on them ("being accessed by other users") and left the database behind."""
    yield
    if connection.vendor != "postgresql":
        return
    try:
        with django_db_blocker.unblock(), connection.cursor() as cursor:
            # A terminated backend is listed until it has exited: wait for that (5 s at most).
            for _ in range(50):
                cursor.execute(
                    "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                    " WHERE datname = current_database() AND pid <> pg_backend_pid()"
                )
                if cursor.fetchone()[0] == 0:
                    break
                time.sleep(0.1)
    except Exception as error:  # the drop then says what is wrong
        print(f"Could not end the test database's other connections: {error}")


@pytest.fixture
def eager() -> Iterator[None]:
    """Celery runs a task inline when it is sent (a real task call, no broker)."""
    saved = celery_app.conf.task_always_eager, celery_app.conf.task_eager_propagates
    celery_app.conf.task_always_eager = True
    celery_app.conf.task_eager_propagates = True
    yield
    celery_app.conf.task_always_eager, celery_app.conf.task_eager_propagates = saved


@pytest.fixture
def clock(request):
    """Time frozen at the test module's NOW (time_machine's traveller, to move it on)."""
    with time_machine.travel(request.module.NOW, tick=False) as traveller:
        yield traveller


@pytest.fixture(autouse=True)
def _fresh_cache():
    cache.clear()
    yield
    cache.clear()


@pytest.fixture(autouse=True)
def _usable_connections():
    """After a test, a connection of this process that its database ended is closed, so the next
    test connects again: a test that ends the other connections to its database (a PostgreSQL
    restart, tests/faults/test_turn_crash.py ``backends_end``) can end this process's own too,
    and every later test of the worker would fail on it."""
    yield
    for conn in connections.all(initialized_only=True):
        if conn.connection is not None and not conn.in_atomic_block and not conn.is_usable():
            conn.close()


@pytest.fixture
def owner(db, django_user_model):
    return django_user_model.objects.create_superuser(username="owner", password=OWNER_PASSWORD)


class ApiClient:
    """Talks JSON to /api/ the way the browser does: session cookie plus X-CSRFToken."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.csrf_token = ""

    def login(self, username: str = "owner", password: str = OWNER_PASSWORD) -> Any:
        response = self.post("/api/auth/login", {"username": username, "password": password})
        if response.status_code == 200:
            self.csrf_token = response.json()["csrf_token"]
        return response

    def _headers(self, extra: dict[str, str] | None) -> dict[str, str]:
        headers = {"X-CSRFToken": self.csrf_token} if self.csrf_token else {}
        return headers | (extra or {})

    def get(self, path: str, params: dict | None = None, headers: dict | None = None) -> Any:
        return self.client.get(path, params or {}, headers=self._headers(headers))

    def _send(self, method: str, path: str, body: Any, headers: dict | None) -> Any:
        data = json.dumps(body) if body is not None else ""
        return getattr(self.client, method)(
            path, data=data, content_type="application/json", headers=self._headers(headers)
        )

    def post(self, path: str, body: Any = None, headers: dict | None = None) -> Any:
        return self._send("post", path, body, headers)

    def patch(self, path: str, body: Any = None, headers: dict | None = None) -> Any:
        return self._send("patch", path, body, headers)

    def put(self, path: str, body: Any = None, headers: dict | None = None) -> Any:
        return self._send("put", path, body, headers)

    def delete(self, path: str, headers: dict | None = None) -> Any:
        return self._send("delete", path, None, headers)

    def stream(self, path: str, body: Any = None, headers: dict | None = None) -> Any:
        """POST, and read a streamed (SSE) answer to its end, in one event loop: the answer
        follows a turn that runs as a task of the loop that served the request (agent/live), so
        that loop must outlive the request. The body read is ``response.streamed``."""

        async def post_and_read() -> Any:
            client = AsyncClient(enforce_csrf_checks=True)
            client.cookies = self.client.cookies
            response = await client.post(
                path,
                data=json.dumps(body) if body is not None else "",
                content_type="application/json",
                headers=self._headers(headers),
            )
            if response.streaming:
                response.streamed = b"".join([part async for part in response.streaming_content])
            return response

        return async_to_sync(post_and_read)()


@pytest.fixture
def anon_api(db) -> ApiClient:
    return ApiClient(Client(enforce_csrf_checks=True))


@pytest.fixture
def api(owner) -> ApiClient:
    client = ApiClient(Client(enforce_csrf_checks=True))
    assert client.login().status_code == 200
    return client


@pytest.fixture
def needs_postgres(db):
    if connection.vendor != "postgresql":
        _missing("PostgreSQL")


@pytest.fixture
def redis_url_for_tests() -> str:
    url = redis_url()
    if not url:
        _missing("Redis at 127.0.0.1:6379")
    import redis

    redis.Redis.from_url(url).flushdb()
    return url


@pytest.fixture(scope="session")
def chromium() -> str:
    path = chromium_path()
    if not path:
        _missing("Chromium (apt-get install chromium)")
    return path


@pytest.fixture
def fake_openai():
    """A started OpenAI-compatible server on 127.0.0.1 (tests/agent/fake_openai.py):
    ``.base_url`` (…/v1), ``.script(...)``, ``.requests`` (every JSON body received), ``.headers``."""
    from tests.agent.fake_openai import FakeOpenAI

    server = FakeOpenAI().start()
    yield server
    server.stop()


# --- a transactional test's tables are emptied after its turns' trips have ended ----------------

# A trip outlives the test only by what it was doing when the test returned: a pass over the index.
TRIPS_SETTLE_SECONDS = 10.0


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """Before the teardown (a transactional test's flush among it): wait a while for the turn
    trips still running on their threads (agent/runner/db.py). A test that returns as soon as it
    has the events it wants leaves its turn's last trip, the index pass after the reply, running;
    the flush's TRUNCATE and that pass's writes deadlocked once. Bounded: a trip a test left
    blocked on purpose only delays its teardown."""
    marker = item.get_closest_marker("django_db")
    if marker is not None and marker.kwargs.get("transaction"):
        from agent.runner.db import trips_in_flight

        deadline = time.monotonic() + TRIPS_SETTLE_SECONDS
        while trips_in_flight() and time.monotonic() < deadline:
            time.sleep(0.02)
    yield


# --- a live daphne process on the test database (WebSocket and SSE need a real ASGI server) ----

ROOT = Path(__file__).resolve().parents[1]


def _database_url() -> str:
    db = connection.settings_dict
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    return f"postgres://{db['USER']}{password}@{db['HOST']}:{db['PORT'] or 5432}/{db['NAME']}"


def _answers(url: str) -> bool:
    """Whether the server answers a page. Not /api/health, which asks every part (the
    embedder, the broker, the layer): 0.3 s of a forked daphne's first answer where the login
    page takes 0.05 s."""
    try:
        return httpx.get(f"{url}/login/", timeout=5).status_code < 500
    except httpx.TransportError:
        return False


@pytest.fixture
def signed_in(client, owner):
    """Django's test client with the owner's session (the page tests' start; tests/browser has
    its own, a browser signed in)."""
    client.force_login(owner)
    return client


@pytest.fixture
def live_server_env() -> dict[str, str]:
    """More environment for the live daphne; a test module overrides it (tests/browser)."""
    return {}


@dataclass(frozen=True)
class LiveServer:
    """A daphne serving the test database: its address, its output, and its access log (one
    line per request it answered, the client's address first)."""

    url: str
    log: Path
    access_log: Path
    pid: int = 0


@contextmanager
def live_server(
    env: dict[str, str], folder: Path, name: str, *, parent: Parent | None = None
) -> Iterator[LiveServer]:
    """Run ``config.asgi`` in daphne on a free port of 127.0.0.1 until the block ends; its
    output and access log go to ``folder``/``name``.log and ``name``-access.log.

    The socket is bound here and handed to daphne (``--fd``), as talorys_run does: a port
    chosen free and bound later by daphne could be taken in between (by another xdist
    worker's server, or a client's ephemeral port), and daphne would fail to start."""
    with socket.create_server(("127.0.0.1", 0)) as listening:
        port = listening.getsockname()[1]
        server = LiveServer(
            f"http://127.0.0.1:{port}", folder / f"{name}.log", folder / f"{name}-access.log"
        )
        log = server.log.open("w")
        daphne: subprocess.Popen | Forked
        if parent is not None:
            daphne = parent.fork(listening.fileno(), server.log, server.access_log)
        else:
            daphne = subprocess.Popen(
                [
                    str(Path(sys.executable).with_name("daphne")),
                    "--fd",
                    str(listening.fileno()),
                    "--access-log",
                    str(server.access_log),
                    "config.asgi:application",
                ],
                cwd=ROOT,
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                pass_fds=[listening.fileno()],
            )
    try:
        wait_for(lambda: _answers(server.url), "daphne to start", alive=daphne, log=server.log)
        yield LiveServer(server.url, server.log, server.access_log, daphne.pid)
    finally:
        daphne_stop(daphne, port)
        log.close()


# From the moment a stopping daphne closes its port to its exit, at most (unless it is stuck).
EXIT_SECONDS = 5.0


def listens(port: int) -> bool:
    """Whether a socket listens on 127.0.0.1:``port``, from Linux's /proc/net/tcp, which asks
    nothing of the server (a connection would: daphne's shutdown counts it); True elsewhere."""
    try:
        table = Path("/proc/net/tcp").read_text()
    except OSError:
        return True
    local = f"0100007F:{port:04X}"
    rows = (line.split() for line in table.splitlines()[1:])
    return any(row[1] == local and row[3] == "0A" for row in rows)  # 0A: LISTEN


def daphne_stop(daphne: subprocess.Popen | Forked, port: int) -> None:
    """SIGTERM, and wait for the exit: seconds, on a loaded machine. SIGKILL after HANG_SECONDS,
    or EXIT_SECONDS after it closed its port: its shutdown is over by then, but a request whose
    client left (Django drops it, its thread goes on) can leave that thread waiting forever on the
    stopped event loop (a sync middleware's async_to_sync), and Python's exit waits for it
    (tests/faults/test_daphne_stop.py)."""
    daphne.terminate()
    deadline = time.monotonic() + HANG_SECONDS
    closed = 0.0
    while daphne.poll() is None and time.monotonic() < deadline:
        if not closed and not listens(port):
            closed = time.monotonic()
        if closed and time.monotonic() - closed > EXIT_SECONDS:
            break
        time.sleep(0.1)
    if daphne.poll() is None:
        daphne.kill()
        daphne.wait()


def _live_env(data_dir: Path, extra: dict[str, str]) -> dict[str, str]:
    return (
        os.environ
        | {
            "DJANGO_SETTINGS_MODULE": "tests.settings",
            "TALORYS_TEST_DATABASE_URL": _database_url(),
            "TALORYS_DATA_DIR": str(data_dir),
        }
        | extra
    )


# Named in a module's live_server_env: its daphne is not forked but started the usual way, with
# the test's tmp_path as its data dir (a forked one has its parent's), for a process the test
# starts to share.
OWN_DATA_DIR = "TALORYS_TEST_OWN_DATA_DIR"


@pytest.fixture(scope="session")
def daphne_parent(tmp_path_factory) -> Iterator[Callable[[dict[str, str]], Parent | None]]:
    """This worker's forking parents for live servers (tests/forked_daphne.py): one for each
    environment the tests ask for, started by the first test that asks for it; None for a test
    whose server has its own data dir (OWN_DATA_DIR)."""
    started: dict[tuple[tuple[str, str], ...], Parent] = {}

    def get(extra: dict[str, str]) -> Parent | None:
        key = tuple(sorted(extra.items()))
        if OWN_DATA_DIR not in extra and key not in started:
            folder = tmp_path_factory.mktemp("daphne-parent")
            started[key] = Parent(_live_env(folder, extra), folder, ROOT)
        return started.get(key)

    yield get
    for parent in started.values():
        parent.stop()


@pytest.fixture
def live_server_url(
    needs_postgres, owner, tmp_path, live_server_env, daphne_parent
) -> Iterator[str]:
    env, parent = _live_env(tmp_path, live_server_env), daphne_parent(live_server_env)
    with live_server(env, tmp_path, "daphne", parent=parent) as server:
        yield server.url


@pytest.fixture
def live_servers(
    needs_postgres, owner, tmp_path, live_server_env, daphne_parent
) -> Iterator[Callable[[int], list[LiveServer]]]:
    """Start n daphnes at once (``live_servers(2)``), like ``live_server_url``'s, on the same
    database and data dir, as several web processes of one install are; stopped after the test."""
    env, parent = _live_env(tmp_path, live_server_env), daphne_parent(live_server_env)
    with ExitStack() as stack:

        def start(count: int) -> list[LiveServer]:
            servers = (
                live_server(env, tmp_path, f"daphne-{n}", parent=parent) for n in range(count)
            )
            return [stack.enter_context(server) for server in servers]

        yield start


# --- the embedder process (talorys/embedder/): semantic recall's model ---------------------------


@dataclass(frozen=True)
class EmbedderProcess:
    """A ``python -m talorys.embedder`` on a Unix socket: ``url`` is its TALORYS_EMBEDDER_URL."""

    socket: Path
    process: subprocess.Popen
    log: Path

    @property
    def url(self) -> str:
        return f"unix:{self.socket}"


def _embedder_answers(socket_path: Path) -> bool:
    try:
        transport = httpx.HTTPTransport(uds=str(socket_path))
        with httpx.Client(transport=transport, timeout=5) as client:
            return client.get("http://embedder/health").status_code == 200
    except httpx.TransportError:
        return False


@contextmanager
def embedder_process(folder: Path, cache_dir: Path | None = None) -> Iterator[EmbedderProcess]:
    """Run the embedder process on ``folder``/embedder.sock until the block ends (SIGTERM, then
    SIGKILL). ``folder`` must be short: a socket's path has at most 107 bytes."""
    socket_path = folder / "embedder.sock"
    log_path = folder / "embedder.log"
    cache = str(cache_dir or folder / "cache")
    with log_path.open("w") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "talorys.embedder", "--socket", str(socket_path)]
            + ["--cache-dir", cache],
            cwd=ROOT,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    embedder = EmbedderProcess(socket_path, process, log_path)
    try:
        wait_for(
            lambda: _embedder_answers(socket_path), "the embedder", alive=process, log=log_path
        )
        yield embedder
    finally:
        process.terminate()
        try:
            process.wait(HANG_SECONDS)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture(scope="session")
def embedder_session() -> Iterator[EmbedderProcess]:
    """One embedder process per xdist worker, started by the first test that wants semantic
    recall (``local_embeddings``); the tests that want none never start it."""
    import shutil
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="tal-emb-"))
    try:
        with embedder_process(folder) as embedder:
            yield embedder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def local_embeddings(db, embedder_session, settings) -> EmbedderProcess:
    """Semantic recall on, through the session's embedder process. Without it a test's recall
    finds no process at the data dir's socket and is keyword only (as with the process down)."""
    from talorys.owner.services.settings import owner_settings_update

    settings.TALORYS_EMBEDDER_URL = embedder_session.url
    owner_settings_update(semantic_enabled=True)
    return embedder_session
