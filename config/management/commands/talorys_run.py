"""Run the whole product: daphne (web; several processes on one port with Redis, see
talorys/ops/web.py), a celery worker, celery beat and the embedder (talorys_embedder: the one
process per install that holds semantic recall's model). A child that dies is restarted
(talorys/ops/supervisor.py); Ctrl-C or SIGTERM stops them all."""

from __future__ import annotations

import datetime as dt
import io
import sys
import time
from collections.abc import Callable

from django.conf import settings
from django.core.checks import Tags
from django.core.management import call_command
from django.core.management.base import BaseCommand
from django.utils import timezone

from config.management.commands.talorys_embedder import embedder_command
from talorys.lib.env import env_int, env_str
from talorys.ops.health import embedder_status
from talorys.ops.selectors import heartbeat_states
from talorys.ops.supervisor import Supervisor
from talorys.ops.web import run_supervised, shown_host, web_process_count

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
        host = env_str("HOST", "127.0.0.1")
        port = env_int("PORT", 8000)
        count = web_process_count(settings.REDIS_URL)  # refused before anything is started
        # talorys_setup applies the migrations that are pending (a new data dir: all of them);
        # a second `migrate` before it cost a restart about 2.7 s of post-migrate work for
        # nothing (benchmarks/startup.py).
        # Kept to print with the URL, after the servers' start-up logs, so it is not scrolled away.
        setup_output = io.StringIO()
        call_command("talorys_setup", noinput=True, stdout=setup_output)
        started = timezone.now()

        def ready(supervisor: Supervisor, stopping: Callable[[], bool]) -> None:
            self._wait_for_heartbeats(started, supervisor, stopping)
            if not stopping():
                self._announce(setup_output.getvalue(), shown_host(host), port, count)

        run_supervised(
            host, port, count, others=_commands(), data_dir=settings.DATA_DIR, ready=ready
        )

    def _announce(self, setup_output: str, shown_host: str, port: int, count: int) -> None:
        username = env_str("TALORYS_OWNER_USERNAME", "owner")
        self.stdout.write("\n" + setup_output.rstrip())
        self.stdout.write(
            self.style.SUCCESS(f"\nTalorys is running at http://{shown_host}:{port}/")
            + (f" ({count} web processes)" if count > 1 else "")
        )
        self.stdout.write(
            login_hint(username, setup_output)
            + "\nPress Ctrl-C to stop web, worker, beat and the embedder.\n"
        )

    def _wait_for_heartbeats(
        self,
        started: dt.datetime,
        supervisor: Supervisor,
        stopping: Callable[[], bool],
        timeout: float = 30,
    ) -> None:
        """Announce the URL once the worker and beat have shown a heartbeat of this run too, and
        the embedder answers, so "running" means all of them (and /api/health says "ok" from the
        first request)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and not stopping():
            states = heartbeat_states()
            waiting = [n for n, s in states.items() if s.at is None or s.at < started]
            if not waiting and embedder_status()[0] == "ok":
                return
            supervisor.tick()
            time.sleep(0.3)
        self.stderr.write(
            "The worker, beat or the embedder is not up yet: `manage.py talorys_check` tells."
        )


def _commands() -> dict[str, list[str]]:
    """The worker, beat and the embedder, run beside the web processes (talorys/ops/web.py)."""
    celery = [sys.executable, "-m", "celery", "-A", "config"]
    return {
        # Straight to the process talorys_embedder would exec: no Django start-up in between.
        "embedder": embedder_command(),
        "worker": [*celery, "worker", "-l", "warning", "--concurrency", "2"],
        "beat": [*celery, "beat", "-l", "warning"]
        + ["-s", str(settings.DATA_DIR / "celerybeat-schedule")],
    }
