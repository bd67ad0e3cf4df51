"""The owner's settings and usage move here from the workspace, keeping their tables
(talorys_ownersettings, talorys_usageday) and their content types."""

from django.db import migrations, models

import talorys.owner.models
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
                        ("time_zone_confirmed", models.BooleanField(default=False)),
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
                        ("semantic_enabled", models.BooleanField(default=True)),
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
            ],
            database_operations=[],
        ),
        migrations.RunPython(
            *relabel_content_types("workspace", "owner", ["ownersettings", "usageday"])
        ),
    ]
