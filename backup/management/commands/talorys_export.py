"""``manage.py talorys_export FILE``: write the whole backup to FILE (``-`` for stdout)."""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from backup.services import backup_export


class Command(BaseCommand):
    help = "Export everything the owner keeps as one JSON backup (no secrets)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", help="where to write the backup; - for standard output")

    def handle(self, *args: Any, file: str, **options: Any) -> None:
        if file == "-":
            for piece in backup_export():
                sys.stdout.buffer.write(piece)
            sys.stdout.buffer.flush()
            return
        target = Path(file)
        # Written beside the target and renamed at the end: a failed export never leaves half a
        # backup under the name of a good one. 0600: a backup holds all of the owner's data.
        fd, partial = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent or ".")
        try:
            with os.fdopen(fd, "wb") as out:
                for piece in backup_export():
                    out.write(piece)
            os.replace(partial, target)
        except BaseException:
            Path(partial).unlink(missing_ok=True)
            raise
        self.stdout.write(f"Wrote {target} ({target.stat().st_size} bytes).")
