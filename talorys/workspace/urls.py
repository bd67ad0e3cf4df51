"""The owner's pages over tasks, projects and notes (talorys/workspace/views/)."""

from django.urls import path

from talorys.workspace.views import notes, projects, quick_add, tasks, when

urlpatterns = [
    path("tasks/", tasks.task_list, name="tasks"),
    path("tasks/quick-add/", quick_add.quick_add, name="task-quick-add"),
    path("tasks/understand/", when.task_understand, name="task-understand"),
    path("tasks/<int:task_id>/", tasks.task_detail, name="task"),
    path("tasks/<int:task_id>/complete/", tasks.task_complete, name="task-complete"),
    path("tasks/<int:task_id>/reopen/", tasks.task_reopen, name="task-reopen"),
    path("tasks/<int:task_id>/delete/", tasks.task_delete, name="task-delete"),
    path("projects/", projects.project_list, name="projects"),
    path("projects/<int:project_id>/", projects.project_detail, name="project"),
    path("projects/<int:project_id>/delete/", projects.project_delete, name="project-delete"),
    path("notes/", notes.note_list, name="notes"),
    path("notes/<int:note_id>/", notes.note_detail, name="note"),
    path("notes/<int:note_id>/preview/", notes.note_preview, name="note-preview"),
    path("notes/<int:note_id>/rename/", notes.note_rename, name="note-rename"),
    path("notes/<int:note_id>/delete/", notes.note_delete, name="note-delete"),
    path("notes/<int:note_id>/revert/<int:change_id>/", notes.note_revert, name="note-revert"),
]
