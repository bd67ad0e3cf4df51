"""Files attached to an owner's chat message (files/): which ids a turn may carry. The turn gives
the model their text (runner/inputs.py, files.selectors.files_context) and the message shows
them (schemas.MessageOut.attachments)."""

from __future__ import annotations

from agent.models import Message
from agent.rerun import Rerun
from files.models import File
from talorys.lib.errors import field_refused

MAX_ATTACHMENTS = 10  # files on one owner message


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
