"""Comparisons for the suites, run in the grader process on plain data returned by the worker.

The verdict is kept apart from the explanation (as in pytest's ``approx``): each check raises
:class:`Mismatch`, whose ``public`` line is safe to show for a hidden test (the sentence and a
diagnosis, never inputs or expected values) and whose ``detail`` adds the numbers.
No method of a student object is ever called here: the worker only sends ndarrays and JSON data.
"""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np

__all__ = ["Mismatch", "assert_close", "assert_close_any", "assert_equal"]


class Mismatch(AssertionError):
    """A failed comparison.

    :param what: the plain sentence saying what was checked, e.g. "layernorm of a 3×4 input with eps = 0.1".
    :param diagnosis: what is wrong, without values (safe for hidden tests).
    :param detail: numbers: errors, indices, an excerpt (shown for public tests only).
    """

    def __init__(self, what: str, diagnosis: str, detail: str = ""):
        self.what, self.diagnosis, self.detail = what, diagnosis, detail
        super().__init__(self.full)

    @property
    def public(self) -> str:
        return f"{self.what}: {self.diagnosis}"

    @property
    def full(self) -> str:
        return self.public + (f"\n{self.detail}" if self.detail else "")


def _describe(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return f"an array of shape {value.shape} and dtype {value.dtype}"
    if isinstance(value, (bool, int, float)):
        return f"a {type(value).__name__} ({value!r})"
    return f"a {type(value).__name__}"


def _index(flat: int, shape: tuple[int, ...]) -> str:
    return "[" + ", ".join(str(i) for i in np.unravel_index(flat, shape)) + "]" if shape else "[]"


def _check_array(got: Any, expected: np.ndarray, what: str) -> np.ndarray:
    """Type, dtype, shape and finiteness, in that order; returns ``got`` as float64."""
    if type(got) is not np.ndarray:
        raise Mismatch(what, f"expected a numpy array of shape {expected.shape}, got {_describe(got)}")
    if got.dtype.kind not in "iuf":
        raise Mismatch(what, f"expected a float array, got dtype {got.dtype}")
    if got.shape != expected.shape:
        raise Mismatch(what, f"expected shape {expected.shape}, got shape {got.shape}")
    got64 = got.astype(np.float64)
    bad = ~np.isfinite(got64) & np.isfinite(expected)
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        kind = "NaN" if np.isnan(got64.flat[first]) else "inf"
        raise Mismatch(what, f"your output has {kind} ({int(bad.sum())} of {bad.size} entries)",
                       f"first at {_index(first, got.shape)}")
    return got64


def _close(got64: np.ndarray, expected: np.ndarray, rtol: float, atol: float) -> np.ndarray:
    """Boolean array of entries outside the tolerance (``|got - expected| > atol + rtol |expected|``)."""
    with np.errstate(invalid="ignore"):
        return ~(np.abs(got64 - expected) <= atol + rtol * np.abs(expected)) & ~(
            np.isnan(got64) & np.isnan(expected))


def _value_detail(got64: np.ndarray, expected: np.ndarray, off: np.ndarray, rtol: float, atol: float) -> str:
    diff = np.abs(got64 - expected)
    worst = int(np.nanargmax(np.where(off, diff, -1.0)))
    first = int(np.flatnonzero(off)[0])
    rel = diff.flat[worst] / max(abs(expected.flat[worst]), 1e-300)
    return (f"{int(off.sum())} / {off.size} entries differ (rtol {rtol:g}, atol {atol:g}); "
            f"max abs error {diff.flat[worst]:.3g} (relative {rel:.3g}) at {_index(worst, off.shape)}: "
            f"yours {got64.flat[worst]:.6g}, expected {expected.flat[worst]:.6g}; "
            f"first difference at {_index(first, off.shape)}")


def assert_close(got: Any, expected: Any, *, what: str, rtol: float = 1e-5, atol: float = 1e-8) -> None:
    """Check that ``got`` is a finite numeric ndarray of ``expected``'s exact shape, within tolerance.

    :param got: what the student's function returned (as decoded from the worker).
    :param expected: the expected values; any array-like, compared in float64.
    :param what: one plain sentence for the message.
    :raises Mismatch: on a wrong type, dtype, shape, NaN/inf, or values outside ``atol + rtol·|expected|``.
    """
    assert_close_any(got, {"": expected}, what=what, rtol=rtol, atol=atol)


def assert_close_any(got: Any, candidates: Mapping[str, Any], *, what: str, rtol: float = 1e-5,
                     atol: float = 1e-8) -> str:
    """Like :func:`assert_close`, passing when ``got`` matches any of the candidate arrays.

    :param candidates: name -> expected array; the first one is reported on failure.
    :returns: the name of the first candidate matched.
    :raises Mismatch: when no candidate matches.
    """
    items = [(name, np.asarray(exp, dtype=np.float64)) for name, exp in candidates.items()]
    got64 = _check_array(got, items[0][1], what)
    for name, exp in items:
        if exp.shape == got64.shape and not _close(got64, exp, rtol, atol).any():
            return name
    expected = items[0][1]
    off = _close(got64, expected, rtol, atol)
    raise Mismatch(what, "values differ from the expected ones beyond the tolerance",
                   _value_detail(got64, expected, off, rtol, atol))


def assert_equal(got: Any, expected: Any, *, what: str) -> None:
    """Exact equality for plain data: ints, strings, and dicts of them (e.g. parameter counts).

    ``True`` is not accepted for ``1`` and ``7.0`` is not accepted for ``7``: types must match.

    :raises Mismatch: naming the first key or value that differs.
    """
    if isinstance(expected, dict):
        if type(got) is not dict:
            raise Mismatch(what, f"expected a dict with keys {sorted(expected)}, got {_describe(got)}")
        if set(got) != set(expected):
            missing, extra = sorted(set(expected) - set(got)), sorted(set(got) - set(expected), key=str)
            raise Mismatch(what, f"wrong keys: missing {missing}, unexpected {extra}")
        for key in expected:
            if type(got[key]) is not type(expected[key]):
                raise Mismatch(what, f"{key!r} should be a {type(expected[key]).__name__}, got {_describe(got[key])}")
            if got[key] != expected[key]:
                raise Mismatch(what, f"{key!r} is not the expected count",
                               f"{key!r}: yours {got[key]!r}, expected {expected[key]!r}")
        return
    if type(got) is not type(expected) or got != expected:
        raise Mismatch(what, f"expected a {type(expected).__name__}, got {_describe(got)}",
                       f"yours {got!r}, expected {expected!r}")
