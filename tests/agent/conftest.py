"""The owner's session for the chat socket; two web processes behind one port, on one database
and one Redis (agent/live follows a turn from any of them)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import urlsplit

import pytest
from django.test import Client

from tests.conftest import OWNER_PASSWORD, LiveServer
from tests.round_robin import RoundRobinProxy
from tests.waiting import wait_for


@pytest.fixture
def session_cookie(owner) -> bytes:
    """The owner's session, as the Cookie header of a socket (channels.testing)."""
    client = Client()
    assert client.login(username="owner", password=OWNER_PASSWORD)
    return f"sessionid={client.cookies['sessionid'].value}".encode()


@pytest.fixture
def redis_live_env(redis_url_for_tests) -> dict[str, str]:
    """The environment of a live daphne on the test Redis (tests/agent/redis_live_settings.py)."""
    return {
        "DJANGO_SETTINGS_MODULE": "tests.agent.redis_live_settings",
        "TALORYS_TEST_LIVE_REDIS_URL": redis_url_for_tests,
    }


_ACCESS = re.compile(r'^127\.0\.0\.1:(\d+) \S+ \S+ \[[^]]*\] "([^"]*)"')


@dataclass
class Processes:
    """The daphnes, and the proxy in front of them (``url``): each new connection to it goes to
    the next daphne, the first to ``servers[0]``."""

    proxy: RoundRobinProxy
    servers: list[LiveServer]

    @property
    def url(self) -> str:
        return self.proxy.url

    def requests(self, index: int) -> list[str]:
        """What ``servers[index]`` answered through the proxy ("POST /api/chat", ...): the lines
        of its access log whose client is one of the proxy's connections, each checked against
        the proxy's record of where it sent that connection. Health checks are left out: the
        start's came directly, and the port of one may since be the proxy's."""
        routed = {route.upstream_port: route.backend for route in self.proxy.routes}
        answered = []
        for line in self.servers[index].access_log.read_text().splitlines():
            match = _ACCESS.match(line)
            if match is None or int(match[1]) not in routed or "/api/health" in match[2]:
                continue
            assert routed[int(match[1])] == index, f"{line!r}: the proxy sent it elsewhere"
            answered.append(match[2])
        return answered

    def answered(self, index: int, request: str) -> bool:
        """Whether ``servers[index]`` answered ``request`` ("GET /api/..."), waiting for its
        access log line: daphne writes it once the response has ended, maybe after the client
        read its end (and never for a response the client hung up on)."""
        wait_for(lambda: request in self.requests(index), f"{request} in daphne {index}'s log")
        return True


@pytest.fixture
def processes(live_servers) -> Iterator[Processes]:
    """Two daphnes as ``live_server_url``'s (the test module's ``live_server_env``), behind one
    port (tests/round_robin.py)."""
    servers = live_servers(2)
    backends = [("127.0.0.1", urlsplit(server.url).port or 80) for server in servers]
    proxy = RoundRobinProxy(backends).start()
    try:
        yield Processes(proxy, servers)
    finally:
        proxy.stop()
