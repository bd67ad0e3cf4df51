"""Run the whole product: daphne (web), a celery worker and celery beat. A child that dies is
restarted (talorys/ops/supervisor.py); Ctrl-C or SIGTERM stops all three."""

from __future__ import annotations

import datetime as dt
import io
import os
import signal
import socket
import sys
import time
from collections.abc import Callable

from django.conf import settings
from django.core.checks import Tags
from django.core.management import call_command
from django.core.management.base import BaseCommand
from django.utils import timezone

from talorys.lib.env import env_int, env_str
from talorys.ops.selectors import heartbeat_states
from talorys.ops.supervisor import Supervisor

RESET = "`.venv/bin/python manage.py talorys_setup --reset-password`"
PRINTED = "OWNER PASSWORD (shown once):"  # talorys_setup's line when it made a password


def login_hint(username: str, setup_output: str) -> str:
    """How to log in, from what this start's setup printed: its new password is just above,
    or (any later start) it was shown once, at the first, and only a reset makes another."""
    if PRINTED in setup_output:
        return f"Log in as {username!r} with the password printed above (shown only this once)."
    return (
        f"Log in as {username!r} with the password printed when Talorys first started (or the "
        f"one in TALORYS_OWNER_PASSWORD then). Lost it? Run {RESET} for a new one."
    )


class Command(BaseCommand):
    help = "Migrate, make sure the owner exists, then run web + worker + beat together."
    # Every system check but the URL ones: those import the whole URLconf (the API's schemas,
    # about 0.4 s of every start) in this process, which serves nothing. The web loads it at
    # its first request, and `manage.py check` and the suite check it.
    requires_system_checks = [
        tag for name, tag in vars(Tags).items() if not name.startswith("_") and tag != Tags.urls
    ]

    def handle(self, *args, **options):
        # talorys_setup applies the migrations that are pending (a new data dir: all of them);
        # a second `migrate` before it cost a restart about 2.7 s of post-migrate work for
        # nothing (benchmarks/startup.py).
        # Kept to print with the URL, after the servers' start-up logs, so it is not scrolled away.
        setup_output = io.StringIO()
        call_command("talorys_setup", noinput=True, stdout=setup_output)
        started = timezone.now()
        host = env_str("HOST", "127.0.0.1")
        port = env_int("PORT", 8000)
        procs = _commands(host, port)
        # Their logs go to stderr; what they print on stdout is start-up banners.
        supervisor = Supervisor(procs, data_dir=settings.DATA_DIR, quiet={"worker", "beat"})
        stopping = False

        def stop(*_):
            nonlocal stopping
            stopping = True

        signal.signal(signal.SIGINT, stop)
        signal.signal(signal.SIGTERM, stop)
        supervisor.start()
        try:
            shown_host = "127.0.0.1" if host in ("0.0.0.0", "::") else host
            _wait_until_listening(shown_host, port, supervisor, lambda: stopping)
            self._wait_for_heartbeats(started, supervisor, lambda: stopping)
            if not stopping:
                self._announce(setup_output.getvalue(), shown_host, port)
            # A child that dies is started again (talorys/ops/supervisor.py): the web keeps
            # serving while the worker or beat comes back.
            while not stopping:
                supervisor.tick()
                time.sleep(0.5)
        finally:
            supervisor.stop()

    def _announce(self, setup_output: str, shown_host: str, port: int) -> None:
        username = env_str("TALORYS_OWNER_USERNAME", "owner")
        self.stdout.write("\n" + setup_output.rstrip())
        self.stdout.write(
            self.style.SUCCESS(f"\nTalorys is running at http://{shown_host}:{port}/")
        )
        self.stdout.write(
            login_hint(username, setup_output) + "\nPress Ctrl-C to stop web, worker and beat.\n"
        )

    def _wait_for_heartbeats(
        self,
        started: dt.datetime,
        supervisor: Supervisor,
        stopping: Callable[[], bool],
        timeout: float = 30,
    ) -> None:
        """Announce the URL once the worker and beat have shown a heartbeat of this run too, so
        "running" means all three (and /api/health says "ok" from the first request)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and not stopping():
            states = heartbeat_states()
            waiting = [n for n, s in states.items() if s.at is None or s.at < started]
            if not waiting:
                return
            supervisor.tick()
            time.sleep(0.3)
        self.stderr.write(
            "The worker or beat has not shown a heartbeat yet: `manage.py talorys_check` tells."
        )


def _commands(host: str, port: int) -> dict[str, list[str]]:
    python = sys.executable
    celery = [python, "-m", "celery", "-A", "talorys"]
    return {
        "web": [os.path.join(os.path.dirname(python), "daphne"), "-b", host, "-p", str(port)]
        + ["talorys.asgi:application"],
        "worker": [*celery, "worker", "-l", "warning", "--concurrency", "2"],
        "beat": [*celery, "beat", "-l", "warning"]
        + ["-s", str(settings.DATA_DIR / "celerybeat-schedule")],
    }


def _wait_until_listening(
    host: str,
    port: int,
    supervisor: Supervisor,
    stopping: Callable[[], bool],
    timeout: float = 30,
) -> None:
    """Print the URL once it answers, so it is the last thing on screen, not lost in start-up logs."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not stopping():
        try:
            with socket.create_connection((host, port), timeout=0.5):
                return
        except OSError:
            supervisor.tick()
            time.sleep(0.2)
