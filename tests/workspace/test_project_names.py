"""Two live projects never share a name, whatever its case: the API, the page and the model's
tool are refused alike, and nothing is created or renamed."""

from __future__ import annotations

import threading

import pytest
from django.db import connection

from talorys.lib.errors import Conflict
from talorys.workspace import services
from talorys.workspace.models import Project
from tests.workspace.test_owner_tools import call, error_code


def test_the_api_refuses_a_name_in_use_whatever_its_case(api):
    home = services.project_create(name="Home")

    response = api.post("/api/projects", {"name": "  hOME "})

    assert response.status_code == 409
    assert response.json()["error"] == {
        "code": "CONFLICT",
        "message": "A project named “Home” already exists. Choose another name, or use that "
        "project.",
        "details": {"project_id": home.pk, "name": "Home"},
    }
    assert list(Project.objects.values_list("name", flat=True)) == ["Home"]


def test_a_rename_to_a_name_in_use_is_refused_but_a_change_of_case_is_not(api):
    services.project_create(name="Home")
    garden = services.project_create(name="Garden")

    refused = api.patch(f"/api/projects/{garden.pk}", {"name": "HOME"})
    assert refused.status_code == 409
    assert Project.objects.get(pk=garden.pk).name == "Garden"

    assert api.patch(f"/api/projects/{garden.pk}", {"name": "garden"}).json()["name"] == "garden"


def test_a_binned_project_frees_its_name_and_cannot_come_back_over_a_new_one(api):
    old = services.project_create(name="Home")
    services.project_delete(project_id=old.pk)
    services.project_create(name="home")  # the bin's is not in the way

    with pytest.raises(Conflict):
        services.project_restore(project_id=old.pk)
    assert Project.objects.get(pk=old.pk).deleted_at is not None


def test_the_page_says_why_and_adds_nothing(client, owner):
    client.force_login(owner)
    services.project_create(name="Home")

    response = client.post("/projects/", {"name": "home"}, follow=True)

    assert "A project named “Home” already exists. Choose another name" in response.text
    assert Project.objects.count() == 1


def test_the_models_tool_is_refused_and_told_the_projects_id(db):
    home = services.project_create(name="Home")

    outcome = call("create_project", name="HOME")

    assert error_code(outcome) == "CONFLICT"
    message = outcome.result["error"]["message"]
    assert message.startswith("A project named “Home” already exists.")
    assert f"It is project id {home.pk}" in message
    assert Project.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_two_creates_at_once_make_one_project(needs_postgres):
    results: list[str] = []
    barrier = threading.Barrier(4)

    def create() -> None:
        barrier.wait()
        try:
            services.project_create(name="Trip")
            results.append("created")
        except Conflict:
            results.append("refused")
        finally:
            connection.close()

    threads = [threading.Thread(target=create) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)

    assert sorted(results) == ["created", "refused", "refused", "refused"]
    assert Project.objects.filter(name="Trip").count() == 1
