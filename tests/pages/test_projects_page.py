"""/projects/: the list with task counts (one query), create, rename and describe, delete to
the bin (its tasks stay, without a project), and a link to the project's tasks."""

from __future__ import annotations

import pytest

from talorys.owner.selectors import owner_settings_get
from talorys.workspace import services
from talorys.workspace.models import Project, Task


@pytest.fixture
def signed_in(signed_in):
    owner_settings_get()  # the row exists, as it does after the first page
    return signed_in


def flash(response) -> str:
    return " ".join(str(m) for m in response.context["messages"])


def test_the_list_counts_each_projects_live_tasks(signed_in):
    work = services.project_create(name="Work", description="The day job")
    services.project_create(name="Garden")
    for title in ("Report", "Slides", "Expenses"):
        services.task_create(title=title, project_id=work.pk)
    services.task_complete(task_id=Task.objects.get(title="Report").pk)
    services.task_delete(task_id=Task.objects.get(title="Slides").pk)  # the bin is not counted

    page = signed_in.get("/projects/").text
    assert f'<a class="project-name" href="/tasks/?project={work.pk}">Work</a>' in page
    assert "1 open · 2 in all" in page
    assert "0 open · 0 in all" in page
    assert "The day job" in page


def test_create_and_bad_names_change_nothing(signed_in):
    response = signed_in.post(
        "/projects/", {"name": "  Garden ", "description": "Veg"}, follow=True
    )
    assert "Project “Garden” added." in flash(response)
    assert list(Project.objects.values_list("name", "description")) == [("Garden", "Veg")]

    for name, message in [("  ", "Name is empty: fill it in."), ("x" * 201, "longer than 200")]:
        response = signed_in.post("/projects/", {"name": name}, follow=True)
        assert message in flash(response)
    assert Project.objects.count() == 1


def test_rename_and_describe(signed_in):
    project = services.project_create(name="Wrok")
    assert 'value="Wrok"' in signed_in.get(f"/projects/{project.pk}/").text
    response = signed_in.post(
        f"/projects/{project.pk}/", {"name": "Work", "description": "Day job"}, follow=True
    )
    assert "Project saved." in flash(response)
    project.refresh_from_db()
    assert (project.name, project.description) == ("Work", "Day job")

    response = signed_in.post(f"/projects/{project.pk}/", {"name": " "}, follow=True)
    assert "Name is empty: fill it in." in flash(response)
    project.refresh_from_db()
    assert project.name == "Work"


def test_delete_keeps_the_tasks_and_says_so(signed_in):
    project = services.project_create(name="Move house")
    for title in ("Boxes", "Van"):
        services.task_create(title=title, project_id=project.pk)
    page = signed_in.get("/projects/").text
    assert "Its 2 tasks stay, without a project." in page  # the confirmation says it first

    response = signed_in.post(f"/projects/{project.pk}/delete/", follow=True)
    project.refresh_from_db()
    assert project.deleted_at is not None
    assert list(Task.objects.live().values_list("project", flat=True)) == [None, None]
    text = response.content.decode()
    assert "Project “Move house” moved to the bin; its 2 tasks stay, without a project." in text
    assert '<a href="/bin/">Open the bin</a>' in text
    assert 'class="project-name"' not in text  # no longer listed

    again = signed_in.post(f"/projects/{project.pk}/delete/", follow=True)
    assert f"Project {project.pk} does not exist." in flash(again)
    assert signed_in.get(f"/projects/{project.pk}/").status_code == 404


def test_a_name_with_markup_is_text(signed_in):
    services.project_create(name="<script>alert(1)</script>")
    page = signed_in.get("/projects/").text
    assert "<script>alert(1)" not in page


def test_many_projects_in_one_counting_query(signed_in, django_assert_max_num_queries):
    projects = Project.objects.bulk_create(Project(name=f"Project {n:03}") for n in range(120))
    Task.objects.bulk_create(
        Task(title=f"Task {n}", project=projects[n % 120]) for n in range(10_000)
    )
    # Session, user, owner settings, the count, the page with its task counts; and the
    # session's save (its idle clock) in a savepoint.
    with django_assert_max_num_queries(8):
        response = signed_in.get("/projects/?page=2")
    assert response.text.count('class="project-name"') == 50
    assert "Page 2 of 3 · 120 in all" in response.text
    assert response.text.count("83 open · 83 in all") + response.text.count("84 open") == 50
