"""A /v1 conversation remembers the token whose client started it: a token's new
conversations are counted per day (agent/completions/admission.py)."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0001_initial"),
        ("agent", "0007_message_parent"),
    ]

    operations = [
        migrations.AddField(
            model_name="conversation",
            name="api_token",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to="accounts.apitoken",
            ),
        ),
    ]
