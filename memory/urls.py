from django.urls import path

from memory import views

urlpatterns = [
    path("memories/", views.memories_page, name="memories"),
    path("memories/<int:memory_id>/", views.memory_page, name="memory"),
    path("memories/<int:memory_id>/edit/", views.memory_edit, name="memory-edit"),
    path("memories/<int:memory_id>/delete/", views.memory_delete, name="memory-delete"),
    path("memories/<int:memory_id>/reinstate/", views.memory_reinstate, name="memory-reinstate"),
    path("memories/<int:memory_id>/revert/", views.memory_revert, name="memory-revert"),
    path(
        "memories/<int:memory_id>/resolve/",
        views.contradiction_resolve,
        name="memory-resolve",
    ),
]
