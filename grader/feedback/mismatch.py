"""A failed check and what explains it: :class:`Mismatch` (a hidden test's words kept apart from the
student's value), the :class:`Diagnosis` of a known mistake, and the diagnose protocol a check asks
after a failure (see :mod:`grader.feedback.mistakes`). The checks themselves are
:mod:`grader.feedback.compare`'s.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from grader.errors import GraderFault, StudentError


@dataclass(frozen=True)
class Diagnosis:
    """A known mistake that a student's output matches: its catalogue id and one line the student
    can act on. Or a hint (id ``hint.<what>``): a fact about the student's outputs when no known
    mistake explains them ("right with 1 head, wrong with 2"), true whatever the mistake behind
    it."""

    mistake: str
    message: str


Same = Callable[[Any, Any], bool]
"""``same(got, candidate)``: does ``got`` pass the check against ``candidate``, with the check's
tolerance? A check may give it a ``loose`` attribute, the same test with a tolerance :data:`FAR`
times as wide (see :class:`Evidence`)."""

FAR = 10
"""How many tolerances apart two outputs must be for an input to tell them apart beyond doubt: a
student's output within the tolerance of a mistake's says little when the correct answer, or another
mistake's, is a tolerance or two away (the course's 3-decimal checks, the toy's degenerate
weights)."""


@dataclass(frozen=True)
class Evidence:
    """What one failed check says about the catalogue's mistakes
    (:func:`grader.feedback.mistakes.evidence`).

    :param matched: the ids (a :func:`~grader.feedback.mistakes.fit` family's members apart) of the
        mistakes whose output the student's matches here, within the check's tolerance (none that is
        also the expected value).
    :param strong: those of ``matched`` whose output here is :data:`FAR` tolerances from the
        expected value and from every other mistake's: this input tells them apart beyond doubt.
    :param best: family -> the message of its member closest to the student's output, for each
        family matched.
    :param owners: family -> the problem whose functions it is a mistake of (empty: unknown, the
        check's own).
    """

    matched: frozenset[str] = frozenset()
    strong: frozenset[str] = frozenset()
    best: Mapping[str, str] = field(default_factory=dict)
    owners: Mapping[str, str] = field(default_factory=dict)

    def families(self) -> frozenset[str]:
        return frozenset(family(mid) for mid in self.matched)

    def __or__(self, other: "Evidence") -> "Evidence":
        return Evidence(
            self.matched | other.matched,
            self.strong | other.strong,
            {**self.best, **other.best},
            {**self.owners, **other.owners},
        )


def family(mistake_id: str) -> str:
    """The mistake a catalogue id belongs to: ``"layernorm.eps@1e-06"`` -> ``"layernorm.eps"`` (the
    members of a :func:`~grader.feedback.mistakes.fit` family)."""
    return mistake_id.partition("@")[0]


def loose(same: Same) -> Same:
    """``same`` with the wide tolerance its check gave it, or ``same`` itself (an exact check: any
    difference is far more than its tolerance of none)."""
    return getattr(same, "loose", None) or same


def far_apart(a: Any, b: Any, same: Same) -> bool:
    """``a`` and ``b`` differ by far more than the check's tolerance (:data:`FAR` of them), either
    way round."""
    wide = loose(same)
    for x, y in ((a, b), (b, a)):
        try:
            if wide(x, y):
                return False
        except Exception:  # e.g. a dict against an array: nothing alike
            pass
    return True


Diagnose = Callable[[Any, Sequence[Any], Same], "Diagnosis | None"]
"""``diagnose(got, expected, same)``: the one known mistake ``got`` matches (never one that
``same`` also finds in an ``expected`` value), or None."""


def either(*diagnoses: Diagnose) -> Diagnose:
    """The first of ``diagnoses`` that names something: the catalogue's known mistakes first, then a
    test's own hint, a fact about the student's outputs (e.g. "right with one head, wrong with two")
    that holds whatever the mistake behind it."""

    def diagnose(got: Any, expected: Sequence[Any], same: Same) -> "Diagnosis | None":
        for candidate in diagnoses:
            found = candidate(got, expected, same)
            if found is not None:
                return found
        return None

    def compared(same: Same) -> None:
        for candidate in diagnoses:
            told(candidate, same)

    diagnose.compared = compared
    diagnose.parts = diagnoses
    return diagnose


def told(diagnose: Diagnose | None, same: Same) -> None:
    """Tell ``diagnose`` how its check compares, whether the check passed or not: a catalogue that
    reports which mistakes coincide on the suites' inputs (``grade release``) needs each check's own
    tolerance."""
    compared = getattr(diagnose, "compared", None)
    if compared is not None:
        compared(same)


def _catalogued(diagnose: Diagnose) -> list:
    """The catalogue's calls among ``diagnose``'s parts (those that weigh evidence), as against a
    test's hints."""
    parts = getattr(diagnose, "parts", None)
    if parts is None:
        return [diagnose] if hasattr(diagnose, "evidence") else []
    return [call for part in parts for call in _catalogued(part)]


def diagnosed(
    err: "Mismatch", diagnose: Diagnose | None, got: Any, expected: Sequence[Any], same: Same
) -> None:
    """Ask ``diagnose`` about a failed check: the one mistake ``got`` matches, and what the
    catalogue's calls among it weigh (:class:`Evidence`: every mistake it could be, and which this
    input tells apart).

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
        calls = _catalogued(diagnose)
        if calls:
            err.evidence = _union([call.evidence(got, expected, same) for call in calls])
    except (StudentError, GraderFault):
        raise
    except Exception:
        err.diagnosis = err.evidence = None
        try:
            diagnose(expected[0], expected, same)
        except StudentError:  # the student's code, in a hint: not the suite's
            pass


def _union(found: Sequence[Evidence]) -> Evidence:
    total = Evidence()
    for one in found:
        total = total | one
    return total


class Mismatch(AssertionError):
    """A failed comparison.

    A hidden test's output (:attr:`public`) is made of the grader's own words only. Nothing in it
    may come from the student's value, not even its shape, dtype, type, keys or how many entries are
    NaN: their code chooses those, and could write a hidden input into them (say, as the dims of a
    zero-size array) to read it back in the feedback. What is wrong with their value in particular
    goes in ``detail``.

    :param what: the plain sentence saying what was checked, e.g. "layernorm of a 3×4 input with eps
        = 0.1".
    :param wrong: what is wrong, in fixed words and facts about the expected value only (its type,
        shape, key names), e.g. "wrong shape: expected (3, 4)": shown for hidden tests.
    :param detail: the student's value and the numbers: their shape and dtype, errors against the
        tolerance, indices, an excerpt (public tests only); or a function that makes that text,
        called only if it is read (a hidden test never shows it).
    :param arrays: ``{"expected": ..., "got": ...}``, float64 arrays of one shape, for the feedback
        page.
    """

    def __init__(
        self,
        what: str,
        wrong: str,
        detail: str | Callable[[], str] = "",
        *,
        arrays: Mapping[str, np.ndarray] | None = None,
    ):
        self.what, self.wrong, self._detail = what, wrong, detail
        self.arrays = dict(arrays or {})
        self.diagnosis: Diagnosis | None = None
        self.evidence: Evidence | None = None  # what the catalogue's calls weighed (None: none)
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
        """The sentence, what is wrong, and the diagnosis: no inputs, no expected values, nothing of
        the student's value."""
        text = f"{self.what}: {self.wrong}"
        return text + (f"\ndiagnosis: {self.diagnosis.message}" if self.diagnosis else "")

    @property
    def full(self) -> str:
        return self.public + (f"\n{self.detail}" if self.detail else "")

    def feedback(self, public: bool) -> dict:
        """What a feedback page may use: the diagnosed mistake's id, and the arrays only when
        ``public``."""
        data: dict = {"diagnosis": self.diagnosis.mistake} if self.diagnosis else {}
        if public and self.arrays:
            data.update(self.arrays)
        return data


def _a(noun: str) -> str:
    return ("an " if noun[0] in "aeiou" else "a ") + noun


SHOWN = 200  # characters of a student's value in a detail: not all of a list of 10,000


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
    """A score document's test entry -> (the grader's diagnosis message or None, the rest of its
    output).

    Only a test the grader diagnosed (its entry has a ``diagnosis`` id) has one, always the output's
    second line (:attr:`Mismatch.public`): a line "diagnosis: ..." that the student's code printed
    is part of the output like any other.
    """
    output = test.get("output", "")
    first, _, rest = output.partition("\n")
    line, _, after = rest.partition("\n")
    if test.get("diagnosis") and line.startswith("diagnosis: "):
        return line[len("diagnosis: ") :], first + ("\n" + after if after else "")
    return None, output
