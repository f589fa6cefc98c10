"""Checks of the values that are not float arrays: one float (a loss), one integer (a sampled
token, a count), an integer array (token ids), a dict of counts, and a random ``Generator`` after a
function drew from it. Like :mod:`grader.feedback.compare`'s array checks, each raises
:class:`~grader.feedback.mismatch.Mismatch` (fixed words for a hidden test, the student's value in
``detail`` for a public one) and, given ``diagnose=``, names the known mistake the value matches.

What a suite may pass to the student's code (``student.f(...)``,
``student.call_with_inputs("f", ...)``), copied into the sandboxed worker
(:mod:`grader.sandbox.child.protocol`), and how it arrives there:

- a numpy array of a numeric or bool dtype: an exact ``numpy.ndarray``, writable, C order (a
  subclass such as ``np.matrix`` or a masked array may not travel: ``np.asarray`` it);
- ``bool``, ``int``, ``float``, ``str``, ``None``: as they are; a numpy scalar (``np.float32(1)``,
  ``np.int64(3)``) arrives as the Python number (``float``, ``int``);
- a ``list`` or a ``tuple`` of these: a ``list`` (a tuple arrives as a list);
- a ``dict`` with ``str`` keys of these: a ``dict`` (other keys may not travel: a count by token id
  is an array, ``np.bincount``, or a dict keyed by ``str(token)``);
- a ``numpy.random.Generator`` (``np.random.default_rng(seed)``; a PCG64, PCG64DXSM, MT19937, Philox
  or SFC64 underneath): a new Generator in the same state, so the student's function draws what the
  suite's generator would draw next. The suite's own generator is not advanced (nor by
  ``reference``, which calls on copies); to see how far the function advanced it, call
  ``student.call_with_inputs`` (and ``reference.call_with_inputs``) and compare the argument it
  gives back with :func:`assert_draws`.

At most 16 arrays of 16 MiB each, 10,000 items and 16 levels of nesting per call. Anything else (a
set, a function, an object of a class of the course's) may not travel: the call is then the
suite's error. The same types come back from the student's function, and the checks here and in
:mod:`grader.feedback.compare` take them as they arrive.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from grader.feedback.mismatch import FAR, Diagnose, Mismatch, _describe, _shown, diagnosed, told

__all__ = [
    "Tolerance",
    "FLOAT64",
    "printed",
    "assert_float",
    "assert_int",
    "assert_ints",
    "assert_counts",
    "assert_draws",
]


@dataclass(frozen=True)
class Tolerance:
    """How far one float may be from the expected one, ``|got - expected| <= atol + rtol ·
    |expected|``, and why it is that size: said with the figures when a value falls outside it.

    :param why: a few words a student can weigh the figures by, e.g. "the course prints 3 decimals".
    """

    rtol: float
    atol: float
    why: str

    def allowed(self, expected: float) -> float:
        return self.atol + self.rtol * abs(expected)

    def __str__(self) -> str:
        return f"rtol {self.rtol:g}, atol {self.atol:g}: {self.why}"


FLOAT64 = Tolerance(1e-9, 1e-12, "float64 sums taken in another order differ in their last digits")


def printed(decimals: int) -> Tolerance:
    """The tolerance of a number printed with ``decimals`` decimals (a worked example's): half a
    unit of the last decimal, so a number one digit off in it fails."""
    return Tolerance(
        0.0,
        0.5 * 10.0**-decimals,
        f"a number printed with {decimals} decimals, within half a unit of the last",
    )


def _integer(value: Any) -> bool:
    """A Python or numpy integer; not a bool (True is not 1 here), not a float of a whole number."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _real(value: Any) -> bool:
    """A number (not a bool), or a numeric array with no axes (what ``np.asarray`` of one gives)."""
    if type(value) is np.ndarray:
        return value.shape == () and value.dtype.kind in "iuf"
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(
        value, (bool, np.bool_)
    )


def assert_float(
    got: Any,
    expected: float,
    *,
    what: str,
    tol: Tolerance = FLOAT64,
    diagnose: Diagnose | None = None,
) -> None:
    """One float (a loss, a norm, a probability) within ``tol`` of ``expected``. An int, or an array
    of no axes, is a float here; NaN or inf where ``expected`` is finite is said before any number.

    :raises Mismatch: not a number, not finite, or outside the tolerance (its figures and its why).
    """

    def same(a: Any, b: Any) -> bool:
        if not _real(a):
            return False
        a, b = float(a), float(b)
        return a == b or abs(a - b) <= tol.allowed(b)

    def loose(a: Any, b: Any) -> bool:  # FAR tolerances: what tells two values apart for sure
        return same(a, b) or (
            _real(a) and _real(b) and abs(float(a) - float(b)) <= FAR * tol.allowed(float(b))
        )

    same.loose = loose
    expected = float(expected)
    err = None
    if not _real(got):
        err = Mismatch(
            what,
            "expected a number (a float), got another kind of value",
            f"yours: {_describe(got)}",
        )
    elif not math.isfinite(float(got)) and math.isfinite(expected):
        err = Mismatch(
            what,
            "your value is NaN or inf where the expected one is finite",
            f"yours {float(got)!r}",
        )
    elif not same(got, expected):
        value = float(got)
        err = Mismatch(
            what,
            f"not within the tolerance of the expected value ({tol})",
            f"yours {value:.10g}, expected {expected:.10g}: off by "
            f"{value - expected:+.3g}, more than the {tol.allowed(expected):.3g} "
            "allowed",
        )
    told(diagnose, same)  # pass or fail: grade release notes its tolerance
    if err is not None:
        diagnosed(err, diagnose, got, [expected], same)
        raise err


def assert_int(got: Any, expected: int, *, what: str, diagnose: Diagnose | None = None) -> None:
    """One integer (a sampled token, an index, a count), compared exactly: a numpy integer is one;
    a float (``7.0``) or a bool is not.

    :raises Mismatch: not an integer, or another one (the detail: both, and the difference).
    """

    def same(a: Any, b: Any) -> bool:
        return _integer(a) and int(a) == int(b)

    err = None
    if not _integer(got):
        err = Mismatch(
            what,
            "expected an integer (integers are compared exactly), got another kind of value",
            f"yours: {_describe(got)}",
        )
    elif not same(got, expected):
        err = Mismatch(
            what,
            "not the expected integer (integers are compared exactly)",
            f"yours {int(got):,}, expected {int(expected):,} "
            f"(off by {int(got) - int(expected):+,})",
        )
    told(diagnose, same)  # pass or fail: grade release notes its tolerance
    if err is not None:
        diagnosed(err, diagnose, got, [expected], same)
        raise err


SHOWN_ENTRIES = 8  # differing entries of an integer array listed in a detail


def _ints_mismatch(got: Any, expected: np.ndarray, what: str) -> Mismatch | None:
    if type(got) is not np.ndarray:
        return Mismatch(
            what,
            f"expected a numpy array of integers of shape {expected.shape}, got "
            "another kind of value",
            f"yours: {_describe(got)}",
        )
    if got.dtype.kind not in "iu":
        return Mismatch(
            what,
            "wrong dtype: expected an integer array (integers are compared exactly)",
            f"yours: {_describe(got)}",
        )
    if got.shape != expected.shape:
        return Mismatch(what, f"wrong shape: expected {expected.shape}", f"yours: {_describe(got)}")
    off = got != expected
    if not off.any():
        return None
    lines = [f"{int(off.sum())} of {off.size} entries differ; the first:"] + [
        f"  [{', '.join(map(str, at))}]: yours {got[tuple(at)]}, expected {expected[tuple(at)]}"
        for at in np.argwhere(off)[:SHOWN_ENTRIES]
    ]
    return Mismatch(
        what,
        "entries differ from the expected ones (integers are compared exactly)",
        "\n".join(lines),
        arrays={"expected": expected.astype(np.float64), "got": got.astype(np.float64)},
    )


def assert_ints(got: Any, expected: Any, *, what: str, diagnose: Diagnose | None = None) -> None:
    """An integer array (token ids, indices, counts by position) of ``expected``'s shape, entry by
    entry exactly: any integer dtype passes, a float array does not (even of whole numbers).

    :raises Mismatch: wrong type, dtype or shape; or how many entries differ, the first few in the
        detail.
    """
    expected = np.asarray(expected)
    if expected.dtype.kind not in "iu":
        raise TypeError("assert_ints: the expected values must be an integer array")

    def same(a: Any, b: Any) -> bool:
        return _ints_mismatch(a, np.asarray(b), what) is None

    err = _ints_mismatch(got, expected, what)
    told(diagnose, same)  # pass or fail: grade release notes its tolerance
    if err is not None:
        diagnosed(err, diagnose, got, [expected], same)
        raise err


def _counts_mismatch(got: Any, expected: Mapping[str, int], what: str) -> Mismatch | None:
    if type(got) is not dict:
        return Mismatch(
            what,
            f"expected a dict with keys {sorted(expected)}, got another kind of value",
            f"yours: {_describe(got)}",
        )
    missing = sorted(set(expected) - set(got))  # the expected keys may be named, never theirs
    extra = sorted((k for k in got if k not in expected), key=str)
    wrong = [k for k in expected if k in got and not (_integer(got[k]) and got[k] == expected[k])]
    if not (missing or extra or wrong):
        return None
    said = [f"missing keys {missing}"] * bool(missing)
    said += ["has keys that are not expected"] * bool(extra)
    if wrong:
        noun = "is not the expected count" if len(wrong) == 1 else "are not the expected counts"
        said.append(f"{', '.join(map(repr, wrong))} {noun}")
    lines = [
        f"{k!r}: yours {_shown(got[k])}, expected {expected[k]:,} "
        + (f"(off by {int(got[k]) - expected[k]:+,})" if _integer(got[k]) else "(not an integer)")
        for k in wrong
    ] + [f"keys not expected: {_shown(extra)}"] * bool(extra)
    return Mismatch(what, "; ".join(said) + " (counts are compared exactly)", "\n".join(lines))


def assert_counts(
    got: Any, expected: Mapping[str, int], *, what: str, diagnose: Diagnose | None = None
) -> None:
    """A dict of counts (parameters by part, tokens by kind) with exactly ``expected``'s keys, each
    value an integer equal to the expected one. Every difference is said at once: the missing keys
    by name, that there are others (named in the detail only: they are the student's), and each
    wrong count with yours, the expected one and the difference.

    :raises Mismatch: not a dict, other keys, or other counts.
    """
    expected = dict(expected)

    def same(a: Any, b: Any) -> bool:
        return _counts_mismatch(a, b, what) is None

    err = _counts_mismatch(got, expected, what)
    told(diagnose, same)  # pass or fail: grade release notes its tolerance
    if err is not None:
        diagnosed(err, diagnose, got, [expected], same)
        raise err


SEARCHED = 10_000  # 64-bit words searched either way to say how far apart two generators are


def _state_equal(a: Any, b: Any) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_state_equal(a[k], b[k]) for k in a)
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return bool(np.array_equal(a, b))
    return type(a) is type(b) and a == b


def _words_apart(behind: np.random.Generator, ahead: np.random.Generator) -> int | None:
    """How many 64-bit words ``behind`` must draw to reach ``ahead``'s state (up to SEARCHED)."""
    walker = type(behind.bit_generator)()
    walker.state = behind.bit_generator.state
    goal = ahead.bit_generator.state["state"]
    for n in range(1, SEARCHED + 1):
        walker.random_raw()
        if _state_equal(walker.state["state"], goal):
            return n
    return None


def _draws_detail(got: np.random.Generator, expected: np.random.Generator) -> str:
    kinds = type(got.bit_generator).__name__, type(expected.bit_generator).__name__
    if kinds[0] != kinds[1]:
        return f"yours is a {kinds[0]} generator, expected a {kinds[1]} one"
    for n, word in ((_words_apart(expected, got), "more"), (_words_apart(got, expected), "fewer")):
        if n is not None:
            return (
                f"yours drew {n:,} 64-bit word{'s' * (n != 1)} {word} than expected (a float "
                "of rng.random() takes one; rng.normal() and bounded integers one or more)"
            )
    return f"yours is not within {SEARCHED:,} words of the expected state (draws of another kind?)"


def assert_draws(got: Any, expected: np.random.Generator, *, what: str) -> None:
    """A random Generator the student's function drew from (the argument ``call_with_inputs`` gives
    back) is in ``expected``'s state: it drew as many values, of the same kinds. Compared by the bit
    generator's state; the detail says how many 64-bit words apart the two are when they are close.
    (No ``diagnose=``: the known mistakes' outputs are what a function returns, not its arguments.)

    :raises Mismatch: not a Generator, or in another state.
    """
    if not isinstance(got, np.random.Generator):
        raise Mismatch(
            what,
            "expected a numpy random Generator, got another kind of value",
            f"yours: {_describe(got)}",
        )
    if not _state_equal(got.bit_generator.state, expected.bit_generator.state):
        raise Mismatch(
            what,
            "the generator is not in the state the specification leaves it in: "
            "your function drew another number or kind of random values from it",
            lambda: _draws_detail(got, expected),
        )
