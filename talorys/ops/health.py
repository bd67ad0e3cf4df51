"""The health report: the database, the broker, the channel layer, the worker's and beat's
heartbeats, the embedder process and the last setup run. `/api/health` (api.py) and `talorys_check` show it.

Each check has its own short timeout, so a server that is down makes the report slow by
seconds, never hang. Only a database that cannot be reached makes the web server unhealthy
(503); anything else is "degraded": the pages still work, the background work may not (with
the embedder down, recall is keyword only until it is back).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import httpx
from asgiref.sync import async_to_sync
from channels.layers import BaseChannelLayer, InMemoryChannelLayer, get_channel_layer
from django.conf import settings
from django.db import connection

from talorys.embedder.address import embedder_address
from talorys.ops import selectors
from talorys.ops.models import SetupRun
from talorys.ops.selectors import HeartbeatState
from talorys.ops.supervisor import ProcessState, processes_read

CHECK_TIMEOUT = 2.0  # seconds, per check


@dataclass(frozen=True)
class HealthReport:
    database: str  # ok | unavailable
    broker: str  # ok | embedded | unavailable
    channel_layer: str  # ok | embedded | unavailable
    worker: HeartbeatState
    beat: HeartbeatState
    last_setup: SetupRun | None
    version: str
    # talorys_run's children (talorys/ops/supervisor.py); None when something else runs them.
    processes: dict[str, ProcessState] | None = None
    embedder: str = "ok"  # ok | unavailable (talorys/embedder/: semantic recall's model)
    embedder_error: str = ""  # why it is unavailable

    @property
    def setup(self) -> str:
        return self.last_setup.outcome if self.last_setup else "unknown"

    @property
    def problems(self) -> list[str]:
        """The names of the checks that are not as they should be."""
        found = [
            name
            for name in ("database", "broker", "channel_layer", "embedder")
            if getattr(self, name) == "unavailable"
        ]
        found += [name for name in ("worker", "beat") if getattr(self, name).status != "ok"]
        if self.setup == SetupRun.Outcome.FAILED:
            found.append("setup")
        if any(p["status"] != "running" for p in (self.processes or {}).values()):
            found.append("processes")
        return found

    @property
    def status(self) -> str:
        return "degraded" if self.problems else "ok"


def health_report() -> HealthReport:
    database = database_status()
    if database == "ok":
        beats = selectors.heartbeat_states()
        last_setup = selectors.setup_run_latest()
    else:
        unknown = HeartbeatState("unknown", None)
        beats, last_setup = {"worker": unknown, "beat": unknown}, None
    embedder, embedder_error = embedder_status()
    return HealthReport(
        database=database,
        broker=broker_status(),
        channel_layer=channel_layer_status(),
        worker=beats["worker"],
        beat=beats["beat"],
        last_setup=last_setup,
        version=selectors.app_version(),
        processes=processes_read(settings.DATA_DIR),
        embedder=embedder,
        embedder_error=embedder_error,
    )


def database_status() -> str:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except Exception:
        return "unavailable"
    return "ok"


def embedder_status() -> tuple[str, str]:
    """The embedder process answers its ``GET /health`` (talorys/embedder/server.py): ("ok", "")
    or ("unavailable", why). Checked whatever recall uses: it is part of every install, like the
    worker, and a configured embeddings server can be cleared at any time."""
    address = embedder_address()
    transport = httpx.HTTPTransport(uds=str(address.socket)) if address.socket else None
    try:
        with httpx.Client(transport=transport, timeout=CHECK_TIMEOUT) as client:
            response = client.get(f"{address.url}/health")
    except httpx.HTTPError as error:
        return "unavailable", f"no answer at {address} ({type(error).__name__}: {error})"
    if response.status_code != 200:
        return "unavailable", f"{address} answered {response.status_code}"
    return "ok", ""


def broker_status() -> str:
    """Redis answers a PING; without REDIS_URL the broker is the data dir's folders."""
    if not settings.REDIS_URL:
        return "embedded"
    import redis

    try:
        redis.Redis.from_url(settings.REDIS_URL, socket_timeout=CHECK_TIMEOUT).ping()
    except Exception:
        return "unavailable"
    return "ok"


def channel_layer_status() -> str:
    """A message sent to a fresh channel comes back. The in-memory layer lives in this process
    only, so a round trip on it would prove nothing: "embedded"."""
    layer = get_channel_layer()
    if layer is None:
        return "unavailable"
    if isinstance(layer, InMemoryChannelLayer):
        return "embedded"
    try:
        returned = async_to_sync(_round_trip)(layer)
    except Exception:
        return "unavailable"
    return "ok" if returned else "unavailable"


async def _round_trip(layer: BaseChannelLayer) -> bool:
    channel = await layer.new_channel()
    async with asyncio.timeout(CHECK_TIMEOUT):
        await layer.send(channel, {"type": "health.ping"})
        message = await layer.receive(channel)
    return message.get("type") == "health.ping"
