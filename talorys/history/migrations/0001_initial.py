"""The change log moves here from the workspace, keeping its table (talorys_change) and its
content type (the admin's log entries and permissions point at it)."""

import django.db.models.deletion
from django.db import migrations, models

from talorys.lib.migrations import relabel_content_types


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("contenttypes", "0002_remove_content_type_name"),
        # After the talorys app gave these content types to the workspace.
        ("talorys", "0005_models_moved_to_apps"),
        ("workspace", "0006_semantic_recall_on_by_default"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            # The tables exist already, under the names they keep (db_table): only the
            # state moves.
            state_operations=[
                migrations.CreateModel(
                    name="Change",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True,
                                primary_key=True,
                                serialize=False,
                                verbose_name="ID",
                            ),
                        ),
                        ("kind", models.CharField(max_length=16)),
                        ("object_id", models.BigIntegerField()),
                        (
                            "action",
                            models.CharField(
                                choices=[
                                    ("create", "Create"),
                                    ("update", "Update"),
                                    ("delete", "Delete"),
                                    ("restore", "Restore"),
                                ],
                                max_length=8,
                            ),
                        ),
                        ("title", models.CharField(blank=True, default="", max_length=200)),
                        ("before", models.JSONField(blank=True, null=True)),
                        ("after", models.JSONField(blank=True, null=True)),
                        ("detail", models.JSONField(blank=True, default=dict)),
                        ("source", models.CharField(max_length=100)),
                        ("conversation_id", models.BigIntegerField(blank=True, null=True)),
                        ("message_id", models.BigIntegerField(blank=True, null=True)),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        (
                            "reverts",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.SET_NULL,
                                related_name="reverted_by",
                                to="history.change",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "talorys_change",
                        "ordering": ["-id"],
                        "indexes": [
                            models.Index(
                                fields=["kind", "object_id", "-id"],
                                name="talorys_cha_kind_7b80d6_idx",
                            ),
                            models.Index(
                                fields=["message_id"], name="talorys_cha_message_d14bc9_idx"
                            ),
                            models.Index(
                                fields=["created_at"], name="talorys_cha_created_7b471f_idx"
                            ),
                        ],
                    },
                ),
            ],
            database_operations=[],
        ),
        migrations.RunPython(*relabel_content_types("workspace", "history", ["change"])),
    ]
