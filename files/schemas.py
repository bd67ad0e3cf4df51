"""Input and output schemas of /api/files. Inputs are never reused as outputs."""

from __future__ import annotations

import datetime as dt
from typing import Annotated

from ninja import Schema
from pydantic import Field

from files.models import File
from talorys.lib.search import QUERY_MAX
from talorys.web.schemas import QueryText, one_of

FileStatus = Annotated[File.Status, one_of(File.Status)]


class FileFilters(Schema):
    q: QueryText | None = Field(None, max_length=QUERY_MAX, description="Name contains")
    status: FileStatus | None = None


class FileOut(Schema):
    id: int
    name: str
    content_type: str = Field(description="Sniffed from the content, not the name")
    size: int
    status: FileStatus
    reason: str = Field(description="Why the text could not be read (status failed)")
    pages: int | None = Field(description="A PDF's page count")
    text_chars: int
    sha256: str
    created_at: dt.datetime
    updated_at: dt.datetime
