"""Checks of plain data (numbers, strings, dicts of them: parameter counts, say) and of raised
exceptions, for the suites (through :mod:`grader.feedback.compare`): run in the grader process on
what the worker sent.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from grader.errors import StudentError
from grader.feedback.mismatch import Diagnose, Mismatch, _a, _describe, _shown, diagnosed, told


def assert_raises(call: Callable[[], Any], exception: type[BaseException], *, what: str) -> None:
    """``call()`` (a call of a student function) must raise ``exception``, a built-in exception
    class, or a subclass of it. Any other failure of the call (a timeout, NotImplementedError)
    stands as it is.

    :raises Mismatch: when the call returns, or raises another exception.
    """
    try:
        call()
    except StudentError as err:
        if err.kind != "raised":
            raise
        if exception.__name__ not in err.builtins:
            raise Mismatch(
                what, f"expected {exception.__name__}, got another exception", err.public
            ) from None
        return
    except exception:  # a function called in this process (the bench's baseline)
        return
    raise Mismatch(
        what, f"expected {exception.__name__} to be raised, but the call returned a value"
    )


def _number(value: Any) -> bool:
    """An int or a float of Python or numpy (not a bool): a count to compare by value."""
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(
        value, (bool, np.bool_)
    )


def _differ(got: Any, expected: Any) -> bool:
    """``got != expected`` for plain data; a comparison that cannot say (a list of arrays against a
    list of numbers: "the truth value of an array is ambiguous") is a difference, not an error."""
    try:
        return bool(got != expected)
    except Exception:
        return True


def _equal_mismatch(got: Any, expected: Any, what: str) -> Mismatch | None:
    """The Mismatch for plain data whose values differ, or None when equal. Numbers compare by value
    (7.0 is 7), a dict by the expected keys (extra keys are :func:`assert_keys`' business)."""
    if isinstance(expected, dict):
        if type(got) is not dict:
            return Mismatch(
                what,
                f"expected a dict with keys {sorted(expected)}, got another kind of value",
                f"yours: {_describe(got)}",
            )
        missing = sorted(set(expected) - set(got))  # the expected keys may be named, never theirs
        if missing:
            return Mismatch(what, f"missing keys {missing}")
        for key in expected:
            if _number(expected[key]) and not _number(got[key]):
                return Mismatch(
                    what, f"{key!r} should be a number", f"yours: {_describe(got[key])}"
                )
        wrong = [
            key for key in expected if _equal_mismatch(got[key], expected[key], what) is not None
        ]
        if wrong:
            lines = [
                f"{key!r}: yours {_shown(got[key])}, expected {expected[key]!r}"
                + (f" (off by {got[key] - expected[key]:+,})" if _number(expected[key]) else "")
                for key in wrong
            ]
            noun = "is not the expected count" if len(wrong) == 1 else "are not the expected counts"
            return Mismatch(what, f"{', '.join(map(repr, wrong))} {noun}", "\n".join(lines))
        return None
    if _number(expected):
        if not _number(got):
            return Mismatch(
                what,
                "expected a number, got another kind of value",
                f"yours {_shown(got)}, expected {expected!r}",
            )
        if _differ(got, expected):
            return Mismatch(
                what, "not the expected value", f"yours {_shown(got)}, expected {expected!r}"
            )
        return None
    if type(got) is not type(expected):
        return Mismatch(
            what,
            f"expected {_a(type(expected).__name__)}, got another kind of value",
            f"yours: {_describe(got)}",
        )
    if _differ(got, expected):
        return Mismatch(
            what, "not the expected value", f"yours {_shown(got)}, expected {expected!r}"
        )
    return None


def _dict_of(got: Any, expected: dict, what: str) -> None:
    if type(got) is not dict:
        raise Mismatch(
            what,
            f"expected a dict with keys {sorted(expected)}, got another kind of value",
            f"yours: {_describe(got)}",
        )


def assert_keys(got: Any, expected: dict, *, what: str) -> None:
    """A dict with exactly ``expected``'s keys, whatever its values.

    :raises Mismatch: naming the missing keys, and saying (never naming) that there are others.
    """
    _dict_of(got, expected, what)
    if set(got) != set(expected):  # the expected keys may be named, never theirs
        missing, extra = sorted(set(expected) - set(got)), sorted(set(got) - set(expected), key=str)
        wrong = " and ".join(
            ([f"missing {missing}"] if missing else [])
            + (["has keys that are not expected"] if extra else [])
        )
        raise Mismatch(what, f"wrong keys: {wrong}", f"unexpected keys: {extra}" if extra else "")


def assert_types(got: Any, expected: Any, *, what: str) -> None:
    """The kind of value, whatever the value: each value of the very type of ``expected``'s (a
    Python ``int``, not ``7.0``, ``True`` or ``numpy.int64``); for a dict, at each expected key
    (other keys are
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
    """Equality of values for plain data: numbers, strings, and dicts of them (e.g. parameter
    counts).

    ``7.0`` and ``numpy.int64(7)`` are accepted for ``7`` (``True`` is not), and a dict is compared
    on the expected keys: the types and the exact keys are checks of their own
    (:func:`assert_types`,
    :func:`assert_keys`).

    :param diagnose: asked after a failure which known mistake ``got`` matches (see
        :data:`Diagnose`).
    :raises Mismatch: naming the keys or the value that differ.
    """

    def same(a: Any, b: Any) -> bool:
        return _equal_mismatch(a, b, what) is None

    err = _equal_mismatch(got, expected, what)
    if err is None:
        told(diagnose, same)
        return
    diagnosed(err, diagnose, got, [expected], same)
    raise err
