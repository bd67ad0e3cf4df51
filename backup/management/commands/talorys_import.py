"""``manage.py talorys_import FILE [--dry-run]``: import a backup (``-`` reads stdin)."""

from __future__ import annotations

import shutil
import sys
import tempfile
from typing import IO, Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from backup.services import backup_import, origin_text, report_lines
from talorys.lib.errors import AppError


class Command(BaseCommand):
    help = "Import a Talorys backup, merged by id; --dry-run says what it would do."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", help="the backup file; - for standard input")
        parser.add_argument(
            "--dry-run", action="store_true", help="change nothing; say what would change"
        )

    def handle(self, *args: Any, file: str, dry_run: bool, **options: Any) -> None:
        try:
            source = _stdin() if file == "-" else open(file, "rb")  # noqa: SIM115
        except OSError as exc:
            raise CommandError(f"Cannot read {file}: {exc.strerror}.") from exc
        try:
            with source:
                report = backup_import(source=source, dry_run=dry_run)
        except AppError as err:
            raise CommandError(f"{err.message} Nothing was changed.") from err
        heading = "Dry run: nothing was changed. The import would do:" if dry_run else "Imported:"
        self.stdout.write(origin_text(report["made_here"]))
        self.stdout.write(heading)
        for line in report_lines(report):
            self.stdout.write(f"  {line}")


def _stdin() -> IO[bytes]:
    """Standard input in a temporary file: the import reads its source twice."""
    spooled = tempfile.TemporaryFile()  # noqa: SIM115 (closed by handle's ``with``)
    shutil.copyfileobj(sys.stdin.buffer, spooled)
    return spooled
