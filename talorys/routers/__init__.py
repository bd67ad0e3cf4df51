"""The core data's API routers; mounted by talorys/api.py."""

from talorys.routers.auth import auth_router
from talorys.routers.data import notes_router, notifications_router, projects_router, tasks_router
from talorys.routers.system import health_router, search_router, settings_router, usage_router

__all__ = [
    "auth_router",
    "health_router",
    "notes_router",
    "notifications_router",
    "projects_router",
    "search_router",
    "settings_router",
    "tasks_router",
    "usage_router",
]
