"""The run's notification now lives in talorys.notifications (same table): state only."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("automations", "0002_run_lease"),
        ("notifications", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            # The tables exist already (made by the talorys app): only the state moves.
            state_operations=[
                migrations.AlterField(
                    model_name="automationrun",
                    name="notification",
                    field=models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to="notifications.notification",
                    ),
                ),
            ],
            database_operations=[],
        ),
    ]
