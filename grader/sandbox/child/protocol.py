"""The wire format between the grader and a worker, one implementation for both sides: the grader
imports it as :mod:`grader.sandbox.child.protocol`, the worker (a script in the sandbox) loads it by
path. Standard library and numpy only.

Each message is a list of frames; a frame is an 8-byte big-endian length and that
many bytes. Frame 0 is a JSON document (``allow_nan`` so a student's NaN survives the trip); each
further frame is one array's raw bytes in C order (``ndarray.tobytes``), referenced from the JSON as
``{"$nd": index, "dtype": "<f8", "shape": [2, 3]}`` and rebuilt with ``np.frombuffer``; only numeric
dtypes pass. Dicts travel as ``{"$dict": {...}}``, and a numpy random ``Generator`` as its bit
generator's state, ``{"$rng": {...}}`` (:func:`_generator`). (The ``.npy`` format carries the
same three things, but ``np.load`` parses its header with ``ast.literal_eval``: 90 µs an array, a
third of a call's round trip.)
"""

from __future__ import annotations

import json
import math
import struct

import numpy as np

MAX_FRAME = 16 << 20  # bytes in one frame (one array)
MAX_HEAD = 1 << 20  # bytes in the JSON document (MAX_ITEMS items fit many times over)
MAX_MESSAGE = 32 << 20  # bytes in one message, all frames together
MAX_ARRAYS = 16  # arrays in one message
MAX_ITEMS = 10_000  # list items and dict keys in one message
MAX_DEPTH = 16  # nesting of lists and dicts
_HEADER = struct.Struct(">Q")
_PLAIN = frozenset({bool, int, float, str, type(None)})  # exact types that travel as they are
_NUMPY_SCALARS = {
    np.bool_,
    np.int8,
    np.int16,
    np.int32,
    np.int64,
    np.uint8,
    np.uint16,
    np.uint32,
    np.uint64,
    np.float16,
    np.float32,
    np.float64,
}


class WireError(Exception):
    """A value that cannot travel: wrong type, too large, too deep. ``kind`` is ``bad_type`` or
    ``too_large``."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


def read_exact(stream, n: int) -> bytes:
    chunks = []
    while n:
        chunk = stream.read(n)
        if not chunk:
            raise EOFError("the other side closed the channel")
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def read_message(stream):
    """Read one message; raise EOFError when the stream ends, WireError when it breaks the caps."""
    frames = []
    count = None
    total = 0
    while count is None or len(frames) < count:
        (size,) = _HEADER.unpack(read_exact(stream, _HEADER.size))
        total += size
        if size > (MAX_HEAD if count is None else MAX_FRAME) or total > MAX_MESSAGE:
            raise WireError("too_large", f"a frame of {size} bytes exceeds the limits")
        frames.append(read_exact(stream, size))
        if count is None:
            head = json.loads(frames[0])
            count = 1 + head["arrays"]
            if count - 1 > MAX_ARRAYS:
                raise WireError("too_large", f"{count - 1} arrays in one message")
    return decode(frames, head)


def split_message(data: bytearray, start: int) -> tuple[list, dict, int] | None:
    """The whole message at ``start`` of ``data`` (what was received so far): its frames (each
    array's a bytearray of its own), its parsed head and where it ends; None while more bytes must
    come. Raises WireError when it breaks the caps."""
    at, end, total, frames, head = start, len(data), 0, [], None
    while head is None or len(frames) < 1 + head["arrays"]:
        if end - at < _HEADER.size:
            return None
        (size,) = _HEADER.unpack_from(data, at)
        total += size
        if size > (MAX_HEAD if head is None else MAX_FRAME) or total > MAX_MESSAGE:
            raise WireError("too_large", f"a frame of {size} bytes exceeds the limits")
        if end - at - _HEADER.size < size:
            return None
        at += _HEADER.size
        frames.append(data[at : at + size])
        at += size
        if head is None:
            head = json.loads(frames[0])
            if head["arrays"] > MAX_ARRAYS:
                raise WireError("too_large", f"{head['arrays']} arrays in one message")
    return frames, head, at


def write_message(stream, obj) -> None:
    write_frames(stream, encode(obj))


def framed(frames) -> bytes:
    """Frames as the bytes written: each after its length."""
    return b"".join(_HEADER.pack(len(f)) + f for f in frames)


def write_frames(stream, frames: list[bytes]) -> None:
    stream.write(framed(frames))
    stream.flush()


def encode(obj) -> list[bytes]:
    """Plain data -> frames. Only exact ndarrays, bool/int/float/str/None, lists, tuples and
    str-keyed dicts pass."""
    arrays: list[bytes] = []
    left = MAX_ITEMS - 1  # items still allowed (the top one counted)

    def walk(value, depth):  # (its container counted it; plain items are taken inline)
        nonlocal left
        kind = type(value)
        if kind in _PLAIN:
            return value
        if kind is np.ndarray:
            if value.dtype.str not in _DTYPES:
                raise WireError(
                    "bad_type", f"returned an array of dtype {value.dtype}: use a numeric dtype"
                )
            if value.nbytes > MAX_FRAME - 4096 or len(arrays) >= MAX_ARRAYS:
                raise WireError("too_large", f"returned an array of {value.nbytes} bytes")
            arrays.append(value.tobytes())
            return {"$nd": len(arrays) - 1, "dtype": value.dtype.str, "shape": list(value.shape)}
        if kind in _NUMPY_SCALARS:
            return value.item()
        if kind is list or kind is tuple:
            left -= len(value)
            if left < 0 or (value and depth >= MAX_DEPTH):
                raise WireError("too_large", "the value is nested too deeply or has too many items")
            return [v if type(v) in _PLAIN else walk(v, depth + 1) for v in value]
        if kind is dict:
            if not all(type(k) is str for k in value):
                raise WireError("bad_type", "returned a dict whose keys are not all strings")
            left -= len(value)
            if left < 0 or (value and depth >= MAX_DEPTH):
                raise WireError("too_large", "the value is nested too deeply or has too many items")
            return {
                "$dict": {
                    k: v if type(v) in _PLAIN else walk(v, depth + 1) for k, v in value.items()
                }
            }
        if kind.__name__ == "Generator" and kind.__module__ == "numpy.random._generator":
            state = value.bit_generator.state  # (a fresh dict of ints and numeric arrays)
            if state.get("bit_generator") not in _BIT_GENERATORS:
                raise WireError(
                    "bad_type", "returned a numpy Generator whose bit generator may not travel"
                )
            return {"$rng": walk(state, depth + 1)}
        if isinstance(value, np.ndarray):
            raise WireError(
                "bad_type",
                f"returned a {kind.__module__}.{kind.__name__} (a subclass of "
                "numpy.ndarray): return a plain numpy array, e.g. np.asarray(...)",
            )
        raise WireError(
            "bad_type",
            f"returned a {kind.__module__}.{kind.__name__}: "
            "return a numpy array or plain Python numbers",
        )

    body = walk(obj, 0)
    head = json.dumps({"arrays": len(arrays), "body": body}).encode()
    if len(head) > MAX_HEAD:
        raise WireError("too_large", "the value is too large")
    return [head] + arrays


def _array(data: bytes, dtype, shape) -> np.ndarray:
    """An array's frame -> a writable ndarray; raises WireError unless the dtype is numeric and the
    bytes are exactly ``shape`` of it."""
    dtype = _DTYPES.get(dtype) if type(dtype) is str else None
    if dtype is None:
        raise WireError("bad_type", "an array of a dtype that may not travel")
    if (
        type(shape) is not list
        or len(shape) > 32
        or not all(type(n) is int and n >= 0 for n in shape)
        or len(data) != dtype.itemsize * math.prod(shape)
    ):
        raise WireError("bad_type", "an array whose shape does not match its bytes")
    return np.frombuffer(data if type(data) is bytearray else bytearray(data), dtype).reshape(shape)


# The dtypes an array may travel as: bool, integers, floats and complex, in both byte orders.
_DTYPES = {
    dt.str: dt
    for code in "?bBhHiIlLqQefdgFDG"
    for order in "<>|"
    for dt in [np.dtype(code).newbyteorder(order) if order != "|" else np.dtype(code)]
}


# The bit generators a Generator may travel with: numpy's, rebuilt by these names (not a message's).
_BIT_GENERATORS = ("PCG64", "PCG64DXSM", "MT19937", "Philox", "SFC64")


def _generator(state):
    """A decoded ``$rng`` -> a new ``numpy.random.Generator`` in that state: a call's draws are the
    same on both sides, and a suite sees how far the student's function advanced the generator it
    was given. Raises WireError unless ``state`` is a valid state of a bit generator of numpy's."""
    name = state.get("bit_generator") if type(state) is dict else None
    if name not in _BIT_GENERATORS:
        raise WireError("bad_type", "a random generator whose bit generator may not travel")
    import numpy.random  # (loaded lazily: most calls pass no generator)

    bit_generator = getattr(numpy.random, name)()
    try:
        bit_generator.state = state
    except Exception:  # a forged state: out of range, wrong keys or arrays
        raise WireError(
            "bad_type", "a random generator in a state its bit generator refuses"
        ) from None
    return numpy.random.Generator(bit_generator)


def decode(frames: list[bytes], head: dict | None = None):
    """Frames -> plain data; arrays come back as exact, writable ndarrays of a numeric dtype.
    ``head``: frame 0 already parsed."""
    head = json.loads(frames[0]) if head is None else head
    used: set[int] = set()
    left = MAX_ITEMS - 1  # the same caps as encode(): a forged reply is refused

    def walk(value, depth):  # (its container counted it; plain items are taken inline)
        nonlocal left
        if type(value) is list:
            items = value
        elif type(value) is dict:
            if "$nd" in value:
                index = value["$nd"]
                if type(index) is not int or not 0 <= index < len(frames) - 1 or index in used:
                    raise WireError(
                        "bad_type", "a reference to an array that is not there (or used twice)"
                    )
                used.add(index)  # each frame becomes one array: no amplification
                return _array(frames[1 + index], value.get("dtype"), value.get("shape"))
            if "$rng" in value:
                return _generator(walk(value["$rng"], depth + 1))
            items = value["$dict"]
            if type(items) is not dict:
                raise WireError("bad_type", "a dict that is not one")
        else:
            return value
        left -= len(items)
        if left < 0 or (items and depth >= MAX_DEPTH):
            raise WireError("too_large", "the value is nested too deeply or has too many items")
        if type(items) is list:
            return [v if type(v) in _PLAIN else walk(v, depth + 1) for v in items]
        return {k: v if type(v) in _PLAIN else walk(v, depth + 1) for k, v in items.items()}

    return walk(head["body"], 0)
