"""The backup page (backup/views.py)."""

from django.urls import path

from backup import views

urlpatterns = [
    path("backup/", views.backup_page, name="backup"),
    path("backup/preview/", views.backup_preview, name="backup-preview"),
    path("backup/import/", views.backup_confirm, name="backup-import"),
    path("backup/cancel/", views.backup_cancel, name="backup-cancel"),
]
