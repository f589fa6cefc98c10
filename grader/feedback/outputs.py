"""The known mistakes' outputs as a student's release stores them (course.json
``feedback.mistakes_data``, written by ``grade release``): each call looked up by a stable hash of
the function and its arguments, the outputs as JSON data.
"""

from __future__ import annotations

import hashlib
from typing import Any, Mapping, Sequence

import numpy as np

Outputs = dict[str, list[Any]]  # mistake id -> the outputs of its variants on one call


def call_key(function: str, args: Sequence[Any], kwargs: Mapping[str, Any]) -> str:
    """A stable hash of a call: the function name and the arguments' types, shapes, dtypes and
    bytes."""
    digest = hashlib.sha256(function.encode())

    def feed(value: Any) -> None:
        if isinstance(value, np.ndarray):
            digest.update(f"nd{value.dtype.str}{value.shape}".encode())
            digest.update(np.ascontiguousarray(value).tobytes())
        elif isinstance(value, dict):
            digest.update(b"{")
            for key in sorted(value):
                feed(key)
                feed(value[key])
            digest.update(b"}")
        elif isinstance(value, (list, tuple)):
            digest.update(b"[")
            for item in value:
                feed(item)
            digest.update(b"]")
        elif isinstance(value, np.random.Generator):  # by its state: a new one each call, alike
            digest.update(b"rng")
            feed(value.bit_generator.state)
        else:
            value = value.item() if isinstance(value, np.generic) else value
            digest.update(repr((type(value).__name__, value)).encode())

    feed(list(args))
    feed(dict(kwargs))
    return digest.hexdigest()[:32]


def encode(outputs: Outputs) -> dict:
    """Outputs as JSON data: float arrays as ``{"array": nested lists}`` (12 significant digits,
    NaN and inf kept), integer and bool arrays as ``{"array": ..., "dtype": ...}`` (exact), numpy
    scalars as Python numbers, within lists and dicts too; duplicates within a mistake dropped."""
    encoded = {}
    for mid, outs in outputs.items():
        seen = []
        for out in map(_encoded, outs):
            if out not in seen:
                seen.append(out)
        encoded[mid] = seen
    return encoded


def _encoded(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        if value.dtype.kind in "biu":  # token ids, counts, masks: exactly, as they were
            return {"array": value.tolist(), "dtype": value.dtype.str}
        flat = [float(f"{v:.12g}") for v in np.asarray(value, dtype=np.float64).ravel()]
        return {"array": np.array(flat).reshape(value.shape).tolist()}
    if isinstance(value, np.generic):  # np.argmax's np.int64, a float64 loss
        return value.item()
    if isinstance(value, (list, tuple)):
        return [_encoded(v) for v in value]
    if isinstance(value, dict):
        return {k: _encoded(v) for k, v in value.items()}
    return value


def decode(data: Mapping[str, list]) -> Outputs:
    """The inverse of :func:`encode`: each ``{"array": ...}`` an ndarray (float64, or its dtype)."""
    return {mid: [_decoded(o) for o in outs] for mid, outs in data.items()}


def _decoded(value: Any) -> Any:
    if isinstance(value, dict) and set(value) in ({"array"}, {"array", "dtype"}):
        return np.array(value["array"], dtype=np.dtype(value.get("dtype", "<f8")))
    if isinstance(value, list):
        return [_decoded(v) for v in value]
    if isinstance(value, dict):
        return {k: _decoded(v) for k, v in value.items()}
    return value
