"""The embedder process: ``python -m talorys.embedder --socket PATH | --listen HOST:PORT``.

``manage.py talorys_embedder`` execs this with the paths from the settings; it imports neither
Django nor the apps (only numpy, onnxruntime, tokenizers and the standard library), so its
memory is the model's. It loads the model first and binds afterwards: a client never meets a
socket that is not ready to answer. SIGTERM or SIGINT stops it and removes its socket file.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

from talorys.embedder.malloc import freed_memory_returned
from talorys.embedder.model_files import NAME
from talorys.embedder.queue import EmbedQueue
from talorys.embedder.server import make_server


def _arguments(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m talorys.embedder")
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--socket", type=Path, help="serve on this Unix socket")
    where.add_argument("--listen", help="serve on host:port")
    parser.add_argument("--cache-dir", type=Path, required=True, help="the optimised graph")
    return parser.parse_args(argv)


def main(argv: list[str]) -> int:
    args = _arguments(argv)
    logging.basicConfig(level=logging.INFO, format="embedder %(levelname)s %(message)s")
    from talorys.embedder.onnx import OnnxEmbedder

    began = time.monotonic()
    try:
        model = OnnxEmbedder(cache_dir=args.cache_dir)
        queue = EmbedQueue(model.embed, model.dim, idle=freed_memory_returned)
        server = make_server(queue, model_name=NAME, socket_path=args.socket, listen=args.listen)
    except (RuntimeError, OSError) as error:
        print(f"The embedder could not start: {error}", file=sys.stderr)
        return 1
    print(
        f"Embedder {NAME} on {args.socket or args.listen} "
        f"({model.model_file.name}, ready in {time.monotonic() - began:.2f} s)",
        file=sys.stderr,
        flush=True,
    )

    def stop(signum: int, frame: Any) -> None:
        # shutdown() waits for serve_forever to return: not on the thread that runs it.
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    try:
        server.serve_forever(poll_interval=0.5)
    finally:
        server.server_close()
        if args.socket is not None:
            args.socket.unlink(missing_ok=True)
    return 0


if __name__ == "__main__":
    code = main(sys.argv[1:])
    sys.stderr.flush()
    # Not the interpreter's finalisation: it would destroy the session under a model call still
    # running on the queue's thread (onnxruntime then aborts: "terminate called ...").
    os._exit(code)
