"""A vault's attachments (its files that are not notes) as the owner's files (files/)."""

from __future__ import annotations

import io

from files.models import File
from files.services import file_create
from imports.models import ImportedItem, ImportRun, Source
from imports.readers.items import VaultFile
from talorys.lib.actors import Actor
from talorys.lib.errors import AppError, ValidationFailed

IMPORT_SOURCE = "import"  # as imports/services.py records the run's own items


def vault_file_add(attachment: VaultFile, *, run: ImportRun) -> File | str:
    """The file made from the attachment (recorded as this run's item), or why the files app
    refused it (its type, its size: nothing of it stored), in words for the report."""
    actor = Actor(source=f"{IMPORT_SOURCE}:{run.pk}")
    name = attachment.path.rsplit("/", 1)[-1]
    try:
        made = file_create(name=name, stream=io.BytesIO(attachment.read()), actor=actor)
    except AppError as error:
        if isinstance(error, ValidationFailed):  # a damaged zip refuses the whole import
            raise
        return error.message.rstrip(".")
    external = attachment.external_id[: ImportedItem.EXTERNAL_ID_MAX]
    ImportedItem.objects.create(
        run=run, source=Source.VAULT, kind=ImportedItem.Kind.FILE, external_id=external, file=made
    )
    return made
