"""Who the owner is: the one account this single-person install serves."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser


def is_the_owner(user: AbstractBaseUser | AnonymousUser) -> bool:
    """Whether an account is the owner: an active superuser.

    talorys_setup makes the owner a superuser (services.owner_create), and a superuser can already
    read and change every row through /admin/, so letting superusers in gives nobody more than
    they have. Any other account (one the operator added in the admin, staff or not) owns nothing
    here: the data has no per-user column, so a session or token of it would get the owner's
    whole workspace. Checked at login, on every request's session (the middleware), on tokens
    and on sockets.
    """
    return bool(user.is_active and getattr(user, "is_superuser", False))
