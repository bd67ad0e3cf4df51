"""The web alone, for the image's web service (Dockerfile, compose.yaml): TALORYS_WEB_PROCESSES
daphnes sharing one listening socket (talorys/ops/web.py), each restarted when it dies
(talorys/ops/supervisor.py), on HOST:PORT (0.0.0.0:8000 by default: inside a container). The
worker, beat and the migrations are other services there; Ctrl-C or SIGTERM stops them all."""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.core.management.base import BaseCommand

from config.management.commands.talorys_run import Command as RunCommand
from talorys.lib.env import env_int, env_str
from talorys.ops.supervisor import Supervisor
from talorys.ops.web import run_supervised, shown_host, web_process_count


class Command(BaseCommand):
    help = "Serve the web: TALORYS_WEB_PROCESSES daphnes on HOST:PORT, restarted if they die."
    requires_system_checks = RunCommand.requires_system_checks

    def handle(self, *args, **options):
        host = env_str("HOST", "0.0.0.0")
        port = env_int("PORT", 8000)
        count = web_process_count(settings.REDIS_URL)

        def ready(supervisor: Supervisor, stopping: Callable[[], bool]) -> None:
            processes = f"{count} web process" + ("es" if count > 1 else "")
            self.stdout.write(f"Serving http://{shown_host(host)}:{port}/ with {processes}.")

        run_supervised(host, port, count, others={}, data_dir=settings.DATA_DIR, ready=ready)
