from django.db import migrations

from tests.ops import upgrade_probe


def apply(apps, schema_editor):
    if upgrade_probe.fail_with:
        raise RuntimeError(upgrade_probe.fail_with.pop())
    folder = upgrade_probe.backups_dir[0] if upgrade_probe.backups_dir else None
    upgrade_probe.backups_seen.append(
        sorted(p.name for p in folder.iterdir()) if folder and folder.is_dir() else []
    )


class Migration(migrations.Migration):
    operations = [migrations.RunPython(apply, migrations.RunPython.noop)]
