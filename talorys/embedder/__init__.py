"""The local embedder: all-MiniLM-L6-v2 in one process per install (talorys_embedder).

The model runs in the embedder process only (``onnx.py``, on onnxruntime); every web process and
the worker ask it over HTTP in the OpenAI embeddings protocol (``server.py``, ``queue.py``),
through the same client as any embeddings server (memory/embeddings.py). So the model's memory
is spent once per install, not once per process, and a web process never loads it.

The process is ``python -m talorys.embedder`` (``__main__.py``), which imports neither Django
nor the apps: ``manage.py talorys_embedder`` reads the settings and becomes it (exec), so the
model's process holds the model, not the web's modules (Django's set-up alone is 130 MB).
``model_files.py`` and ``address.py`` are what the clients share with it.
"""
