"""OwnerSettings.calendar_feed_details: task details and reminder texts in the feed, off by default."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("owner", "0004_settings_version"),
    ]

    operations = [
        migrations.AddField(
            model_name="ownersettings",
            name="calendar_feed_details",
            field=models.BooleanField(default=False),
        ),
    ]
