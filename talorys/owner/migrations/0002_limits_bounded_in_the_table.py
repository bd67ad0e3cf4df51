"""The limits' bounds, once only in the settings service, are the fields' validators and the
table's constraints (talorys/owner/models.py, SETTINGS_BOUNDS)."""

import django.core.validators
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("owner", "0001_initial"),
    ]

    operations = [
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
