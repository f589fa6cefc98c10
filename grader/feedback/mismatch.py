"""A failed check and what explains it: :class:`Mismatch` (a hidden test's words kept apart from the
student's value), the :class:`Diagnosis` of a known mistake, and the diagnose protocol a check asks after a
failure (see :mod:`grader.feedback.mistakes`). The checks themselves are :mod:`grader.feedback.compare`'s.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from grader.errors import GraderFault, StudentError


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

    def explains(got: Any, expected: Sequence[Any], same: Same) -> frozenset[str] | None:
        found = [explained(candidate, got, expected, same) for candidate in diagnoses]
        return None if all(f is None for f in found) else frozenset().union(*(f for f in found if f))

    diagnose.explains = explains
    return diagnose


def explained(diagnose: Diagnose, got: Any, expected: Sequence[Any], same: Same) -> frozenset[str] | None:
    """The known mistakes whose outputs ``got`` matches on this call (by family, named uniquely or not), where
    ``diagnose`` can tell (the catalogue's); None where it cannot (a test's own hint)."""
    explains = getattr(diagnose, "explains", None)
    return explains(got, expected, same) if explains is not None else None


def diagnosed(err: "Mismatch", diagnose: Diagnose | None, got: Any, expected: Sequence[Any], same: Same) -> None:
    """Ask ``diagnose`` about a failed check: the one mistake ``got`` matches, and every one it
    could be.

    The failed check is the verdict; a diagnosis only explains it. So a diagnose that raises on the
    student's value (a hint that reads a dict's keys from the array a student returned, or int()
    of their NaN) gives no diagnosis, never a grader fault that withholds the whole grade: every
    hint of every suite, present and future, is covered here, not by each foreseeing every kind of
    value. It is then asked about ``expected[0]``, the suite's own value: a diagnose that raises
    there too is broken whatever the student returns, and that error stands (a grader fault, as any
    error in a suite's own code). The student's code failing inside a hint (StudentError) and the
    grader's machinery failing (GraderFault) stay what they are.
    """
    if diagnose is None:
        return
    try:
        err.diagnosis = diagnose(got, expected, same)
        err.explained_by = explained(diagnose, got, expected, same)
    except (StudentError, GraderFault):
        raise
    except Exception:
        err.diagnosis = err.explained_by = None
        try:
            diagnose(expected[0], expected, same)
        except StudentError:                     # the student's code, in a hint: not the suite's
            pass


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
        self.explained_by: frozenset[str] | None = None  # every known mistake the student's value matches
        super().__init__(what)

    @property
    def detail(self) -> str:
        """The text of ``detail``, made on first read. Made from the student's value, it is the one
        part of a failed check's words that could fail on a value nobody foresaw: that never changes
        the verdict and never becomes a grader fault; the detail then says it could not be made."""
        if callable(self._detail):
            try:
                self._detail = str(self._detail())
            except (StudentError, GraderFault):
                raise
            except Exception as exc:
                self._detail = f"(your value could not be described here: {type(exc).__name__})"
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


SHOWN = 200        # characters of a student's value in a detail: not all of a list of 10,000


def _shown(value: Any) -> str:
    """``repr(value)`` of a student's value, cut to :data:`SHOWN` characters (``detail`` only)."""
    text = repr(value)
    return text if len(text) <= SHOWN else text[:SHOWN] + " …"


def _describe(value: Any) -> str:
    """The student's value in a few words, for ``detail`` only."""
    if isinstance(value, np.ndarray):
        return f"an array of shape {value.shape} and dtype {value.dtype}"
    if isinstance(value, (bool, int, float)):
        return f"{_a(type(value).__name__)} ({value!r})"
    return _a(type(value).__name__)


def split_diagnosis(test: Mapping) -> tuple[str | None, str]:
    """A score document's test entry -> (the grader's diagnosis message or None, the rest of its output).

    Only a test the grader diagnosed (its entry has a ``diagnosis`` id) has one, always the output's second
    line (:attr:`Mismatch.public`): a line "diagnosis: ..." that the student's code printed is
    part of the output like any other.
    """
    output = test.get("output", "")
    first, _, rest = output.partition("\n")
    line, _, after = rest.partition("\n")
    if test.get("diagnosis") and line.startswith("diagnosis: "):
        return line[len("diagnosis: "):], first + ("\n" + after if after else "")
    return None, output
