"""Semantic recall is on by default: every install now has a local embedder (numpy MiniLM).

An existing owner's row is switched on too unless an embeddings server is configured: before
this, recall had no embedder without a server or the optional extra, so "off" was the default
that nobody chose. An owner who configured a server and left it off keeps it off.
"""

from django.db import migrations, models


def switch_on(apps, schema_editor):
    OwnerSettings = apps.get_model("workspace", "OwnerSettings")
    OwnerSettings.objects.filter(semantic_enabled=False, embeddings_base_url="").update(
        semantic_enabled=True
    )


class Migration(migrations.Migration):
    dependencies = [
        ("workspace", "0005_task_live_list_order"),
    ]

    operations = [
        migrations.AlterField(
            model_name="ownersettings",
            name="semantic_enabled",
            field=models.BooleanField(default=True),
        ),
        migrations.RunPython(switch_on, migrations.RunPython.noop),
    ]
