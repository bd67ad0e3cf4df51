from django.db import migrations, models


def confirm_chosen_zones(apps, schema_editor):
    # An owner who already moved off the default chose a zone: the first run leaves it alone.
    OwnerSettings = apps.get_model("workspace", "OwnerSettings")
    OwnerSettings.objects.exclude(time_zone="UTC").update(time_zone_confirmed=True)


class Migration(migrations.Migration):
    dependencies = [
        ("workspace", "0002_change_created_at_index"),
    ]

    operations = [
        migrations.AddField(
            model_name="ownersettings",
            name="time_zone_confirmed",
            field=models.BooleanField(default=False),
        ),
        migrations.RunPython(confirm_chosen_zones, migrations.RunPython.noop),
    ]
