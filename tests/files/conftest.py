from __future__ import annotations

import io
from collections.abc import Callable

import pytest

from files import services
from files.models import File


@pytest.fixture(autouse=True)
def _files_dir(settings, tmp_path) -> None:
    """Each test's blobs in a directory of its own (Django reopens the storage on the change)."""
    files = settings.STORAGES["files"]
    settings.STORAGES = settings.STORAGES | {
        "files": files | {"OPTIONS": files["OPTIONS"] | {"location": tmp_path / "files"}}
    }


@pytest.fixture
def upload(db, eager, django_capture_on_commit_callbacks) -> Callable[..., File]:
    """Upload ``data`` as ``name``; the commit sends the extraction, which runs inline."""

    def make(name: str, data: bytes) -> File:
        with django_capture_on_commit_callbacks(execute=True):
            file = services.file_create(name=name, stream=io.BytesIO(data))
        file.refresh_from_db()
        return file

    return make
