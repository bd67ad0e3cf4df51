"""The files the owner attaches: the upload's metadata (``File``) and its text cut into passages
(``FilePassage``) that recall indexes as kind ``file``.

The bytes are not in the database: they are kept once per content in the ``files`` storage
(``STORAGES["files"]`` in config/settings.py; files/storage.py), named by their sha256, so the
same bytes uploaded twice are stored once and a blob goes only when no row names it. A file
goes to the bin like every other kind (``Binnable``); a binned file is hidden from lists,
search and tools, and its passages with it.
"""

from __future__ import annotations

from django.db import models

from talorys.history.models import Binnable


class File(Binnable):
    """One upload. ``status`` is ``pending`` until the worker has read its text
    (files/extraction/), then ``ready`` or ``failed`` with ``reason`` in words the owner can
    act on. An image is ``ready`` at once, with no text."""

    class Status(models.TextChoices):
        PENDING = "pending"
        READY = "ready"
        FAILED = "failed"

    NAME_MAX = 255
    REASON_MAX = 500

    name = models.CharField(max_length=NAME_MAX)  # as uploaded, cleaned (services.clean_name)
    # Sniffed from the bytes (files/sniff.py), never taken from the name or the client.
    content_type = models.CharField(max_length=100)
    size = models.BigIntegerField()
    sha256 = models.CharField(max_length=64, db_index=True)
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.PENDING)
    reason = models.CharField(max_length=REASON_MAX, blank=True, default="")
    pages = models.PositiveIntegerField(null=True, blank=True)  # a PDF's page count
    text_chars = models.PositiveIntegerField(default=0)  # how much text was extracted
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return self.name


class FilePassage(models.Model):
    """A piece of a file's text, in order (``index``), with where it is: its ``page`` (a PDF,
    from 1) or the ``heading`` it is under (Markdown, HTML, DOCX). What recall indexes and the
    tools quote."""

    HEADING_MAX = 200

    file = models.ForeignKey(File, on_delete=models.CASCADE, related_name="passages")
    index = models.PositiveIntegerField()
    page = models.PositiveIntegerField(null=True, blank=True)
    heading = models.CharField(max_length=HEADING_MAX, blank=True, default="")
    text = models.TextField()

    class Meta:
        ordering = ["file", "index"]
        constraints = [
            models.UniqueConstraint(fields=["file", "index"], name="files_passage_file_index")
        ]

    def __str__(self) -> str:
        return f"{self.file_id}#{self.index}"
