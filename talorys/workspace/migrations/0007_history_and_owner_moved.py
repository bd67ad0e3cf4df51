"""The change log, the owner's settings and usage leave the workspace's state: talorys.history
and talorys.owner took them, tables and content types included."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("workspace", "0006_semantic_recall_on_by_default"),
        ("history", "0001_initial"),
        ("owner", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            # The tables exist already, under the names they keep (db_table): only the
            # state moves.
            state_operations=[
                migrations.RemoveField(
                    model_name="change",
                    name="reverts",
                ),
                migrations.DeleteModel(
                    name="OwnerSettings",
                ),
                migrations.DeleteModel(
                    name="UsageDay",
                ),
                migrations.DeleteModel(
                    name="Change",
                ),
            ],
            database_operations=[],
        ),
    ]
