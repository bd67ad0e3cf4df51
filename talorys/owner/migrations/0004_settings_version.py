"""OwnerSettings.version: changed by every write, so a process may keep the row in memory."""

from django.db import migrations, models

import talorys.owner.models


class Migration(migrations.Migration):
    dependencies = [("owner", "0003_calendar_secret")]

    operations = [
        migrations.AddField(
            model_name="ownersettings",
            name="version",
            field=models.BigIntegerField(default=talorys.owner.models.new_settings_version),
        ),
    ]
