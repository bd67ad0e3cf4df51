"""Make sure the owner account exists (interactively, or from the environment with --noinput)."""

from __future__ import annotations

import getpass
import secrets

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from talorys.accounts.services import owner_create, owner_password_set
from talorys.lib.env import env_str
from talorys.lib.errors import ValidationFailed
from talorys.notifications.push import vapid_key_ensure
from talorys.workspace.services import owner_settings_get


class Command(BaseCommand):
    help = (
        "Create the owner account (and owner settings) if missing. The password comes from "
        "TALORYS_OWNER_PASSWORD, the prompt, or is generated and printed once."
    )

    def add_arguments(self, parser):
        parser.add_argument("--noinput", "--no-input", action="store_true", dest="noinput")
        parser.add_argument(
            "--reset-password",
            action="store_true",
            help="Set a new owner password and end every session of the owner.",
        )

    def handle(self, *args, noinput: bool, reset_password: bool, **options):
        owner_settings_get()
        if vapid_key_ensure() is not None:  # None: the key comes from TALORYS_VAPID_PRIVATE_KEY
            self.stdout.write("Web Push (VAPID) key ready in the data directory.")
        username = env_str("TALORYS_OWNER_USERNAME", "owner")
        user = get_user_model().objects.filter(username=username).first()
        if user is not None and not reset_password:
            self.stdout.write(f"Owner account {username!r} exists.")
            return
        password = env_str("TALORYS_OWNER_PASSWORD")
        if not password and not noinput:
            password = getpass.getpass(f"Password for {username!r} (empty to generate one): ")
        generated = not password
        if generated:
            password = secrets.token_urlsafe(15)
        try:
            if user is None:
                owner_create(username=username, password=password)
                done = f"Created the owner account {username!r}."
            else:
                owner_password_set(user=user, password=password)
                done = f"New password set for {username!r}; every session of it has ended."
        except ValidationFailed as exc:
            raise CommandError(f"Password refused: {exc.message}") from exc
        self.stdout.write(self.style.SUCCESS(done))
        if generated:
            self.stdout.write(self.style.WARNING(f"OWNER PASSWORD (shown once): {password}"))
