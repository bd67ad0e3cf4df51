"""Talorys has one owner, the install's one superuser (talorys/accounts/owner.py): a second cannot
be made by the ORM, createsuperuser, talorys_setup's owner_create or the admin, and the admin says
why; an install upgraded with two keeps the owner and demotes the other."""

from __future__ import annotations

import html
import re

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import IntegrityError, connection, transaction
from django.test import Client

from talorys.accounts.services import owner_create
from talorys.lib.errors import ValidationFailed
from tests.conftest import OWNER_PASSWORD

User = get_user_model()
ONE_OWNER = "Talorys has one owner, the account 'owner'"


def text(response) -> str:
    return html.unescape(response.content.decode())


def superusers() -> list[str]:
    return list(User.objects.filter(is_superuser=True).values_list("username", flat=True))


def test_the_database_refuses_a_second_superuser(owner):
    with pytest.raises(IntegrityError), transaction.atomic():
        User.objects.create_superuser(username="second", password=OWNER_PASSWORD)
    helper = User.objects.create_user(username="helper", password=OWNER_PASSWORD)
    helper.is_superuser = True
    with pytest.raises(IntegrityError), transaction.atomic():
        helper.save()
    assert superusers() == ["owner"]


def test_createsuperuser_refuses_a_second_owner_and_says_why(owner, monkeypatch):
    monkeypatch.setenv("DJANGO_SUPERUSER_PASSWORD", OWNER_PASSWORD)
    with pytest.raises(CommandError, match=ONE_OWNER):
        call_command("createsuperuser", "--noinput", username="second", email="")
    assert list(User.objects.values_list("username", flat=True)) == ["owner"]


def test_createsuperuser_makes_the_owner_of_an_empty_install(db, monkeypatch):
    monkeypatch.setenv("DJANGO_SUPERUSER_PASSWORD", OWNER_PASSWORD)
    call_command("createsuperuser", "--noinput", username="ada", email="", verbosity=0)
    assert superusers() == ["ada"]


def test_owner_create_refuses_once_the_owner_exists(owner):
    with pytest.raises(ValidationFailed, match=ONE_OWNER):
        owner_create(username="ada", password="a long enough password 7")
    assert superusers() == ["owner"]


@pytest.fixture
def operator(owner) -> Client:
    client = Client()
    client.force_login(owner)
    return client


def test_the_admins_add_form_refuses_a_second_superuser_and_says_why(operator):
    form = {"username": "second", "usable_password": "false", "is_superuser": "on"}

    response = operator.post("/admin/auth/user/add/", form)

    assert response.status_code == 200  # the form again, with the reason on the field
    assert ONE_OWNER in text(response)
    assert not User.objects.filter(username="second").exists()
    # An ordinary account may be added; the page says it is nobody to Talorys.
    assert "cannot sign in to the app" in text(operator.get("/admin/auth/user/add/"))
    del form["is_superuser"]
    assert operator.post("/admin/auth/user/add/", form).status_code == 302
    assert superusers() == ["owner"]


def test_the_admins_change_form_refuses_to_make_an_account_a_superuser(operator):
    helper = User.objects.create_user(username="helper", password=OWNER_PASSWORD)
    form = {
        "username": "helper",
        "is_active": "on",
        "is_staff": "on",
        "is_superuser": "on",
        "date_joined_0": "2026-12-01",
        "date_joined_1": "10:00:00",
    }

    response = operator.post(f"/admin/auth/user/{helper.pk}/change/", form)

    assert response.status_code == 200
    assert ONE_OWNER in text(response)
    helper.refresh_from_db()
    assert (helper.is_superuser, helper.is_staff) == (False, False)
    # The owner keeps being the owner when their own account is saved.
    owner = User.objects.get(username="owner")
    mine = {**form, "username": "owner"}
    assert operator.post(f"/admin/auth/user/{owner.pk}/change/", mine).status_code == 302
    assert superusers() == ["owner"]


def test_the_admins_user_list_shows_which_account_is_the_owner(operator):
    User.objects.create_user(username="helper", password=OWNER_PASSWORD)

    page = text(operator.get("/admin/auth/user/"))

    assert "The owner" in page
    rows = re.findall(
        r'field-username"><a [^>]*>(\w+)</a>.*?field-owner"><img [^>]*alt="(\w+)"', page
    )
    assert sorted(rows) == [("helper", "False"), ("owner", "True")]


@pytest.mark.django_db(transaction=True)
def test_an_install_with_two_superusers_keeps_the_owner_and_demotes_the_other():
    from django.db.migrations.executor import MigrationExecutor

    before = [("accounts", "0001_initial")]
    executor = MigrationExecutor(connection)
    executor.migrate(before)
    old = executor.loader.project_state(before).apps.get_model("auth", "User")
    flags = {"is_superuser": True, "is_staff": True}
    old.objects.create(username="gone", is_active=False, **flags)
    old.objects.create(username="owner", **flags)
    old.objects.create(username="second", **flags)

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())

    rows = User.objects.order_by("pk").values_list("username", "is_superuser", "is_staff")
    assert list(rows) == [("gone", False, False), ("owner", True, True), ("second", False, False)]
