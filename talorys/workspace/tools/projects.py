"""The model's tools over the owner's projects: list, create, delete."""

from __future__ import annotations

from typing import Annotated, Any

from django.db.models import QuerySet
from pydantic import Field

from talorys.history.tools import SoftDeleteTool
from talorys.lib.errors import Conflict
from talorys.lib.tools import (
    ListTool,
    Permission,
    Tool,
    ToolArgs,
    ToolContext,
    ToolError,
    register,
)
from talorys.workspace import selectors, services
from talorys.workspace.models import Project
from talorys.workspace.tools.common import clip


def _project(project: Project) -> dict[str, Any]:
    return {"id": project.pk, "name": project.name, "description": clip(project.description)}


PROJECTS_SHOWN = 100


@register
class ListProjects(ListTool):
    name = "list_projects"
    description = "List the owner's projects with their ids (to file tasks under them)."
    cap = 4
    key = "projects"
    shown = PROJECTS_SHOWN

    def rows(self, args: ToolArgs, ctx: ToolContext) -> QuerySet[Project]:
        return selectors.project_list()

    def item(self, row: Project, args: ToolArgs, ctx: ToolContext) -> dict[str, Any]:
        return _project(row)


class CreateProjectArgs(ToolArgs):
    name: str = Field(min_length=1, max_length=Project.NAME_MAX, description="The project's name.")
    description: str = Field(
        "", max_length=Project.DESCRIPTION_MAX, description="Optional description."
    )


@register
class CreateProject(Tool):
    name = "create_project"
    description = (
        "Create a project to group tasks. Names are unique, whatever their case: a name "
        "already in use is refused with the existing project's id, to use instead. Returns the "
        "project with its id."
    )
    args = CreateProjectArgs
    permission = Permission.WRITE
    cap = 4

    def run(self, args: CreateProjectArgs, ctx: ToolContext) -> dict[str, Any]:
        try:
            project = services.project_create(
                name=args.name, description=args.description, actor=ctx.actor
            )
        except Conflict as err:  # the owner's refusal, with the id the model can file under
            taken = err.details or {}
            raise ToolError(
                f"{err.message} It is project id {taken.get('project_id')}: file tasks under "
                "it, or tell the owner the name is taken.",
                code=Conflict.code,
                details=taken,
            ) from err
        return {"project": _project(project)}


ProjectId = Annotated[int, Field(ge=1, description="The project's id, from list_projects.")]


class ProjectIdArgs(ToolArgs):
    project_id: ProjectId


@register
class DeleteProject(SoftDeleteTool):
    name = "delete_project"
    description = (
        "Propose deleting one project; its tasks stay, without a project. Nothing happens until "
        "the owner approves; never say it is deleted before that."
    )
    args = ProjectIdArgs
    model = Project
    id_arg = "project_id"
    label = "project"
    snapshot_fields = ("name", "description")
    # Commit and undo are SoftDeleteTool's: the project's bin services keep its tasks' links.
