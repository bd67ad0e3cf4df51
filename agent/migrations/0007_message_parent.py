"""Messages get a parent (agent/branches.py): the owner may edit any message, and an edit
starts a branch beside the old one. Every existing conversation is linked in place, without
losing a message: its active messages as one chain, and what regenerates and edits replaced as
the branches they were (agent/lineage.py)."""

import django.db.models.deletion
from django.db import migrations, models

from agent.lineage import chain_parents

BATCH = 500


def link_parents(apps, schema_editor):
    Message = apps.get_model("agent", "Message")
    conversations = Message.objects.order_by().values_list("conversation_id", flat=True).distinct()
    for conversation_id in list(conversations):
        rows = list(
            Message.objects.filter(conversation_id=conversation_id)
            .order_by("id")
            .values_list("id", "replaced_at")
        )
        linked = [
            Message(pk=pk, parent_id=parent)
            for pk, parent in chain_parents(rows).items()
            if parent is not None
        ]
        Message.objects.bulk_update(linked, ["parent"], batch_size=BATCH)


class Migration(migrations.Migration):
    dependencies = [
        ("agent", "0006_conversation_origin_api"),
    ]

    operations = [
        migrations.AddField(
            model_name="message",
            name="parent",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="children",
                to="agent.message",
            ),
        ),
        # Back: the column goes, and with it the links (the chain is rebuilt on the way up).
        migrations.RunPython(link_parents, migrations.RunPython.noop, elidable=False),
    ]
