"""The owner's data moves here from the talorys app, keeping its tables (talorys_<model>)."""

import django.db.models.deletion
from django.db import migrations, models

import talorys.owner.models


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("talorys", "0004_change_log"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            # The tables exist already (made by the talorys app): only the state moves.
            state_operations=[
                migrations.CreateModel(
                    name="Note",
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
                        ("title", models.CharField(max_length=300)),
                        ("content", models.TextField(blank=True, default="")),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        ("updated_at", models.DateTimeField(auto_now=True)),
                        ("deleted_at", models.DateTimeField(blank=True, null=True)),
                    ],
                    options={
                        "db_table": "talorys_note",
                        "ordering": ["-updated_at", "id"],
                    },
                ),
                migrations.CreateModel(
                    name="Project",
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
                        ("name", models.CharField(max_length=200)),
                        ("description", models.TextField(blank=True, default="")),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        ("updated_at", models.DateTimeField(auto_now=True)),
                        ("deleted_at", models.DateTimeField(blank=True, null=True)),
                    ],
                    options={
                        "db_table": "talorys_project",
                        "ordering": ["name", "id"],
                    },
                ),
                migrations.CreateModel(
                    name="UsageDay",
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
                        ("day", models.DateField(unique=True)),
                        ("ai_requests", models.PositiveIntegerField(default=0)),
                        ("scheduled_ai_requests", models.PositiveIntegerField(default=0)),
                        ("embedding_requests", models.PositiveIntegerField(default=0)),
                        ("input_tokens", models.PositiveBigIntegerField(default=0)),
                        ("output_tokens", models.PositiveBigIntegerField(default=0)),
                    ],
                    options={
                        "db_table": "talorys_usageday",
                        "ordering": ["-day"],
                    },
                ),
                migrations.CreateModel(
                    name="OwnerSettings",
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
                        (
                            "time_zone",
                            models.CharField(
                                default="UTC",
                                max_length=64,
                                validators=[talorys.owner.models.validate_time_zone],
                            ),
                        ),
                        (
                            "model_base_url",
                            models.CharField(blank=True, default="", max_length=500),
                        ),
                        ("model_name", models.CharField(blank=True, default="", max_length=200)),
                        ("model_api_key", models.CharField(blank=True, default="", max_length=500)),
                        ("daily_ai_requests", models.PositiveIntegerField(default=200)),
                        ("daily_scheduled_ai_requests", models.PositiveIntegerField(default=50)),
                        ("daily_embedding_requests", models.PositiveIntegerField(default=1000)),
                        ("max_steps_per_turn", models.PositiveSmallIntegerField(default=6)),
                        ("max_tool_calls_per_turn", models.PositiveSmallIntegerField(default=12)),
                        ("max_output_tokens", models.PositiveIntegerField(default=1024)),
                        ("max_context_tokens", models.PositiveIntegerField(default=8000)),
                        ("semantic_enabled", models.BooleanField(default=False)),
                        (
                            "embeddings_base_url",
                            models.CharField(blank=True, default="", max_length=500),
                        ),
                        (
                            "embeddings_model",
                            models.CharField(blank=True, default="", max_length=200),
                        ),
                        (
                            "embeddings_api_key",
                            models.CharField(blank=True, default="", max_length=500),
                        ),
                        ("quiet_hours_start", models.TimeField(blank=True, null=True)),
                        ("quiet_hours_end", models.TimeField(blank=True, null=True)),
                        ("updated_at", models.DateTimeField(auto_now=True)),
                    ],
                    options={
                        "verbose_name_plural": "owner settings",
                        "db_table": "talorys_ownersettings",
                        "constraints": [
                            models.CheckConstraint(
                                condition=models.Q(("pk", 1)), name="owner_settings_single_row"
                            )
                        ],
                    },
                ),
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
                                to="workspace.change",
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
                        ],
                    },
                ),
                migrations.CreateModel(
                    name="Task",
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
                        ("title", models.CharField(max_length=500)),
                        ("details", models.TextField(blank=True, default="")),
                        (
                            "status",
                            models.CharField(
                                choices=[("open", "Open"), ("done", "Done")],
                                default="open",
                                max_length=8,
                            ),
                        ),
                        (
                            "priority",
                            models.PositiveSmallIntegerField(
                                choices=[(1, "Low"), (2, "Normal"), (3, "High")], default=2
                            ),
                        ),
                        ("due_at", models.DateTimeField(blank=True, null=True)),
                        ("completed_at", models.DateTimeField(blank=True, null=True)),
                        ("created_at", models.DateTimeField(auto_now_add=True)),
                        ("updated_at", models.DateTimeField(auto_now=True)),
                        ("deleted_at", models.DateTimeField(blank=True, null=True)),
                        (
                            "project",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.SET_NULL,
                                related_name="tasks",
                                to="workspace.project",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "talorys_task",
                        "ordering": ["status", "due_at", "-priority", "id"],
                        "indexes": [
                            models.Index(
                                fields=["status", "due_at"], name="talorys_tas_status_61e4cd_idx"
                            )
                        ],
                        "constraints": [
                            models.CheckConstraint(
                                condition=models.Q(
                                    models.Q(("completed_at__isnull", False), ("status", "done")),
                                    models.Q(("completed_at__isnull", True), ("status", "open")),
                                    _connector="OR",
                                ),
                                name="task_completed_at_matches_status",
                            )
                        ],
                    },
                ),
            ],
            database_operations=[],
        ),
    ]
