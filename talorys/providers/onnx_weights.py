"""The named tensors (initializers) of an ONNX file, read without the onnx package.

An ONNX file is one protocol-buffers message: ModelProto, whose field 7 is the GraphProto,
whose repeated field 5 holds the initializers, each a TensorProto with ``dims`` (1),
``data_type`` (2), ``name`` (8) and ``raw_data`` (9). That is all the local embedder
(minilm.py) needs from its model file: the weights, not the graph. Only raw_data tensors of the
types below are read; anything else in the file is skipped.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

# TensorProto.DataType -> numpy.
DTYPES = {1: np.float32, 3: np.int8, 7: np.int64, 9: np.bool_}
_GRAPH, _INITIALIZER = 7, 5
_DIMS, _DATA_TYPE, _NAME, _RAW = 1, 2, 8, 9


def _varint(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, at


def _fields(data: bytes, start: int, end: int) -> Iterator[tuple[int, int, Any]]:
    """(field number, wire type, value) for each field of the message in data[start:end];
    a length-delimited value is its (start, end), a varint its int."""
    at = start
    while at < end:
        key, at = _varint(data, at)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, at = _varint(data, at)
            yield number, wire, value
        elif wire == 2:
            size, at = _varint(data, at)
            yield number, wire, (at, at + size)
            at += size
        elif wire == 1:
            at += 8
        elif wire == 5:
            at += 4
        else:
            raise ValueError(f"unsupported protocol-buffers wire type {wire}")
    if at != end:
        raise ValueError("truncated protocol-buffers message")


def _tensor(data: bytes, start: int, end: int) -> tuple[str, np.ndarray] | None:
    dims: list[int] = []
    dtype = name = raw = None
    for number, wire, value in _fields(data, start, end):
        if number == _DIMS and wire == 0:
            dims.append(value)
        elif number == _DIMS and wire == 2:  # packed
            at, stop = value
            while at < stop:
                dim, at = _varint(data, at)
                dims.append(dim)
        elif number == _DATA_TYPE:
            dtype = DTYPES.get(value)
        elif number == _NAME:
            name = data[value[0] : value[1]].decode()
        elif number == _RAW:
            raw = value
    if name is None or dtype is None or raw is None:
        return None
    # A copy: the arrays outlive the file's bytes.
    array: np.ndarray = np.frombuffer(data[raw[0] : raw[1]], dtype=dtype).copy()
    return name, array.reshape(dims)


def initializers(data: bytes) -> dict[str, np.ndarray]:
    """Every initializer stored as raw data, by name."""
    tensors: dict[str, np.ndarray] = {}
    for number, wire, value in _fields(data, 0, len(data)):
        if number != _GRAPH or wire != 2:
            continue
        for field, kind, span in _fields(data, *value):
            if field == _INITIALIZER and kind == 2:
                tensor = _tensor(data, *span)
                if tensor is not None:
                    tensors[tensor[0]] = tensor[1]
    return tensors
