"""Bring the recall index up to date now (what the catch-up task does every few minutes)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from memory import services


class Command(BaseCommand):
    help = (
        "Index every item the owner keeps for recall (keyword entries, and vectors when an "
        "embedder is on). --full re-embeds every vector, e.g. after changing the embeddings "
        "model's server."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--full", action="store_true", help="Re-embed every vector too.")

    def handle(self, *args: Any, **options: Any) -> None:
        report = services.reindex(full=options["full"])
        kinds = ", ".join(f"{kind}: {count}" for kind, count in sorted(report.kinds.items()))
        self.stdout.write(
            f"Recall index: {report.written} written, {report.removed} removed, "
            f"{report.embedded} embedded. Indexed: {kinds or 'nothing'}."
        )
        if report.embed_error:
            self.stderr.write(f"Embedding stopped: {report.embed_error} (keyword recall stands).")
