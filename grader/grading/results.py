"""What grading produces, as plain data: one submission to grade (:class:`Job`), one test's outcome
(:class:`TestResult`), all of one submission's (:class:`Graded`). No pytest here: scoring reads
these.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Job:
    """One submission to grade: the student id and the folder holding their modules."""

    student: str
    path: Path


@dataclass(frozen=True)
class TestResult:
    """One test's outcome for one submission.

    :param status: ``passed``, ``failed`` (a wrong value) or ``error`` (the code raised, timed out,
        crashed).
    :param output: what the student may see: for hidden tests, no inputs, values or printed output.
    :param visibility: ``visible`` for public tests, ``after_published`` for hidden ones.
    :param kind: the failure's tag (``mismatch``, ``timeout``, ``import_error``, ...), empty when
        passed.
    :param feedback: for the feedback page: ``diagnosis`` (a known mistake's id), and where values
        may be shown, ``expected`` and ``got`` (arrays of a failed comparison) and ``figures``.
    :param property: a property test (``@pytest.mark.property``: the student's own outputs, not
        values).
    """

    name: str
    problem: str
    points: float
    status: str
    output: str
    visibility: str
    kind: str = ""
    feedback: dict = field(default_factory=dict)
    property: bool = False


@dataclass(frozen=True)
class Graded:
    """All the results for one submission, plus the wall-clock seconds it took and the isolation
    used.

    :param error: why the submission could not be graded, or was graded only in part (one sentence).
    :param grader_error: the grader's own machinery failed (:class:`~grader.errors.GraderFault`):
        the results are not the student's grade; the score file says ``status: "grader_error"``.
    """

    job: Job
    results: tuple[TestResult, ...]
    seconds: float
    sandbox: str
    error: str = ""
    grader_error: bool = False
