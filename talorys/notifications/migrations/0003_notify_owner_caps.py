"""Notification.by_tool, and its index: what the notify_owner tool sent, counted against its caps."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("notifications", "0002_channels"),
    ]

    operations = [
        migrations.AddField(
            model_name="notification",
            name="by_tool",
            field=models.BooleanField(default=False),
        ),
        migrations.AddIndex(
            model_name="notification",
            index=models.Index(
                condition=models.Q(("by_tool", True)),
                fields=["source", "-created_at"],
                name="notification_by_tool",
            ),
        ),
    ]
