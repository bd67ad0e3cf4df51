"""Make sure the owner account exists (interactively, or from the environment with --noinput)."""

from __future__ import annotations

import getpass
import secrets

from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from talorys.env import env_str
from talorys.services import owner_settings_get


class Command(BaseCommand):
    help = "Create the owner account (and owner settings) if missing."

    def add_arguments(self, parser):
        parser.add_argument("--noinput", "--no-input", action="store_true", dest="noinput")
        parser.add_argument(
            "--reset-password", action="store_true", help="Set a new owner password."
        )

    def handle(self, *args, noinput: bool, reset_password: bool, **options):
        owner_settings_get()
        User = get_user_model()
        username = env_str("TALORYS_OWNER_USERNAME", "owner")
        user = User.objects.filter(username=username).first()
        if user is not None and not reset_password:
            self.stdout.write(f"Owner account {username!r} exists.")
            return
        password = env_str("TALORYS_OWNER_PASSWORD")
        generated = False
        if not password and not noinput:
            password = getpass.getpass(f"Password for {username!r} (empty to generate one): ")
        if not password:
            password = secrets.token_urlsafe(15)
            generated = True
        if not generated:
            try:
                validate_password(password)
            except ValidationError as exc:
                raise CommandError(" ".join(exc.messages)) from exc
        if user is None:
            # The owner is also the operator of this single-person install, so may use /admin/.
            user = User.objects.create_superuser(username=username, password=password, email="")
            self.stdout.write(self.style.SUCCESS(f"Created the owner account {username!r}."))
        else:
            user.set_password(password)
            user.save(update_fields=["password"])
            self.stdout.write(
                self.style.SUCCESS(f"New password set for {username!r}; other sessions ended.")
            )
        if generated:
            self.stdout.write(self.style.WARNING(f"OWNER PASSWORD (shown once): {password}"))
