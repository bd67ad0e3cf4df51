"""Recall's index names its kinds as the bin and the change log do ("task", not "tasks")."""

from django.db import migrations

# Frozen here (a migration must not follow the code): memory/recall/sources.py FORMER_NAMES.
SINGULAR = {
    "memories": "memory",
    "tasks": "task",
    "notes": "note",
    "projects": "project",
    "automations": "automation",
    "messages": "message",
}


def _rename(apps, names: dict[str, str]) -> None:
    entry = apps.get_model("memory", "RecallEntry")
    for old, new in names.items():
        entry.objects.filter(kind=old).update(kind=new)


def forwards(apps, schema_editor):
    _rename(apps, SINGULAR)


def backwards(apps, schema_editor):
    _rename(apps, {new: old for old, new in SINGULAR.items()})


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0005_recallentry_stated_at"),
    ]

    operations = [migrations.RunPython(forwards, backwards)]
