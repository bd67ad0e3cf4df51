"""The models of this app moved to talorys.accounts, talorys.workspace and talorys.notifications.

Their tables keep their names (each model sets db_table), so nothing changes in the database:
the models leave this app's state here, after the new apps took them into theirs. Their content
types follow them (the admin's log entries and the permissions point at content types), so an
existing install keeps its admin history and permissions.
"""

from django.db import migrations

MOVED = {
    "accounts": ["apitoken"],
    "workspace": ["project", "task", "note", "ownersettings", "usageday", "change"],
    "notifications": ["notification", "pushsubscription", "pushdelivery"],
}


def _relabel(apps, schema_editor, *, forward: bool) -> None:
    content_type = apps.get_model("contenttypes", "ContentType")
    rows = content_type.objects.using(schema_editor.connection.alias)
    for label, models in MOVED.items():
        old, new = ("talorys", label) if forward else (label, "talorys")
        for model in models:
            # A row under the new label can only exist if it was made by hand: keep it.
            if not rows.filter(app_label=new, model=model).exists():
                rows.filter(app_label=old, model=model).update(app_label=new)


def relabel_content_types(apps, schema_editor) -> None:
    _relabel(apps, schema_editor, forward=True)


def restore_content_types(apps, schema_editor) -> None:
    _relabel(apps, schema_editor, forward=False)


class Migration(migrations.Migration):
    dependencies = [
        ("contenttypes", "0002_remove_content_type_name"),
        ("talorys", "0004_change_log"),
        ("accounts", "0001_initial"),
        ("workspace", "0001_initial"),
        ("notifications", "0001_initial"),
        # Its foreign key must point at notifications.Notification before talorys' one leaves.
        ("automations", "0003_notification_moved"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RemoveField(model_name="apitoken", name="user"),
                migrations.RemoveField(model_name="change", name="reverts"),
                migrations.RemoveField(model_name="pushdelivery", name="notification"),
                migrations.RemoveField(model_name="pushdelivery", name="subscription"),
                migrations.RemoveField(model_name="task", name="project"),
                migrations.DeleteModel(name="ApiToken"),
                migrations.DeleteModel(name="Change"),
                migrations.DeleteModel(name="Note"),
                migrations.DeleteModel(name="Notification"),
                migrations.DeleteModel(name="OwnerSettings"),
                migrations.DeleteModel(name="Project"),
                migrations.DeleteModel(name="PushDelivery"),
                migrations.DeleteModel(name="PushSubscription"),
                migrations.DeleteModel(name="Task"),
                migrations.DeleteModel(name="UsageDay"),
            ],
            database_operations=[],
        ),
        migrations.RunPython(relabel_content_types, restore_content_types),
    ]
