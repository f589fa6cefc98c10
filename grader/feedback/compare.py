"""Comparisons for the suites, run in the grader process on plain data returned by the worker.

The verdict is kept apart from the explanation (as in pytest's ``approx``): each check raises
:class:`Mismatch`, whose ``public`` text is safe to show for a hidden test and whose ``detail``
adds, for public tests, everything about the student's value and the numbers
(:mod:`grader.feedback.diff`). No method of a student object is ever called here: the worker only
sends ndarrays and JSON data.

A check given ``diagnose=`` asks it, after a failure, which known mistake the student's output
matches (see :mod:`grader.feedback.mistakes`); the check itself never changes.

This module is what the suites import: the array checks live here, :class:`Mismatch` and the
diagnose protocol in :mod:`grader.feedback.mismatch`, the checks of plain data in
:mod:`grader.feedback.plain`. The checks of one float, one integer, an integer array, a dict of
counts and a Generator's draws are
:mod:`grader.feedback.values`', whose docstring lists what a suite may pass to the student's code.
"""

from __future__ import annotations

import math
from contextlib import contextmanager
from functools import partial
from typing import Any, Iterator, Mapping, Sequence

import numpy as np

from grader.errors import StudentError
from grader.feedback import diff
from grader.feedback.mismatch import (
    FAR,
    Diagnose,
    Diagnosis,
    Mismatch,
    Same,
    _describe,
    diagnosed,
    either,
    told,
)
from grader.feedback.plain import assert_equal, assert_keys, assert_raises, assert_types

__all__ = [
    "Diagnosis",
    "Mismatch",
    "either",
    "assert_array",
    "assert_attempt",
    "assert_close",
    "assert_close_any",
    "assert_close_own",
    "assert_equal",
    "assert_keys",
    "assert_raises",
    "assert_types",
    "raising",
    "same_array",
]


def _check_array(got: Any, expected: np.ndarray, what: str) -> np.ndarray:
    """Type, dtype and shape, in that order; returns ``got`` as float64."""
    if type(got) is not np.ndarray:
        raise Mismatch(
            what,
            f"expected a numpy array of shape {expected.shape}, got another kind of value",
            f"yours: {_describe(got)}",
        )
    if got.dtype.kind not in "iuf":
        raise Mismatch(what, "wrong dtype: expected a float array", diff.describe(got, expected))
    if got.shape != expected.shape:
        raise Mismatch(
            what, f"wrong shape: expected {expected.shape}", diff.describe(got, expected)
        )
    return got.astype(np.float64)


def _check_finite(
    got: np.ndarray, got64: np.ndarray, expected: np.ndarray, what: str, rtol: float, atol: float
) -> None:
    """NaN or inf where ``expected`` is finite, said before any value."""
    bad = ~np.isfinite(got64) & np.isfinite(expected)
    if bad.any():  # which of NaN or inf, and how many: detail
        raise Mismatch(
            what,
            "your output has NaN or inf where the expected values are finite",
            lambda: "\n".join(
                [
                    diff.describe(got, expected),
                    diff.non_finite(got64, bad),
                    diff.excerpt(
                        got64, expected, _outside(got64, expected, allowed(expected, rtol, atol))
                    ),
                ]
            ),
            arrays={"expected": expected, "got": got64},
        )


def allowed(expected: np.ndarray, rtol: float, atol: float) -> float:
    """How far an entry may be from ``expected``'s: ``atol + rtol · max |expected|``, one figure for
    the whole array (its finite entries). Scaled to the array's magnitude, not to each entry: an
    entry near 0 computed with a float32 rounding, or by a different but equally exact formula, is
    as right as the large ones, so a near miss fails only a test that asks for that precision."""
    finite = np.abs(expected[np.isfinite(expected)])
    return float(atol + rtol * finite.max()) if finite.size else float(atol)


def _outside(got64: np.ndarray, expected: np.ndarray, tolerance: float) -> np.ndarray:
    """Boolean array of the entries farther than ``tolerance`` (:func:`allowed`) from
    ``expected``'s; NaN = NaN, inf = the same inf."""
    with np.errstate(invalid="ignore", over="ignore"):
        close = np.abs(got64 - expected) <= tolerance
    close &= np.isfinite(got64) & np.isfinite(expected)
    close |= got64 == expected
    close |= np.isnan(got64) & np.isnan(expected)
    return ~close


def same_array(got: Any, candidate: Any, *, rtol: float = 1e-5, atol: float = 1e-8) -> bool:
    """True when ``got`` is a numeric ndarray of ``candidate``'s shape within the tolerance, NaN and
    inf in the same places (a mistake that makes NaN matches a student's NaN).

    The first entry is checked alone first: a diagnosis tries dozens of candidates, and most differ
    there.
    """
    if type(got) is not np.ndarray or got.dtype.kind not in "iuf":
        return False
    try:
        candidate = np.asarray(candidate, dtype=np.float64)
    except (TypeError, ValueError):
        return False
    if got.shape != candidate.shape:
        return False
    tolerance = allowed(candidate, rtol, atol)
    if got.size:
        first, wanted = float(got.flat[0]), float(candidate.flat[0])
        if (
            first != wanted
            and not (first != first and wanted != wanted)
            and not (
                math.isfinite(first) and math.isfinite(wanted) and abs(first - wanted) <= tolerance
            )
        ):
            return False
    return not _outside(got.astype(np.float64), candidate, tolerance).any()


def assert_close(
    got: Any,
    expected: Any,
    *,
    what: str,
    rtol: float = 1e-5,
    atol: float = 1e-8,
    diagnose: Diagnose | None = None,
) -> None:
    """Check that ``got`` is a finite numeric ndarray of ``expected``'s exact shape, within
    tolerance.

    :param got: what the student's function returned (as decoded from the worker).
    :param expected: the expected values; any array-like, compared in float64.
    :param what: one plain sentence for the message.
    :param rtol, atol: entries pass when ``|got - expected| <= atol + rtol · max |expected|`` (see
        :func:`allowed`: the tolerance is scaled to the array's magnitude, not to each entry).
    :param diagnose: asked after a failure which known mistake ``got`` matches (see
        :data:`Diagnose`).
    :raises Mismatch: on a wrong type, dtype, shape, NaN/inf, or values outside the tolerance.
    """
    assert_close_any(got, {"": expected}, what=what, rtol=rtol, atol=atol, diagnose=diagnose)


def assert_close_any(
    got: Any,
    candidates: Mapping[str, Any],
    *,
    what: str,
    rtol: float = 1e-5,
    atol: float = 1e-8,
    diagnose: Diagnose | None = None,
) -> str:
    """Like :func:`assert_close`, passing when ``got`` matches any of the candidate arrays.

    :param candidates: name -> expected array; the first one is reported on failure. NaN and inf in
        the same places as in a candidate match it.
    :returns: the name of the first candidate matched.
    :raises Mismatch: when no candidate matches.
    """
    items = [(name, np.asarray(exp, dtype=np.float64)) for name, exp in candidates.items()]
    same = partial(same_array, rtol=rtol, atol=atol)
    same.loose = partial(same_array, rtol=FAR * rtol, atol=FAR * atol)  # far beyond the tolerance
    try:
        got64 = _check_array(got, items[0][1], what)
        for name, exp in items:
            if (
                exp.shape == got64.shape
                and not _outside(got64, exp, allowed(exp, rtol, atol)).any()
            ):
                told(diagnose, same)
                return name
        expected = items[0][1]
        tolerance = allowed(expected, rtol, atol)
        _check_finite(got, got64, expected, what, rtol, atol)
        raise Mismatch(
            what,
            "values differ from the expected ones beyond the tolerance",
            lambda: (
                diff.describe(got, expected)
                + "\n"
                + diff.values(
                    got64, expected, _outside(got64, expected, tolerance), rtol, atol, tolerance
                )
            ),
            arrays={"expected": expected, "got": got64},
        )
    except Mismatch as err:
        # a constant factor only where no known mistake explains got; both asked through one seam
        hints = [d for d in (diagnose, _scaled) if d is not None]
        diagnosed(err, either(*hints), got, [exp for _, exp in items], same)
        raise


@contextmanager
def raising(diagnose: Diagnose) -> Iterator[None]:
    """Around a call of the student's function that a known mistake makes raise (a sum without
    keepdims cannot broadcast on a 4×6 input): an exception the student's code raises there is then
    explained by the mistakes whose variants raise on ``diagnose``'s call too. An exception raised
    elsewhere is explained by none, and a problem with one names no mistake
    (:class:`grader.grading.verdicts.Verdicts`)."""
    try:
        yield
    except StudentError as err:
        err.diagnose = diagnose
        raise


def _scaled(got: Any, expected: Sequence[Any], same: Same) -> Diagnosis | None:
    return scaled(got, expected[0], same)


def scaled(got: Any, expected: np.ndarray, same: Same) -> Diagnosis | None:
    """A fact when no known mistake explains ``got``: it is the expected array times one constant
    (other than 1), within the check's tolerance. Such a factor (2x GELU, a score scale) is then the
    whole difference."""
    if type(got) is not np.ndarray or got.shape != expected.shape or got.dtype.kind not in "fiu":
        return None
    got64 = got.astype(np.float64)
    with np.errstate(all="ignore"):  # a student's 1e308 overflows here: then no fact
        norm = float(np.sum(expected * expected))
        if not np.isfinite(got64).all() or not np.isfinite(norm) or norm == 0:
            return None
        ratio = float(np.sum(got64 * expected)) / norm
        if (
            not math.isfinite(ratio)
            or abs(ratio) < 1e-3
            or math.isclose(ratio, 1.0, rel_tol=1e-3)
            or not same(got64, ratio * expected)
        ):
            return None
    return Diagnosis(
        "hint.scaled",
        f"your output is the expected one times {ratio:.4g}, everywhere: look for a "
        "constant factor that is missing, extra or wrong",
    )


def assert_array(
    got: Any, shape: tuple[int, ...], dtypes: Sequence[Any] = (), *, what: str
) -> np.ndarray:
    """``got`` is a numeric ndarray of ``shape`` (and of one of ``dtypes`` when given): the check a
    property test makes before it indexes or reshapes the student's value. Returns ``got``.

    :raises Mismatch: naming the expected shape or dtype (the student's: detail only).
    """
    if type(got) is not np.ndarray or got.dtype.kind not in "iuf":
        raise Mismatch(
            what,
            f"expected a numeric array of shape {tuple(shape)}, got another kind of value",
            f"yours: {_describe(got)}",
        )
    if got.shape != tuple(shape):
        raise Mismatch(what, f"wrong shape: expected {tuple(shape)}", f"yours: {_describe(got)}")
    if dtypes and got.dtype not in [np.dtype(d) for d in dtypes]:
        raise Mismatch(
            what,
            f"wrong dtype: expected {' or '.join(str(np.dtype(d)) for d in dtypes)}",
            f"yours: {_describe(got)}",
        )
    return got


# how far (of the largest expected value) an output may be and still count as the function's
ATTEMPT = 0.3


def assert_attempt(got: Any, expected: Any, *, what: str, rtol: float = ATTEMPT) -> None:
    """Before a property test's points: ``got`` is an attempt at the specified function, within
    ``rtol`` of the largest expected value. A numeric slip (ddof=1, another eps or constant, a
    float32 computation, a scale) is well inside; a function that merely has the property (sign(x -
    mean) is as invariant to a row's scale as LayerNorm, u @ W_v @ W_o is as causal as attention) is
    not.

    :raises Mismatch: in the grader's words only (a hidden test shows nothing of the student's
        value).
    """
    try:
        assert_close(got, expected, rtol=rtol, atol=0.0, what=what)
    except Mismatch as err:
        far = err  # (``err`` is unbound once the except clause ends)
        raise Mismatch(
            what,
            f"your output is too far from the specified function's (more than {rtol:.0%} of "
            "its largest value) for this property to count",
            lambda: far.detail,
        ) from None


def assert_close_own(
    got: Any, own: Any, *, what: str, rtol: float = 1e-5, atol: float = 1e-8
) -> None:
    """A property of the student's own outputs: ``got`` must match ``own``, another of their outputs
    (the output for a row scaled by 10 against the output for the row, say), within the tolerance of
    :func:`assert_close` scaled to ``own``.

    ``own`` must be a finite numeric array that is not one number everywhere: an output that ignores
    its input (all zeros, a uniform softmax) holds every such property and proves nothing. Both
    values are the student's, and either could carry a hidden input: the public words name neither's
    shape nor values.

    :raises Mismatch: when ``own`` is no such array, ``got`` is not an array of its shape, or they
        differ.
    """

    def detail() -> str:
        return "\n".join(
            [f"the first output: {_describe(own)}; the second: {_describe(got)}"]
            + (
                [diff.values(got64, own64, off, rtol, atol, allowed(own64, rtol, atol))]
                if off is not None
                else []
            )
        )

    off = got64 = own64 = None
    if type(own) is not np.ndarray or own.dtype.kind not in "iuf":
        raise Mismatch(what, "your function did not return a numeric array", detail)
    own64 = own.astype(np.float64)
    if not np.isfinite(own64).all():
        raise Mismatch(what, "your output has NaN or inf", detail)
    if own64.size and (own64 == own64.flat[0]).all():
        raise Mismatch(
            what, "your output is one number everywhere: it does not depend on the input", detail
        )
    if type(got) is not np.ndarray or got.dtype.kind not in "iuf" or got.shape != own.shape:
        raise Mismatch(what, "your two outputs are not numeric arrays of one shape", detail)
    got64 = got.astype(np.float64)
    off = _outside(got64, own64, allowed(own64, rtol, atol))
    if off.any():
        raise Mismatch(
            what,
            "your outputs differ where the property says they are equal",
            detail,
            arrays={"expected": own64, "got": got64},
        )
