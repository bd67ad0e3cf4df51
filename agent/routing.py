"""WebSocket routes, mounted by talorys/asgi.py behind the origin check and session auth."""

from django.urls import path

from agent.consumers import ChatConsumer

websocket_urlpatterns = [path("ws/chat/", ChatConsumer.as_asgi())]
