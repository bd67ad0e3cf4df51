"""Request and response helpers every app's views and API share: middleware (request ids, body
limits, errors as JSON), the owner pages' helpers, pagination and output schemas, the WebSocket
origin check. Imports only ``talorys.lib``."""
