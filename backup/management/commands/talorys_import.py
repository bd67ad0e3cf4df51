"""``manage.py talorys_import FILE [--dry-run]``: import a backup (``-`` reads stdin)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from backup.services import backup_import, report_lines
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
            raw = sys.stdin.buffer.read() if file == "-" else Path(file).read_bytes()
        except OSError as exc:
            raise CommandError(f"Cannot read {file}: {exc.strerror}.") from exc
        try:
            report = backup_import(raw=raw, dry_run=dry_run)
        except AppError as err:
            raise CommandError(f"{err.message} Nothing was changed.") from err
        heading = "Dry run: nothing was changed. The import would do:" if dry_run else "Imported:"
        self.stdout.write(heading)
        for line in report_lines(report):
            self.stdout.write(f"  {line}")
