"""The files in the admin: read only (uploads go through /api/files and its checks)."""

from django.contrib import admin

from files.models import File


@admin.register(File)
class FileAdmin(admin.ModelAdmin):
    list_display = ("id", "name", "content_type", "size", "status", "created_at", "deleted_at")
    list_filter = ("status", "content_type")
    search_fields = ("name", "sha256")
    readonly_fields = [f.name for f in File._meta.fields]

    def has_add_permission(self, request, obj=None) -> bool:
        return False
