# Talorys production image. The web service runs the default command (talorys_web: daphne, one
# process per CPU sharing port 8000 when Redis is configured, each restarted if it dies;
# TALORYS_WEB_PROCESSES sets how many); compose.yaml runs the celery worker, beat, the embedder and the
# one-shot migrations from the same image.
# No collectstatic: config/asgi.py serves static files in-process (ASGIStaticFilesHandler, which
# reads them through the staticfiles finders, not from STATIC_ROOT).
FROM python:3.11-slim

# Only the locked dependencies are installed (requirements/runtime.lock: exact versions, every
# file checked against its hash); the apps are imported from the source tree in /app, and
# PYTHONPATH makes that independent of the cwd.
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_ROOT_USER_ACTION=ignore \
    PYTHONPATH=/app \
    TALORYS_DATA_DIR=/data \
    HOST=0.0.0.0 \
    PORT=8000

WORKDIR /app

# Dependencies before the code, so that a code change does not reinstall them. The lock is
# complete, so pip needs no resolving (--no-deps) and refuses any file whose hash differs.
COPY requirements/runtime.lock requirements/
RUN pip install --require-hashes --no-deps -r requirements/runtime.lock

COPY . .

# A named volume mounted on /data starts as a copy of this directory, owner included, so the
# app user can write its database, generated secrets and keys there.
RUN groupadd --system --gid 10001 talorys \
    && useradd --system --uid 10001 --gid talorys --no-create-home --shell /usr/sbin/nologin talorys \
    && mkdir -p /data \
    && chown talorys:talorys /data
VOLUME ["/data"]
USER talorys

EXPOSE 8000

# Django answers 400 to a Host it does not allow, so ask with the first plain name of
# ALLOWED_HOSTS (wildcards like ".example.org" cannot be sent). Only a 503 (the database is
# down) or no answer raises, which marks the container unhealthy; "degraded" (Redis, the worker
# or beat) is a 200: `manage.py talorys_check` tells what is wrong. compose.yaml repeats it.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request as r; hosts = [h.strip() for h in os.environ.get('ALLOWED_HOSTS', '').split(',')]; host = next((h for h in hosts if h and h[0] not in '.*'), 'localhost'); r.urlopen(r.Request('http://127.0.0.1:8000/api/health', headers={'Host': host}), timeout=4)"]

CMD ["python", "manage.py", "talorys_web"]
