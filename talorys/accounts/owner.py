"""Who the owner is: the one account this single-person install serves.

The owner is the install's one superuser. talorys_setup makes it (services.owner_create), and no
second superuser can be made: the database holds the rule (a unique index on the superuser flag,
migration 0002_one_superuser_the_owner), and every way of making one refuses first with
``one_owner_message``: owner_create, the admin's user form (admin.py), ``createsuperuser``
(management/commands/). The data has no per-user column, so any account let in would see and
change the owner's whole workspace; every other account is nobody here.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser


def is_the_owner(user: AbstractBaseUser | AnonymousUser) -> bool:
    """Whether an account is the owner: the active superuser (there is at most one).

    A superuser can already read and change every row through /admin/, so letting the superuser
    in gives nobody more than they have. Any other account (one the operator added in the admin,
    staff or not) is refused: checked at login, on every request's session (the middleware), on
    tokens and on sockets.
    """
    return bool(user.is_active and getattr(user, "is_superuser", False))


def the_owner(*, using: str = "default") -> AbstractBaseUser | None:
    """The owner's account, active or not, if it has been made."""
    return get_user_model().objects.using(using).filter(is_superuser=True).first()


def one_owner_message(owner: AbstractBaseUser) -> str:
    """Why a second superuser is refused, wherever someone tries to make one."""
    return (
        f"Talorys has one owner, the account {owner.get_username()!r}, and only the owner may be "
        "a superuser: the data here is one person's, so another superuser would see and change "
        "all of it. Other accounts cannot sign in to the app, the API or the admin."
    )
