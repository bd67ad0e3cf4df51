"""The limits' bounds, once only in the settings service, are the fields' validators and the
table's constraints (talorys/owner/models.py, SETTINGS_BOUNDS).

A value outside them (only a hand-edited backup could have stored one) is brought to the nearest
bound first, so the constraints can be added to an existing database."""

import django.core.validators
from django.db import migrations, models

# SETTINGS_BOUNDS as this migration knows them (a migration keeps its own copy).
BOUNDS = {
    "daily_ai_requests": (0, 1_000_000),
    "daily_scheduled_ai_requests": (0, 1_000_000),
    "daily_embedding_requests": (0, 10_000_000),
    "max_steps_per_turn": (1, 50),
    "max_tool_calls_per_turn": (0, 200),
    "max_output_tokens": (16, 1_000_000),
    "max_context_tokens": (256, 10_000_000),
}


def within_bounds(apps, schema_editor) -> None:
    rows = apps.get_model("owner", "OwnerSettings").objects.using(schema_editor.connection.alias)
    for name, (low, high) in BOUNDS.items():
        rows.filter(**{f"{name}__lt": low}).update(**{name: low})
        rows.filter(**{f"{name}__gt": high}).update(**{name: high})


class Migration(migrations.Migration):
    dependencies = [
        ("owner", "0001_initial"),
    ]

    operations = [
        migrations.RunPython(within_bounds, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="ownersettings",
            name="daily_ai_requests",
            field=models.PositiveIntegerField(
                default=200,
                validators=[
                    django.core.validators.MinValueValidator(0),
                    django.core.validators.MaxValueValidator(1000000),
                ],
            ),
        ),
        migrations.AlterField(
            model_name="ownersettings",
            name="daily_embedding_requests",
            field=models.PositiveIntegerField(
                default=1000,
                validators=[
                    django.core.validators.MinValueValidator(0),
                    django.core.validators.MaxValueValidator(10000000),
                ],
            ),
        ),
        migrations.AlterField(
            model_name="ownersettings",
            name="daily_scheduled_ai_requests",
            field=models.PositiveIntegerField(
                default=50,
                validators=[
                    django.core.validators.MinValueValidator(0),
                    django.core.validators.MaxValueValidator(1000000),
                ],
            ),
        ),
        migrations.AlterField(
            model_name="ownersettings",
            name="max_context_tokens",
            field=models.PositiveIntegerField(
                default=8000,
                validators=[
                    django.core.validators.MinValueValidator(256),
                    django.core.validators.MaxValueValidator(10000000),
                ],
            ),
        ),
        migrations.AlterField(
            model_name="ownersettings",
            name="max_output_tokens",
            field=models.PositiveIntegerField(
                default=1024,
                validators=[
                    django.core.validators.MinValueValidator(16),
                    django.core.validators.MaxValueValidator(1000000),
                ],
            ),
        ),
        migrations.AlterField(
            model_name="ownersettings",
            name="max_steps_per_turn",
            field=models.PositiveSmallIntegerField(
                default=6,
                validators=[
                    django.core.validators.MinValueValidator(1),
                    django.core.validators.MaxValueValidator(50),
                ],
            ),
        ),
        migrations.AlterField(
            model_name="ownersettings",
            name="max_tool_calls_per_turn",
            field=models.PositiveSmallIntegerField(
                default=12,
                validators=[
                    django.core.validators.MinValueValidator(0),
                    django.core.validators.MaxValueValidator(200),
                ],
            ),
        ),
        migrations.AddConstraint(
            model_name="ownersettings",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    ("daily_ai_requests__gte", 0), ("daily_ai_requests__lte", 1000000)
                ),
                name="owner_settings_daily_ai_requests_bounds",
            ),
        ),
        migrations.AddConstraint(
            model_name="ownersettings",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    ("daily_scheduled_ai_requests__gte", 0),
                    ("daily_scheduled_ai_requests__lte", 1000000),
                ),
                name="owner_settings_daily_scheduled_ai_requests_bounds",
            ),
        ),
        migrations.AddConstraint(
            model_name="ownersettings",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    ("daily_embedding_requests__gte", 0),
                    ("daily_embedding_requests__lte", 10000000),
                ),
                name="owner_settings_daily_embedding_requests_bounds",
            ),
        ),
        migrations.AddConstraint(
            model_name="ownersettings",
            constraint=models.CheckConstraint(
                condition=models.Q(("max_steps_per_turn__gte", 1), ("max_steps_per_turn__lte", 50)),
                name="owner_settings_max_steps_per_turn_bounds",
            ),
        ),
        migrations.AddConstraint(
            model_name="ownersettings",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    ("max_tool_calls_per_turn__gte", 0), ("max_tool_calls_per_turn__lte", 200)
                ),
                name="owner_settings_max_tool_calls_per_turn_bounds",
            ),
        ),
        migrations.AddConstraint(
            model_name="ownersettings",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    ("max_output_tokens__gte", 16), ("max_output_tokens__lte", 1000000)
                ),
                name="owner_settings_max_output_tokens_bounds",
            ),
        ),
        migrations.AddConstraint(
            model_name="ownersettings",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    ("max_context_tokens__gte", 256), ("max_context_tokens__lte", 10000000)
                ),
                name="owner_settings_max_context_tokens_bounds",
            ),
        ),
    ]
