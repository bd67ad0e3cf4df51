"""`manage.py talorys_embedder`: the install's one embedder process (semantic recall's model).

Reads where to serve from the settings (TALORYS_EMBEDDER_URL: the data dir's ``embedder.sock``
by default; ``--listen host:port`` for compose's embedder service) and becomes
``python -m talorys.embedder`` (talorys/embedder/__main__.py) by exec: the same pid, so
talorys_run's supervisor and a container's signals reach the server, whose memory then holds the
model and not Django's modules. talorys_run starts it beside web, worker and beat, and restarts
it when it dies.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand

from talorys.embedder.address import embedder_address


def embedder_command(*, listen: str = "") -> list[str]:
    """The embedder's command line, from the settings (talorys_run runs it too)."""
    address = embedder_address()
    where = ["--listen", listen] if listen else []
    if not where:
        if address.socket is not None:
            where = ["--socket", str(address.socket)]
        else:
            where = ["--listen", address.url.split("//", 1)[-1]]
    cache = str(settings.DATA_DIR / "embedder")
    return [sys.executable, "-m", "talorys.embedder", *where, "--cache-dir", cache]


class Command(BaseCommand):
    help = "Serve the local embedder (all-MiniLM-L6-v2) to the web processes and the worker."
    requires_system_checks: list[str] = []  # it serves no page and reads no table

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--listen", default="", help="host:port instead of the settings'")

    def handle(self, *args: Any, listen: str, **options: Any) -> None:
        command = embedder_command(listen=listen)
        sys.stdout.flush()
        sys.stderr.flush()
        # PYTHONPATH: the project's root, for `python -m` run from anywhere.
        root = str(settings.BASE_DIR)
        env = os.environ | {
            "PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH", "")]))
        }
        os.execve(command[0], command, env)
