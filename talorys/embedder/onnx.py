"""all-MiniLM-L6-v2 on onnxruntime, for the embedder process alone (talorys_embedder).

Imported only by that process (talorys/embedder/server.py): the web processes and the
worker ask it over HTTP (memory/embeddings.py), so onnxruntime and tokenizers are never loaded
in them (tests/memory/test_embedder_process.py reads a live daphne's memory map to check).

The graph is optimised once per install, not at every start: the first load writes
onnxruntime's optimised model into the data dir (``<data>/embedder/``), named after the source
file's sha256 and the onnxruntime version, and later loads read it with optimisation off (0.2 s
instead of 0.8). The optimisation is what makes the int8 file quick: it folds the weights into
fp32 (the cached file is 90 MB, the source 23) and fuses the layers; unoptimised, a query took
54 ms instead of 4.5. Measured on the 2-core machine (a bare session, 100 queries and 1,000 texts
of 30 words in chunks of 8): EXTENDED and ALL write the same 90 MB and hold the same memory (176
MB after load, 193 after the texts), a query 4.2 against 4.5 ms, 146 against 138 texts/s. So
EXTENDED: ALL adds layout changes for the CPU it ran on, which a data dir moved to another
machine would carry along.

One intra-op thread: with two, a query took 2.5 ms and the texts went at 255 a second, but a
bulk pass then takes both cores from the web processes and the worker; one thread leaves them
one. The CPU memory arena is off: it kept the largest batch's activations for good.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import numpy as np
import onnxruntime as ort  # type: ignore[import-untyped, unused-ignore]
from tokenizers import Tokenizer

from talorys.embedder import model_files

MAX_TOKENS = 256  # sentence-transformers' max_seq_length for all-MiniLM-L6-v2
THREADS = 1


def optimised_path(cache_dir: Path) -> Path:
    """Where this source model, optimised by this onnxruntime, is kept."""
    short = model_files.MODEL_SHA256[:16]
    return cache_dir / f"minilm-{short}-ort{ort.__version__}-extended.onnx"


def _options(*, optimise_into: Path | None) -> ort.SessionOptions:
    options = ort.SessionOptions()
    options.intra_op_num_threads = THREADS
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.enable_cpu_mem_arena = False
    options.log_severity_level = 3
    if optimise_into is None:
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    else:
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
        options.optimized_model_filepath = str(optimise_into)
    return options


def _optimise(source: Path, target: Path) -> None:
    """Write the optimised graph to ``target`` atomically: two processes starting at once (or
    one killed half-way) never leave a half-written file that a later start would load."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(prefix=".optimising-", suffix=".onnx", dir=target.parent)
    os.close(fd)
    try:
        ort.InferenceSession(
            str(source), sess_options=_options(optimise_into=Path(temp)), providers=_PROVIDERS
        )
        os.replace(temp, target)
    finally:
        Path(temp).unlink(missing_ok=True)


_PROVIDERS = ["CPUExecutionProvider"]


class OnnxEmbedder:
    """Texts into unit vectors: WordPiece, truncation to 256 tokens, mean pooling over the
    attention mask, L2 normalisation (sentence-transformers' pipeline for this model)."""

    name: str = model_files.NAME
    dim: int = model_files.DIM

    def __init__(self, *, cache_dir: Path) -> None:
        source = model_files.checked_model()
        tokenizer = Tokenizer.from_file(str(model_files.checked_tokenizer()))
        # The file pads every text to 128 and truncates at 128: pad to the batch's longest
        # instead, and truncate where sentence-transformers does.
        tokenizer.enable_truncation(max_length=MAX_TOKENS)
        tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        self._tokenizer = tokenizer
        optimised = optimised_path(cache_dir)
        if not optimised.is_file():
            _optimise(source, optimised)
        self.model_file = optimised
        self._session = ort.InferenceSession(
            str(optimised), sess_options=_options(optimise_into=None), providers=_PROVIDERS
        )

    def embed(self, texts: list[str]) -> np.ndarray:
        """One unit row per text. The caller batches (queue.py: at most CHUNK texts)."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        encodings = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden = self._session.run(["last_hidden_state"], feeds)[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)
