"""The embedded broker (no REDIS_URL): kombu's filesystem transport, made safe to share.

kombu's own transport writes a message under its final name, so a consumer listing the queue
folder at that moment reads an empty or half-written file; and a file that does not decode
raises out of the consumer, which Celery calls unrecoverable: the worker exits. Here:

- a message is written under a name no consumer lists (``.…tmp``, in the queue folder, so on
  the same filesystem), then renamed into place: a rename is atomic, a consumer sees all of a
  message or none of it;
- a consumer claims a message by renaming it into the processed folder (one of several
  consumers wins, the others move on; kombu's default claim copies to /tmp, and two consumers
  could both copy one message), then reads it;
- a file that does not decode into a message is moved to the ``broken`` folder and logged, and
  the next message is read: one bad file never stops a worker.

settings.py names this class as Celery's broker transport when there is no REDIS_URL.
``benchmarks/broker_latency.py`` measures a task's way from ``delay()`` to running on it.
"""

from __future__ import annotations

import logging
import os
import tempfile
import uuid
from pathlib import Path
from queue import Empty
from time import monotonic
from typing import Any

from kombu.exceptions import ChannelError
from kombu.transport import filesystem
from kombu.utils.encoding import bytes_to_str, str_to_bytes
from kombu.utils.json import dumps, loads

log = logging.getLogger(__name__)

TEMP_SUFFIX = ".tmp"  # a message being written: never a queue's ``.<queue>.msg``


class Channel(filesystem.Channel):
    # The filesystem Channel's signature, which kombu's own AbstractChannel names otherwise.
    def _put(self, queue: str, payload: dict[str, Any], **kwargs: Any) -> None:  # type: ignore[override]
        """Write the message beside the queue, then rename it into the queue atomically."""
        folder = self.data_folder_out
        name = f"{round(monotonic() * 1000)}_{uuid.uuid4()}.{queue}.msg"
        try:
            fd, temp = tempfile.mkstemp(prefix=".", suffix=TEMP_SUFFIX, dir=folder)
        except OSError as exc:
            raise ChannelError(f"Cannot add a message to {folder!r}") from exc
        try:
            with os.fdopen(fd, "wb") as file:
                file.write(str_to_bytes(dumps(payload)))
            os.replace(temp, os.path.join(folder, name))
        except OSError as exc:
            Path(temp).unlink(missing_ok=True)
            raise ChannelError(f"Cannot add file {name!r} to {folder!r}") from exc

    def _get(self, queue: str, timeout: float | None = None) -> dict:
        """The oldest message of ``queue`` that decodes; the ones before it that don't are set
        aside. Empty when there is none."""
        wanted = f"{queue}.msg"
        for filename in sorted(os.listdir(self.data_folder_in)):
            if filename.partition(".")[2] != wanted:
                continue
            claimed = self._claim(filename)
            if claimed is None:  # another consumer took it first
                continue
            payload = _decoded(claimed)
            if payload is None:
                self._set_aside(filename, claimed)
                continue
            return payload
        raise Empty()

    def _claim(self, filename: str) -> bytes | None:
        """Move the file out of the queue, then read it: the rename is what makes it ours."""
        claimed = os.path.join(self.processed_folder, filename)
        try:
            os.rename(os.path.join(self.data_folder_in, filename), claimed)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise ChannelError(f"Cannot take {filename!r} from the queue") from exc
        try:
            with open(claimed, "rb") as file:
                content = file.read()
            if not self.store_processed:
                os.remove(claimed)
        except OSError as exc:
            raise ChannelError(f"Cannot read {claimed!r}") from exc
        return content

    def _set_aside(self, filename: str, content: bytes) -> None:
        folder = Path(self.broken_folder)
        folder.mkdir(parents=True, exist_ok=True)
        # Written again (not moved): the claimed file is already gone unless processed are kept.
        (folder / filename).write_bytes(content)
        if self.store_processed:
            Path(self.processed_folder, filename).unlink(missing_ok=True)
        log.error(
            "The broker's message file %s (%d bytes) is not a message: set aside in %s; "
            "the worker goes on with the next one.",
            filename,
            len(content),
            folder,
        )

    @property
    def broken_folder(self) -> str:
        default = Path(self.data_folder_in).parent / "broken"
        return str(self.transport_options.get("broken_folder", default))


def _decoded(content: bytes) -> dict | None:
    """The message in ``content``, or None when it is not one (empty, cut short, not JSON, not
    kombu's envelope)."""
    try:
        payload = loads(bytes_to_str(content))
    except ValueError:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        return None
    if not isinstance(payload, dict) or not isinstance(payload.get("properties"), dict):
        return None
    return payload


class Transport(filesystem.Transport):
    Channel = Channel

    @property
    def default_connection_params(self) -> dict[str, Any]:
        """A folder, not a server: no host to fall back to. kombu's virtual transports name
        ``localhost``, and a URL without a host (``filesystem://``) then logs "No hostname was
        supplied. Reverting to default 'localhost'" at every connection: four warnings at each
        start, about nothing."""
        return {"port": self.default_port}
