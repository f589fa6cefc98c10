"""The known mistakes' outputs as a student's release stores them (course.json
``feedback.mistakes_data``, written by ``grade release``): each call looked up by a stable hash of
the function and its arguments, the outputs as JSON data.
"""
from __future__ import annotations

import hashlib
from typing import Any, Mapping, Sequence

import numpy as np

Outputs = dict[str, list[Any]]       # mistake id -> the outputs of its variants on one call


def call_key(function: str, args: Sequence[Any], kwargs: Mapping[str, Any]) -> str:
    """A stable hash of a call: the function name and the arguments' types, shapes, dtypes and bytes."""
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
        else:
            value = value.item() if isinstance(value, np.generic) else value
            digest.update(repr((type(value).__name__, value)).encode())

    feed(list(args))
    feed(dict(kwargs))
    return digest.hexdigest()[:32]


def encode(outputs: Outputs) -> dict:
    """Outputs as JSON data: arrays as ``{"array": nested lists}`` (12 significant digits, NaN and inf kept),
    duplicates within a mistake dropped."""
    def one(value: Any) -> Any:
        if isinstance(value, np.ndarray):
            flat = [float(f"{v:.12g}") for v in np.asarray(value, dtype=np.float64).ravel()]
            return {"array": np.array(flat).reshape(value.shape).tolist()}
        return value

    encoded = {}
    for mid, outs in outputs.items():
        seen = []
        for out in map(one, outs):
            if out not in seen:
                seen.append(out)
        encoded[mid] = seen
    return encoded


def decode(data: Mapping[str, list]) -> Outputs:
    """The inverse of :func:`encode`: ``{"array": ...}`` back to float64 ndarrays."""
    return {mid: [np.array(o["array"], dtype=np.float64) if isinstance(o, dict) and set(o) == {"array"} else o
                  for o in outs] for mid, outs in data.items()}
