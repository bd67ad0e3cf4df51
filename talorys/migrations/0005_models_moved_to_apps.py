"""The models of this app moved to talorys.accounts, talorys.workspace and talorys.notifications.

Their tables keep their names (each model sets db_table), so nothing changes in the database:
the models leave this app's state here, after the new apps took them into theirs. Their content
types follow them (the admin's log entries and the permissions point at content types), so an
existing install keeps its admin history and permissions.
"""

from django.db import migrations

from talorys.lib.migrations import relabel_content_types

MOVED = {
    "accounts": ["apitoken"],
    "workspace": ["project", "task", "note", "ownersettings", "usageday", "change"],
    "notifications": ["notification", "pushsubscription", "pushdelivery"],
}


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
        *(
            migrations.RunPython(*relabel_content_types("talorys", label, models))
            for label, models in MOVED.items()
        ),
    ]
