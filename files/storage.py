"""Where a file's bytes are kept: the ``files`` storage (``STORAGES["files"]`` in
config/settings.py), through Django's storage API, one blob per content, named by its sha256
("ab/cd/abcd…"). The same bytes uploaded twice are stored once; a blob is deleted only when
no ``File`` row names it any more (``blob_release``).

The default is a directory under the data dir, files 0600 and directories 0700. A larger
install can keep the blobs elsewhere by pointing the alias at another backend, e.g.
django-storages' S3 one (install it; it is not a dependency here) with
``STORAGES["files"] = {"BACKEND": "storages.backends.s3.S3Storage", "OPTIONS": {...}}``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import IO

from django.core.files.base import File as DjangoFile
from django.core.files.storage import Storage, storages

CHUNK = 1024 * 1024


def files_storage() -> Storage:
    return storages["files"]


def blob_name(sha256: str) -> str:
    return f"{sha256[:2]}/{sha256[2:4]}/{sha256}"


def blob_put(sha256: str, stream: IO[bytes]) -> None:
    """Store the content once: a blob that exists already is kept as it is (same name, same
    bytes)."""
    storage = files_storage()
    name = blob_name(sha256)
    if storage.exists(name):
        return
    stream.seek(0)
    saved = storage.save(name, DjangoFile(stream))
    if saved != name:  # a concurrent upload of the same bytes won the name: keep one copy
        storage.delete(saved)


def blob_read(sha256: str) -> bytes:
    with files_storage().open(blob_name(sha256), "rb") as blob:
        return blob.read()


def blob_chunks(sha256: str, size: int = CHUNK) -> Iterator[bytes]:
    with files_storage().open(blob_name(sha256), "rb") as blob:
        yield from iter(lambda: blob.read(size), b"")


def blob_exists(sha256: str) -> bool:
    return files_storage().exists(blob_name(sha256))


def blob_delete(sha256: str) -> None:
    files_storage().delete(blob_name(sha256))
