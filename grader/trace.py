"""`grade trace`: the course's worked example through a student's own functions, step by step, beside the reference.

The course's trace module (course.json ``feedback.trace``) defines ``steps(functions, **case)``, which yields
``(step, function responsible, value)`` with every value computed by ``functions`` from the previous steps, and
``cases()``, every case it takes. The reference's values come from ``feedback.trace_data`` (written by
``grade precompute``), so a student's copy needs no solutions. The student's functions run in the sandboxed worker
through the same proxy as grading (:class:`grader.sandbox.Worker`, :class:`grader.proxy.Student`).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

import numpy as np

from .compare import same_array
from .course import Course
from .errors import GradeError, StudentError
from .mistakes import import_course_module
from .proxy import Student
from .sandbox import Worker

RTOL, ATOL = 1e-5, 1e-8          # a step matches the reference as a test's default check would


@dataclass(frozen=True)
class Step:
    """One step of the worked example.

    :param name: what the step is, e.g. "LayerNorm(x)".
    :param function: the student function that computes it from the previous steps ("" for the trace's own sums).
    :param yours: the student's value (float64, any shape), or None when their code failed here.
    :param reference: the reference's value.
    :param error: why there is no value (the student's code raised, timed out, returned something unusable).
    """

    name: str
    function: str
    yours: np.ndarray | None
    reference: np.ndarray
    error: str = ""

    @property
    def matches(self) -> bool:
        return self.yours is not None and same_array(self.yours, self.reference, rtol=RTOL, atol=ATOL)

    def rows_off(self) -> list[int]:
        """0-based rows (first axis) where the student's value differs; every row when the shapes differ."""
        if self.yours is None or self.yours.shape != self.reference.shape:
            return list(range(len(self.reference)))
        off = ~np.isclose(self.yours, self.reference, rtol=RTOL, atol=ATOL, equal_nan=True)
        return [int(i) for i in np.flatnonzero(off.reshape(len(off), -1).any(axis=1))]


@dataclass(frozen=True)
class Trace:
    """The steps the student's code got through, and the index of the first that differs (None: all match)."""

    case: dict
    steps: tuple[Step, ...]

    @property
    def first_difference(self) -> int | None:
        return next((i for i, s in enumerate(self.steps) if not s.matches), None)


def case_key(case: dict) -> str:
    """The key of a case in the trace data, e.g. ``{"change_last": false, "no_attention": false, "row_x10": 3}``."""
    return json.dumps(case, sort_keys=True)


def reference_data(module: Any, functions: Any) -> dict:
    """The JSON data for ``feedback.trace_data``: every case's steps with the reference's values."""
    cases = {}
    for case in module.cases():
        cases[case_key(case)] = [{"name": name, "function": function,
                                  "value": np.asarray(value, dtype=np.float64).round(12).tolist()}
                                 for name, function, value in module.steps(functions, **case)]
    return {"cases": cases}


def _as_array(value: Any) -> np.ndarray | None:
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        return None
    return array


def run(course: Course, folder: Path, case: dict) -> Trace:
    """Run the worked example's ``case`` through the functions in ``folder``, in the sandboxed worker.

    :raises GradeError: the course has no trace, its data is missing, or it has no reference for ``case``.
    """
    feedback = course.feedback
    if feedback.trace is None or feedback.trace_data is None:
        raise GradeError(f"{course.path}: field 'feedback': this course has no worked example to trace")
    try:
        data = json.loads(feedback.trace_data.read_text())
    except (OSError, ValueError) as err:
        raise GradeError(f"{feedback.trace_data}: the reference's trace is unreadable ({err}); "
                         "instructors: run `grade precompute`") from None
    reference = data["cases"].get(case_key(case))
    if reference is None:
        raise GradeError(f"no reference for this case; the worked example has {_rows(data)} rows")
    module = import_course_module(feedback.trace)
    with Worker(folder, course.limits, modules=course.modules, functions=course.functions) as worker:
        student = Student(worker, course.functions, course.limits)
        return Trace(case, tuple(_steps(module.steps(student, **case), reference)))


def _rows(data: dict) -> int:
    first = next(iter(data["cases"].values()))
    return len(first[0]["value"])


def _steps(computed: Iterable, reference: list[dict]) -> Iterable[Step]:
    """Pair the student's steps with the reference's, stopping after the first step their code could not give."""
    computed = iter(computed)
    for ref in reference:
        expected = np.asarray(ref["value"], dtype=np.float64)
        try:
            name, function, value = next(computed)
        except StopIteration:
            return
        except StudentError as err:
            yield Step(ref["name"], ref["function"], None, expected, err.message)
            return
        except Exception as err:                         # e.g. a wrong shape that the next step cannot use
            yield Step(ref["name"], ref["function"], None, expected,
                       f"could not compute this step from your previous values ({type(err).__name__}: {err})")
            return
        yours = _as_array(value)
        error = "" if yours is not None else f"{function}() returned {type(value).__name__}, not numbers"
        yield Step(name, function, yours, expected, error)
