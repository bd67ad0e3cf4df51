"""The earlier messages a /v1 client sends of a chat Talorys does not hold are kept as
``client``, no longer as if imported from a backup; those kept before are relabelled."""

from django.db import migrations, models


def relabel_client_history(apps, schema_editor):
    """The imported messages of ``api`` conversations are all a /v1 client's history: only
    /v1 (agent/completions/history.py) made them there."""
    Message = apps.get_model("agent", "Message")
    Message.objects.filter(origin="import", conversation__origin="api").update(origin="client")


def label_as_imported(apps, schema_editor):
    Message = apps.get_model("agent", "Message")
    Message.objects.filter(origin="client").update(origin="import")


class Migration(migrations.Migration):
    dependencies = [
        ("agent", "0008_conversation_api_token"),
    ]

    operations = [
        migrations.AlterField(
            model_name="conversation",
            name="origin",
            field=models.CharField(
                choices=[
                    ("live", "Live"),
                    ("import", "Import"),
                    ("api", "Api"),
                    ("client", "Client"),
                ],
                default="live",
                max_length=8,
            ),
        ),
        migrations.AlterField(
            model_name="message",
            name="origin",
            field=models.CharField(
                choices=[
                    ("live", "Live"),
                    ("import", "Import"),
                    ("api", "Api"),
                    ("client", "Client"),
                ],
                default="live",
                max_length=8,
            ),
        ),
        migrations.RunPython(relabel_client_history, label_as_imported),
    ]
