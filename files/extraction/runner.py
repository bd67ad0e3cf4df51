"""The worker's side of extraction: start the child, give it the bytes, read its answer, and
stop it past the time budget (the package's docstring says why a child)."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass, field

from django.conf import settings

from files.extraction.passages import Passage


@dataclass(frozen=True)
class Result:
    passages: list[Passage] = field(default_factory=list)
    pages: int | None = None
    reason: str = ""  # set when the file could not be read: why, in the owner's words

    @classmethod
    def failed(cls, reason: str) -> Result:
        return cls(reason=reason)


def extract(data: bytes, content_type: str) -> Result:
    """The passages of ``data`` (of the sniffed ``content_type``), or a Result with a reason."""
    seconds = settings.TALORYS_FILE_EXTRACT_SECONDS
    command = [
        sys.executable,
        "-m",
        "files.extraction.child",
        content_type,
        str(settings.TALORYS_FILE_EXTRACT_MEMORY_BYTES),
    ]
    child = subprocess.Popen(
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=settings.BASE_DIR,
    )
    try:
        out, err = child.communicate(data, timeout=seconds)
    except subprocess.TimeoutExpired:
        child.kill()
        child.communicate()
        return Result.failed(
            f"Reading this file took longer than {seconds:g} seconds, so it was stopped."
        )
    try:
        answer = json.loads(out or b"{}")
    except ValueError:
        answer = {}
    if child.returncode != 0 or "passages" not in answer and "reason" not in answer:
        tail = err.decode("utf-8", "replace").strip().splitlines()[-1:] or [""]
        return Result.failed(
            "The file could not be read: the reader stopped unexpectedly"
            + (f" ({tail[0][:200]})." if tail[0] else ".")
        )
    if answer.get("reason"):
        return Result.failed(str(answer["reason"]))
    return Result(
        passages=[Passage(**p) for p in answer["passages"]],
        pages=answer.get("pages"),
    )
