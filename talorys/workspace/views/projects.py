"""``/projects/``: the projects with their task counts, create, rename or describe
(``/projects/<id>/``), and delete to the bin (its tasks stay, without a project)."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.html import format_html

from talorys.accounts.auth import request_actor
from talorys.lib.kept import typed
from talorys.lib.search import QUERY_MAX
from talorys.web.pages import form_text, form_version, owner_page, page_of, page_problem, run_action
from talorys.workspace import selectors, services
from talorys.workspace.models import Project


@owner_page("GET", "POST")
def project_list(request: HttpRequest) -> HttpResponse:
    if request.method == "POST":
        return run_action(
            request,
            lambda: services.project_create(
                name=form_text(request, "name"),
                description=form_text(request, "description"),
                actor=request_actor(request),
            ),
            back="/projects/",
            done=lambda project: f"Project “{project.name}” added.",
        )
    q = (request.GET.get("q") or "").strip()[:QUERY_MAX]
    projects = selectors.project_list(q=q or None, with_task_counts=True)
    return render(
        request,
        "workspace/projects.html",
        {
            "page": page_of(request, projects),
            "q": q,
            "query_max": QUERY_MAX,
            "problem": page_problem(request),
            "typed": typed(request),
            "name_max": Project.NAME_MAX,
            "description_max": Project.DESCRIPTION_MAX,
        },
    )


@owner_page("GET", "POST")
def project_detail(request: HttpRequest, project_id: int) -> HttpResponse:
    if request.method == "POST":
        changes = {
            name: form_text(request, name)
            for name in ("name", "description")
            if name in request.POST
        }
        return run_action(
            request,
            lambda: services.project_update(
                project_id=project_id,
                actor=request_actor(request),
                version=form_version(request),
                **changes,
            ),
            back=f"/projects/{project_id}/",
            done="Project saved.",
        )
    found = selectors.project_list(with_task_counts=True).filter(pk=project_id).first()
    if found is None:
        raise Http404(f"Project {project_id} does not exist.")
    return render(
        request,
        "workspace/projects_detail.html",
        {
            "project": found,
            # The project's fields, or what the owner typed into a refused save.
            "values": {"name": found.name, "description": found.description} | typed(request),
            "name_max": Project.NAME_MAX,
            "description_max": Project.DESCRIPTION_MAX,
        },
    )


def _deleted(project: Project, task_ids: list[int]) -> str:
    """Where the project went and what became of its tasks (project_delete unlinks them)."""
    if not task_ids:
        return format_html(
            'Project “{}” moved to the bin. <a href="/bin/">Open the bin</a> to restore it.',
            project.name,
        )
    return format_html(
        "Project “{}” moved to the bin; its {} stay, without a project. "
        '<a href="/bin/">Open the bin</a> to restore it with them.',
        project.name,
        f"{len(task_ids)} task{'s' if len(task_ids) != 1 else ''}",
    )


@owner_page("POST")
def project_delete(request: HttpRequest, project_id: int) -> HttpResponse:
    def delete() -> str:
        project = selectors.project_get(project_id=project_id)
        task_ids = services.project_delete(project_id=project_id, actor=request_actor(request))
        return _deleted(project, task_ids)

    return run_action(request, delete, back="/projects/", done=lambda message: message)
