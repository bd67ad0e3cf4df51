"""The owner is the install's one superuser (talorys/accounts/owner.py): a unique index on the
user table's superuser flag, over superusers only, so no way of making a second one (the admin,
createsuperuser, the ORM) gets past the database.

An install upgraded from before this rule may have more than one: the owner is kept (the first
active superuser, the account talorys_setup made, as approvals/push_decision.py finds it) and the
others lose the superuser and staff flags. They could use the app as the owner until now; from
here on they are ordinary accounts, refused everywhere like any other.
"""

from django.conf import settings
from django.db import migrations

INDEX = "accounts_user_one_superuser_the_owner"


def _demote_all_but_the_owner(apps, schema_editor):
    user_model = apps.get_model(settings.AUTH_USER_MODEL)
    superusers = user_model.objects.using(schema_editor.connection.alias).filter(is_superuser=True)
    owner = superusers.order_by("-is_active", "pk").first()
    if owner is not None:
        superusers.exclude(pk=owner.pk).update(is_superuser=False, is_staff=False)


def _table(apps, schema_editor) -> str:
    return schema_editor.quote_name(apps.get_model(settings.AUTH_USER_MODEL)._meta.db_table)


def _index_create(apps, schema_editor):
    # A partial index (PostgreSQL and SQLite both have them): only superusers' rows are in it.
    table = _table(apps, schema_editor)
    schema_editor.execute(
        f"CREATE UNIQUE INDEX {INDEX} ON {table} (is_superuser) WHERE is_superuser"
    )


def _index_drop(apps, schema_editor):
    schema_editor.execute(f"DROP INDEX {INDEX}")


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0001_initial"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RunPython(_demote_all_but_the_owner, migrations.RunPython.noop),
        migrations.RunPython(_index_create, _index_drop),
    ]
