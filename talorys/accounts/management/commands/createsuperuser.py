"""Django's createsuperuser, refused once the owner exists: Talorys has one owner, the install's
one superuser (talorys/accounts/owner.py). It makes the owner on an empty install, as
talorys_setup does; the database would refuse a second one anyway, without saying why."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.management.commands import createsuperuser
from django.core.management.base import CommandError

from talorys.accounts.owner import one_owner_message, the_owner


class Command(createsuperuser.Command):
    help = (
        "Make the owner, the install's one superuser (talorys_setup does it too); refused once "
        "the owner exists."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        owner = the_owner(using=options["database"])
        if owner is not None:
            raise CommandError(one_owner_message(owner))
        super().handle(*args, **options)
