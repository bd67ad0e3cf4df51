"""Files attached to an owner's chat message (files/): which ids a turn may carry. The turn gives
the model their text (runner/inputs.py, files.selectors.files_context) and the message shows
them (schemas.MessageOut.attachments)."""

from __future__ import annotations

import base64

from agent.models import Message
from agent.rerun import Rerun
from files import storage
from files.models import File
from talorys.lib.errors import field_refused

MAX_ATTACHMENTS = 10  # files on one owner message
# An image larger than this is not sent to the model (most servers refuse a request past a
# few megabytes); it is named instead.
MAX_IMAGE_BYTES = 4 * 1024 * 1024


def attachments_checked(file_ids: list[int], *, rerun: Rerun | None) -> list[int]:
    """The ids, each once and in order, when each is a live file; ValidationFailed otherwise
    (nothing is kept): one unknown or binned, too many, or any on a retry or a regenerate,
    which re-run a message with its own."""
    ids = list(dict.fromkeys(file_ids))
    if not ids:
        return []
    if rerun in ("retry", "regenerate"):
        raise field_refused(
            "A retry or a regenerate keeps the message's attachments; attach files to a new "
            "message or an edit.",
            field="attachments",
        )
    if len(ids) > MAX_ATTACHMENTS:
        raise field_refused(
            f"At most {MAX_ATTACHMENTS} files can be attached to one message.", field="attachments"
        )
    live = set(File.objects.live().filter(pk__in=ids).values_list("pk", flat=True))
    missing = [str(pk) for pk in ids if pk not in live]
    if missing:
        raise field_refused(
            f"No such file (deleted, or never uploaded): {', '.join(missing)}. Upload it again.",
            field="attachments",
        )
    return ids


def message_attachments_set(*, message: Message, files: list[int], new: bool) -> tuple[int, ...]:
    """Attach ``files`` (checked) to the owner's saved message; the files its turn reads. A
    retry or a regenerate re-runs a saved (not ``new``) message with its own: one more read."""
    if files:
        message.attachments.set(files)
        return tuple(files)
    return () if new else tuple(message.attachments.values_list("pk", flat=True))


def image_urls(files: list[File]) -> tuple[list[str], dict[str, str]]:
    """For a model that sees images: the attached images as data: URLs, and a line for the
    prompt about each image, by its label "[file <id>: <name>]" (with which files_context's
    note about it begins, which this line replaces): shown, or too large to send."""
    urls: list[str] = []
    notes: dict[str, str] = {}
    for file in files:
        if not file.content_type.startswith("image/"):
            continue
        label = f"[file {file.pk}: {file.name}]"
        if file.size > MAX_IMAGE_BYTES:
            notes[label] = f"{label} is an image too large to show you; you cannot see it."
            continue
        data = base64.b64encode(storage.blob_read(file.sha256)).decode()
        urls.append(f"data:{file.content_type};base64,{data}")
        notes[label] = f"{label} is an image, shown to you with the owner's message."
    return urls, notes
