"""Comparisons for the suites, run in the grader process on plain data returned by the worker.

The verdict is kept apart from the explanation (as in pytest's ``approx``): each check raises
:class:`Mismatch`, whose ``public`` text is safe to show for a hidden test and whose ``detail`` adds, for
public tests, everything about the student's value and the numbers (:mod:`grader.feedback.diff`). No method of a
student object is ever called here: the worker only sends ndarrays and JSON data.

A check given ``diagnose=`` asks it, after a failure, which known mistake the student's output matches
(see :mod:`grader.feedback.mistakes`); the check itself never changes.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from grader.errors import StudentError
from grader.feedback import diff

__all__ = ["Diagnosis", "Mismatch", "either", "assert_array", "assert_attempt", "assert_close", "assert_close_any",
           "assert_close_own", "assert_equal", "assert_keys", "assert_raises", "assert_types", "same_array"]


@dataclass(frozen=True)
class Diagnosis:
    """A known mistake that a student's output matches: its catalogue id and one line the student can act on.
    Or a hint (id ``hint.<what>``): a fact about the student's outputs when no known mistake explains them
    ("right with 1 head, wrong with 2"), true whatever the mistake behind it."""

    mistake: str
    message: str


Same = Callable[[Any, Any], bool]
"""``same(got, candidate)``: does ``got`` pass the check against ``candidate``, with the check's tolerance?"""

Diagnose = Callable[[Any, Sequence[Any], Same], "Diagnosis | None"]
"""``diagnose(got, expected, same)``: the one known mistake ``got`` matches (never one that ``same`` also
finds in an ``expected`` value), or None."""


def either(*diagnoses: Diagnose) -> Diagnose:
    """The first of ``diagnoses`` that names something: the catalogue's known mistakes first, then a test's
    own hint, a fact about the student's outputs (e.g. "right with one head, wrong with two") that holds
    whatever the mistake behind it."""
    def diagnose(got: Any, expected: Sequence[Any], same: Same) -> "Diagnosis | None":
        for candidate in diagnoses:
            found = candidate(got, expected, same)
            if found is not None:
                return found
        return None

    return diagnose


class Mismatch(AssertionError):
    """A failed comparison.

    A hidden test's output (:attr:`public`) is made of the grader's own words only. Nothing in it may come
    from the student's value, not even its shape, dtype, type, keys or how many entries are NaN: their
    code chooses those, and could write a hidden input into them (say, as the dims of a zero-size array)
    to read it back in the feedback. What is wrong with their value in particular goes in ``detail``.

    :param what: the plain sentence saying what was checked, e.g. "layernorm of a 3×4 input with eps = 0.1".
    :param wrong: what is wrong, in fixed words and facts about the expected value only (its type, shape,
        key names), e.g. "wrong shape: expected (3, 4)": shown for hidden tests.
    :param detail: the student's value and the numbers: their shape and dtype, errors against the
        tolerance, indices, an excerpt (public tests only); or a function that makes that text, called
        only if it is read (a hidden test never shows it).
    :param arrays: ``{"expected": ..., "got": ...}``, float64 arrays of one shape, for the feedback page.
    """

    def __init__(self, what: str, wrong: str, detail: str | Callable[[], str] = "", *,
                 arrays: Mapping[str, np.ndarray] | None = None):
        self.what, self.wrong, self._detail = what, wrong, detail
        self.arrays = dict(arrays or {})
        self.diagnosis: Diagnosis | None = None
        super().__init__(what)

    @property
    def detail(self) -> str:
        if callable(self._detail):
            self._detail = self._detail()
        return self._detail

    def __str__(self) -> str:
        return self.full

    @property
    def public(self) -> str:
        """The sentence, what is wrong, and the diagnosis: no inputs, no expected values, nothing of the
        student's value."""
        text = f"{self.what}: {self.wrong}"
        return text + (f"\ndiagnosis: {self.diagnosis.message}" if self.diagnosis else "")

    @property
    def full(self) -> str:
        return self.public + (f"\n{self.detail}" if self.detail else "")

    def feedback(self, public: bool) -> dict:
        """What a feedback page may use: the diagnosed mistake's id, and the arrays only when ``public``."""
        data: dict = {"diagnosis": self.diagnosis.mistake} if self.diagnosis else {}
        if public and self.arrays:
            data.update(self.arrays)
        return data


def _a(noun: str) -> str:
    return ("an " if noun[0] in "aeiou" else "a ") + noun


def _describe(value: Any) -> str:
    """The student's value in a few words, for ``detail`` only."""
    if isinstance(value, np.ndarray):
        return f"an array of shape {value.shape} and dtype {value.dtype}"
    if isinstance(value, (bool, int, float)):
        return f"{_a(type(value).__name__)} ({value!r})"
    return _a(type(value).__name__)


def _check_array(got: Any, expected: np.ndarray, what: str) -> np.ndarray:
    """Type, dtype and shape, in that order; returns ``got`` as float64."""
    if type(got) is not np.ndarray:
        raise Mismatch(what, f"expected a numpy array of shape {expected.shape}, got another kind of value",
                       f"yours: {_describe(got)}")
    if got.dtype.kind not in "iuf":
        raise Mismatch(what, "wrong dtype: expected a float array", diff.describe(got, expected))
    if got.shape != expected.shape:
        raise Mismatch(what, f"wrong shape: expected {expected.shape}", diff.describe(got, expected))
    return got.astype(np.float64)


def _check_finite(got: np.ndarray, got64: np.ndarray, expected: np.ndarray, what: str, rtol: float,
                  atol: float) -> None:
    """NaN or inf where ``expected`` is finite, said before any value."""
    bad = ~np.isfinite(got64) & np.isfinite(expected)
    if bad.any():                                        # which of NaN or inf, and how many: detail
        raise Mismatch(what, "your output has NaN or inf where the expected values are finite",
                       lambda: "\n".join([diff.describe(got, expected), diff.non_finite(got64, bad),
                                          diff.excerpt(got64, expected, _outside(got64, expected, allowed(expected, rtol, atol)))]),
                       arrays={"expected": expected, "got": got64})


def allowed(expected: np.ndarray, rtol: float, atol: float) -> float:
    """How far an entry may be from ``expected``'s: ``atol + rtol · max |expected|``, one figure for the
    whole array (its finite entries). Scaled to the array's magnitude, not to each entry: an entry near 0
    computed with a float32 rounding, or by a different but equally exact formula, is as right as the
    large ones, so a near miss fails only a test that asks for that precision."""
    finite = np.abs(expected[np.isfinite(expected)])
    return float(atol + rtol * finite.max()) if finite.size else float(atol)


def _outside(got64: np.ndarray, expected: np.ndarray, tolerance: float) -> np.ndarray:
    """Boolean array of the entries farther than ``tolerance`` (:func:`allowed`) from ``expected``'s; NaN =
    NaN, inf = the same inf."""
    with np.errstate(invalid="ignore", over="ignore"):
        close = np.abs(got64 - expected) <= tolerance
    close &= np.isfinite(got64) & np.isfinite(expected)
    close |= got64 == expected
    close |= np.isnan(got64) & np.isnan(expected)
    return ~close


def same_array(got: Any, candidate: Any, *, rtol: float = 1e-5, atol: float = 1e-8) -> bool:
    """True when ``got`` is a numeric ndarray of ``candidate``'s shape within the tolerance, NaN and inf
    in the same places (a mistake that makes NaN matches a student's NaN).

    The first entry is checked alone first: a diagnosis tries dozens of candidates, and most differ there.
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
        if first != wanted and not (first != first and wanted != wanted) and not (
                math.isfinite(first) and math.isfinite(wanted) and abs(first - wanted) <= tolerance):
            return False
    return not _outside(got.astype(np.float64), candidate, tolerance).any()


def assert_close(got: Any, expected: Any, *, what: str, rtol: float = 1e-5, atol: float = 1e-8,
                 diagnose: Diagnose | None = None) -> None:
    """Check that ``got`` is a finite numeric ndarray of ``expected``'s exact shape, within tolerance.

    :param got: what the student's function returned (as decoded from the worker).
    :param expected: the expected values; any array-like, compared in float64.
    :param what: one plain sentence for the message.
    :param rtol, atol: entries pass when ``|got - expected| <= atol + rtol · max |expected|`` (see
        :func:`allowed`: the tolerance is scaled to the array's magnitude, not to each entry).
    :param diagnose: asked after a failure which known mistake ``got`` matches (see :data:`Diagnose`).
    :raises Mismatch: on a wrong type, dtype, shape, NaN/inf, or values outside the tolerance.
    """
    assert_close_any(got, {"": expected}, what=what, rtol=rtol, atol=atol, diagnose=diagnose)


def assert_close_any(got: Any, candidates: Mapping[str, Any], *, what: str, rtol: float = 1e-5,
                     atol: float = 1e-8, diagnose: Diagnose | None = None) -> str:
    """Like :func:`assert_close`, passing when ``got`` matches any of the candidate arrays.

    :param candidates: name -> expected array; the first one is reported on failure. NaN and inf in the
        same places as in a candidate match it.
    :returns: the name of the first candidate matched.
    :raises Mismatch: when no candidate matches.
    """
    items = [(name, np.asarray(exp, dtype=np.float64)) for name, exp in candidates.items()]
    same = partial(same_array, rtol=rtol, atol=atol)
    try:
        got64 = _check_array(got, items[0][1], what)
        for name, exp in items:
            if exp.shape == got64.shape and not _outside(got64, exp, allowed(exp, rtol, atol)).any():
                return name
        expected = items[0][1]
        tolerance = allowed(expected, rtol, atol)
        _check_finite(got, got64, expected, what, rtol, atol)
        raise Mismatch(what, "values differ from the expected ones beyond the tolerance",
                       lambda: diff.describe(got, expected) + "\n" + diff.values(
                           got64, expected, _outside(got64, expected, tolerance), rtol, atol, tolerance),
                       arrays={"expected": expected, "got": got64})
    except Mismatch as err:
        if diagnose is not None:
            err.diagnosis = diagnose(got, [exp for _, exp in items], same)
        if err.diagnosis is None:
            err.diagnosis = scaled(got, items[0][1], same)
        raise


def scaled(got: Any, expected: np.ndarray, same: Same) -> Diagnosis | None:
    """A fact when no known mistake explains ``got``: it is the expected array times one constant (other than
    1), within the check's tolerance. Such a factor (2x GELU, a score scale) is then the whole difference."""
    if type(got) is not np.ndarray or got.shape != expected.shape or got.dtype.kind not in "fiu":
        return None
    got64 = got.astype(np.float64)
    norm = float(np.sum(expected * expected))
    if not np.isfinite(got64).all() or not np.isfinite(norm) or norm == 0:
        return None
    ratio = float(np.sum(got64 * expected)) / norm
    if abs(ratio) < 1e-3 or math.isclose(ratio, 1.0, rel_tol=1e-3) or not same(got64, ratio * expected):
        return None
    return Diagnosis("hint.scaled", f"your output is the expected one times {ratio:.4g}, everywhere: look for a "
                               "constant factor that is missing, extra or wrong")


def assert_array(got: Any, shape: tuple[int, ...], dtypes: Sequence[Any] = (), *, what: str) -> np.ndarray:
    """``got`` is a numeric ndarray of ``shape`` (and of one of ``dtypes`` when given): the check a property
    test makes before it indexes or reshapes the student's value. Returns ``got``.

    :raises Mismatch: naming the expected shape or dtype (the student's: detail only).
    """
    if type(got) is not np.ndarray or got.dtype.kind not in "iuf":
        raise Mismatch(what, f"expected a numeric array of shape {tuple(shape)}, got another kind of value",
                       f"yours: {_describe(got)}")
    if got.shape != tuple(shape):
        raise Mismatch(what, f"wrong shape: expected {tuple(shape)}", f"yours: {_describe(got)}")
    if dtypes and got.dtype not in [np.dtype(d) for d in dtypes]:
        raise Mismatch(what, f"wrong dtype: expected {' or '.join(str(np.dtype(d)) for d in dtypes)}",
                       f"yours: {_describe(got)}")
    return got


ATTEMPT = 0.3      # how far (of the largest expected value) an output may be and still count as the function's


def assert_attempt(got: Any, expected: Any, *, what: str, rtol: float = ATTEMPT) -> None:
    """Before a property test's points: ``got`` is an attempt at the specified function, within ``rtol`` of
    the largest expected value. A numeric slip (ddof=1, another eps or constant, a float32 computation, a
    scale) is well inside; a function that merely has the property (sign(x - mean) is as invariant to a
    row's scale as LayerNorm, u @ W_v @ W_o is as causal as attention) is not.

    :raises Mismatch: in the grader's words only (a hidden test shows nothing of the student's value).
    """
    try:
        assert_close(got, expected, rtol=rtol, atol=0.0, what=what)
    except Mismatch as err:
        raise Mismatch(what, f"your output is too far from the specified function's (more than {rtol:.0%} of "
                             "its largest value) for this property to count", lambda: err.detail) from None


def assert_close_own(got: Any, own: Any, *, what: str, rtol: float = 1e-5, atol: float = 1e-8) -> None:
    """A property of the student's own outputs: ``got`` must match ``own``, another of their outputs (the
    output for a row scaled by 10 against the output for the row, say), within the tolerance of
    :func:`assert_close` scaled to ``own``.

    ``own`` must be a finite numeric array that is not one number everywhere: an output that ignores its
    input (all zeros, a uniform softmax) holds every such property and proves nothing. Both values are the
    student's, and either could carry a hidden input: the public words name neither's shape nor values.

    :raises Mismatch: when ``own`` is no such array, ``got`` is not an array of its shape, or they differ.
    """
    def detail() -> str:
        return "\n".join(
            [f"the first output: {_describe(own)}; the second: {_describe(got)}"]
            + ([diff.values(got64, own64, off, rtol, atol, allowed(own64, rtol, atol))] if off is not None else []))

    off = got64 = own64 = None
    if type(own) is not np.ndarray or own.dtype.kind not in "iuf":
        raise Mismatch(what, "your function did not return a numeric array", detail)
    own64 = own.astype(np.float64)
    if not np.isfinite(own64).all():
        raise Mismatch(what, "your output has NaN or inf", detail)
    if own64.size and (own64 == own64.flat[0]).all():
        raise Mismatch(what, "your output is one number everywhere: it does not depend on the input", detail)
    if type(got) is not np.ndarray or got.dtype.kind not in "iuf" or got.shape != own.shape:
        raise Mismatch(what, "your two outputs are not numeric arrays of one shape", detail)
    got64 = got.astype(np.float64)
    off = _outside(got64, own64, allowed(own64, rtol, atol))
    if off.any():
        raise Mismatch(what, "your outputs differ where the property says they are equal", detail,
                       arrays={"expected": own64, "got": got64})


def assert_raises(call: Callable[[], Any], exception: type[BaseException], *, what: str) -> None:
    """``call()`` (a call of a student function) must raise ``exception``, a built-in exception class, or
    a subclass of it. Any other failure of the call (a timeout, NotImplementedError) stands as it is.

    :raises Mismatch: when the call returns, or raises another exception.
    """
    try:
        call()
    except StudentError as err:
        if err.kind != "raised":
            raise
        if exception.__name__ not in err.builtins:
            raise Mismatch(what, f"expected {exception.__name__}, got another exception", err.public) from None
        return
    except exception:                    # a function called in this process (the bench's baseline)
        return
    raise Mismatch(what, f"expected {exception.__name__} to be raised, but the call returned a value")


def _number(value: Any) -> bool:
    """An int or a float of Python or numpy (not a bool): a count to compare by value."""
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))


def _equal_mismatch(got: Any, expected: Any, what: str) -> Mismatch | None:
    """The Mismatch for plain data whose values differ, or None when equal. Numbers compare by value
    (7.0 is 7), a dict by the expected keys (extra keys are :func:`assert_keys`' business)."""
    if isinstance(expected, dict):
        if type(got) is not dict:
            return Mismatch(what, f"expected a dict with keys {sorted(expected)}, got another kind of value",
                            f"yours: {_describe(got)}")
        missing = sorted(set(expected) - set(got))      # the expected keys may be named, never theirs
        if missing:
            return Mismatch(what, f"missing keys {missing}")
        for key in expected:
            if _number(expected[key]) and not _number(got[key]):
                return Mismatch(what, f"{key!r} should be a number", f"yours: {_describe(got[key])}")
        wrong = [key for key in expected if _equal_mismatch(got[key], expected[key], what) is not None]
        if wrong:
            lines = [f"{key!r}: yours {got[key]!r}, expected {expected[key]!r}"
                     + (f" (off by {got[key] - expected[key]:+,})" if _number(expected[key]) else "")
                     for key in wrong]
            noun = "is not the expected count" if len(wrong) == 1 else "are not the expected counts"
            return Mismatch(what, f"{', '.join(map(repr, wrong))} {noun}", "\n".join(lines))
        return None
    if _number(expected):
        if not _number(got):
            return Mismatch(what, "expected a number, got another kind of value", f"yours {got!r}, expected {expected!r}")
        if got != expected:
            return Mismatch(what, "not the expected value", f"yours {got!r}, expected {expected!r}")
        return None
    if type(got) is not type(expected):
        return Mismatch(what, f"expected {_a(type(expected).__name__)}, got another kind of value",
                        f"yours: {_describe(got)}")
    if got != expected:
        return Mismatch(what, "not the expected value", f"yours {got!r}, expected {expected!r}")
    return None


def _dict_of(got: Any, expected: dict, what: str) -> None:
    if type(got) is not dict:
        raise Mismatch(what, f"expected a dict with keys {sorted(expected)}, got another kind of value",
                       f"yours: {_describe(got)}")


def assert_keys(got: Any, expected: dict, *, what: str) -> None:
    """A dict with exactly ``expected``'s keys, whatever its values.

    :raises Mismatch: naming the missing keys, and saying (never naming) that there are others.
    """
    _dict_of(got, expected, what)
    if set(got) != set(expected):                        # the expected keys may be named, never theirs
        missing, extra = sorted(set(expected) - set(got)), sorted(set(got) - set(expected), key=str)
        wrong = " and ".join(([f"missing {missing}"] if missing else [])
                             + (["has keys that are not expected"] if extra else []))
        raise Mismatch(what, f"wrong keys: {wrong}", f"unexpected keys: {extra}" if extra else "")


def assert_types(got: Any, expected: Any, *, what: str) -> None:
    """The kind of value, whatever the value: each value of the very type of ``expected``'s (a Python
    ``int``, not ``7.0``, ``True`` or ``numpy.int64``); for a dict, at each expected key (other keys are
    :func:`assert_keys`' business).

    :raises Mismatch: naming the missing keys or the first key of the wrong type.
    """
    if isinstance(expected, dict):
        _dict_of(got, expected, what)
        missing = sorted(set(expected) - set(got))
        if missing:
            raise Mismatch(what, f"missing keys {missing}")
        for key in expected:
            assert_types(got[key], expected[key], what=f"{what}: {key!r}")
        return
    if type(got) is not type(expected):
        raise Mismatch(what, f"should be {_a(type(expected).__name__)}", f"yours: {_describe(got)}")


def assert_equal(got: Any, expected: Any, *, what: str, diagnose: Diagnose | None = None) -> None:
    """Equality of values for plain data: numbers, strings, and dicts of them (e.g. parameter counts).

    ``7.0`` and ``numpy.int64(7)`` are accepted for ``7`` (``True`` is not), and a dict is compared on the
    expected keys: the types and the exact keys are checks of their own (:func:`assert_types`,
    :func:`assert_keys`).

    :param diagnose: asked after a failure which known mistake ``got`` matches (see :data:`Diagnose`).
    :raises Mismatch: naming the keys or the value that differ.
    """
    def same(a: Any, b: Any) -> bool:
        return _equal_mismatch(a, b, what) is None

    err = _equal_mismatch(got, expected, what)
    if err is None:
        return
    if diagnose is not None:
        err.diagnosis = diagnose(got, [expected], same)
    raise err


def split_diagnosis(test: Mapping) -> tuple[str | None, str]:
    """A score document's test entry -> (the grader's diagnosis message or None, the rest of its output).

    Only a test the grader diagnosed (its entry has a ``diagnosis`` id) has one, always the output's second
    line (:attr:`grader.feedback.compare.Mismatch.public`): a line "diagnosis: ..." that the student's code printed is
    part of the output like any other.
    """
    output = test.get("output", "")
    first, _, rest = output.partition("\n")
    line, _, after = rest.partition("\n")
    if test.get("diagnosis") and line.startswith("diagnosis: "):
        return line[len("diagnosis: "):], first + ("\n" + after if after else "")
    return None, output
