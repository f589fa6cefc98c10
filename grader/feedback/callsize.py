"""What a hidden test's stand-in call the grader computes: never one whose reference can call the function under
test (:func:`reaches`), and none far larger than the test's own. The grader answers it by running the reference, in its own
process, on whatever the student's function passed: a call far larger than the test's own (n_heads = 10**9 with
d_head 0, 20,000 tokens, arrays that broadcast to (2n)**4) would take the grader's memory and time, the other
graders' machine, and turn the student's fault into the grader's.

A call gets at most twice the test's longest axis, its integers or twice that axis, and four times the volume of
the test's arrays or of the reference's own calls in the test, together: so heads stacked any way (scores of
shape (1, n_heads, n, n)) cost what the reference's softmax calls of the heads do, and are answered.
"""
from __future__ import annotations

import sys
import types
from typing import Any, Callable, Sequence

import numpy as np


def extent(value: Any) -> tuple[int, int, int]:
    """The longest axis, the largest integer and the broadcast volume of the arrays in plain data."""
    axis, integer, shapes = 0, 0, []

    def walk(item: Any) -> None:
        nonlocal axis, integer
        if type(item) is np.ndarray:     # a 0-d integer array is an integer to the reference (reshape, repeat, //)
            axis = max(axis, *item.shape, 0)
            shapes.append(item.shape)
            if item.ndim == 0 and item.dtype.kind in "iu":
                integer = max(integer, abs(int(item)))
        elif type(item) is int:
            integer = max(integer, abs(item))
        elif type(item) in (list, tuple, dict):
            for part in (item.values() if type(item) is dict else item):
                walk(part)

    walk(value)
    return axis, integer, volume(shapes)


def volume(shapes: Sequence[tuple[int, ...]]) -> int:
    """How many entries arrays of these shapes broadcast to (their axes aligned on the right, numpy's rule, the
    longest of each): what an elementwise reference makes of them, and a matmul's batches times its rows and columns."""
    total = 1 if shapes else 0
    for i in range(1, max(map(len, shapes), default=0) + 1):
        total *= max(shape[-i] if len(shape) >= i else 1 for shape in shapes)
    return total


def bounds(call: Any, known: Sequence[dict]) -> tuple[int, int, int]:
    """The most a stand-in's call may have in the test calling ``call`` (its arguments, as plain data), whose
    reference makes the calls ``known`` (``{"bound": ...}`` each): axis, integer, volume."""
    axis, integer, size = extent(call)
    size = max(size, sum(extent(c["bound"])[2] for c in known), 1)
    return 2 * max(axis, 1), max(2 * axis, integer), 4 * size


def within(call: Any, most: tuple[int, int, int]) -> bool:
    """Whether a stand-in's call (its arguments, as plain data) is within ``most`` (:func:`bounds`)."""
    return all(got <= limit for got, limit in zip(extent(call), most))


def reaches(start: Callable, target: Callable, name: str, modules: Sequence[Any]) -> bool:
    """Whether the trusted function ``start`` can call ``target`` (the course function ``name``): its code, or
    that of a function of ``modules`` it names (helpers, nested functions included), names ``target`` or
    ``name``. An over-approximation, read from the code once: a right function never calls a function that
    calls it back, so refusing such a stand-in refuses only an oracle (an attention asking the block's
    stand-in, use_attention or not, for its own value)."""
    own = {id(m) for m in modules}
    seen, todo = set(), [start]
    while todo:
        function = todo.pop()
        if id(function) in seen:
            continue
        seen.add(id(function))
        codes, names = [getattr(function, "__code__", None)], set()
        while codes:
            code = codes.pop()
            if isinstance(code, types.CodeType):
                names.update(code.co_names)
                codes.extend(const for const in code.co_consts if isinstance(const, types.CodeType))
        if name in names:
            return True
        scope = getattr(function, "__globals__", {})
        for found in [scope.get(n) for n in names] + [getattr(scope.get(n), m, None) for n in names for m in names
                                                      if isinstance(scope.get(n), types.ModuleType)]:
            if found is target:
                return True
            if isinstance(found, types.FunctionType) and id(sys.modules.get(found.__module__)) in own:
                todo.append(found)
    return False
