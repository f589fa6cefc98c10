"""The feedback data that stands in for the solutions where they are not: computed by
``grade release`` into the student's release, and live where they are (the instructor's checkout,
so an edit counts at once).

It is never committed: a stored copy would go stale unseen, and differ in its last bits from what
another machine's numpy computes.

- ``mistakes_data``: the known mistakes' outputs on every call the public suites diagnose. The
  calls are found by grading the reference solutions with the public suites through the same path
  as real grading (:func:`grader.grading.executors.run`), the suites' ``mistakes`` fixture the
  catalogue noting each call (:class:`~grader.feedback.recorder.Recorder`), so they are the calls
  a student's ``grade check`` makes.
- ``trace_data``: the reference's value at every step of every case of the worked example,
  computed in this process (its inputs are the course's own worked example, never a student's).
"""

from __future__ import annotations

import json
import textwrap
from functools import partial
from pathlib import Path

import numpy as np

from grader.course.manifest import Course
from grader.course.modules import import_course_module
from grader.errors import GradeError
from grader.feedback.mismatch import family
from grader.feedback.outputs import call_key
from grader.feedback.recorder import Recorder, coincidences, precompute
from grader.feedback.trace import reference_data
from grader.grading.reference import load_reference


def _solutions_here(course: Course) -> bool:
    return course.solutions is not None and course.solutions.is_dir()


def public_calls(course: Course, hidden: bool = False) -> Recorder:
    """The catalogue, with every call the public suites (and, with ``hidden``, the hidden ones too)
    asked it about (passed or failed) while they graded the reference.

    :raises GradeError: the reference fails a public test: one line per test, naming it and what
        it said (a catalogued mistake it makes named too).
    """
    from grader import scoring
    from grader.grading import executors
    from grader.grading.results import Graded, Job
    from grader.sandbox.policy import PROCESS

    if not _solutions_here(course):
        raise GradeError(
            f"{course.path}: field 'solutions': the feedback data is computed from "
            "the reference solutions, which are not here"
        )
    recorder, graded = Recorder.for_course(course), []

    def keep(result: Graded) -> None:
        graded.append(result)

    executors.run(
        course,
        [Job("reference", course.solutions)],
        keep,
        hidden=hidden,
        level=PROCESS,
        warm=False,
        mistakes=recorder,
    )
    (result,) = graded
    tests = scoring.score(course, result, hidden=False)["tests"]
    suites = {p.name: p.public.relative_to(course.root) for p in course.problems}
    failed = [
        f"{suites[t['problem']]}::{t['name']}: {_one_line(t['output'])}"
        for t in tests
        if t["status"] != "passed"
    ]
    if result.error and not failed:
        failed.append(f"{course.solutions}: {_one_line(result.error)}")
    if failed:
        raise GradeError(
            "the reference solutions fail public tests, so their feedback data cannot "
            "be computed:\n" + "\n".join(f"  {line}" for line in failed)
        )
    return recorder


def _one_line(text: str) -> str:
    return textwrap.shorten(text, 300, placeholder=" ...") or "(no output)"


def _reference_call(course: Course, recorded: Recorder):
    """``(name, args, kwargs) -> the reference's value``, on the calls the suites asked the
    catalogue about (the catalogue's outputs are weighed against the reference's on the same call).

    :raises GradeError: the reference raises on one: the tests asking about it, the call, and why.
    """
    reference = load_reference(course, remember=True)  # (remembered: called on copies)

    def call(name: str, args: tuple, kwargs: dict):
        try:
            return getattr(reference, name)(*args, **kwargs)
        except Exception as exc:
            tests = sorted(
                {
                    _where(course, path, test)
                    for path, test in recorded.origins.get(call_key(name, args, kwargs), ())
                }
            )
            shown = ", ".join(
                [_shown(a) for a in args] + [f"{k}={_shown(v)}" for k, v in kwargs.items()]
            )
            raise GradeError(
                f"{', '.join(tests) or name}: diagnose=mistakes.{name}({shown}) asks "
                f"about a call the reference cannot make: {name}() raised "
                f"{type(exc).__name__}: {_one_line(str(exc))} (give it the arguments "
                "of the student's call)"
            ) from None

    return call


def _shown(value) -> str:
    return (
        f"a {value.shape} {value.dtype} array"
        if isinstance(value, np.ndarray)
        else textwrap.shorten(repr(value), 40, placeholder="...")
    )


def _where(course: Course, path: str, name: str) -> str:
    try:
        return f"{Path(path).resolve().relative_to(course.root.resolve()).as_posix()}::{name}"
    except ValueError:
        return name


def mistakes_data(course: Course) -> dict:
    """The known mistakes' messages and problems, and their outputs on every call of
    :func:`public_calls`."""
    recorded = public_calls(course)
    return precompute(
        recorded.mistakes, recorded.calls, _reference_call(course, recorded), recorded.owners
    )


def coinciding(course: Course) -> list[str]:
    """For the course's author: one line per test (public or hidden) and group of its problem's
    catalogued mistakes that its inputs cannot tell apart (the same output within the test's
    tolerance, :func:`grader.feedback.mistakes.coincidences`). Such a test names none of them;
    another test's inputs must."""
    if course.feedback.mistakes is None or not _solutions_here(course):
        return []
    recorded = public_calls(course, hidden=any(p.hidden for p in course.problems))
    return coincidences(recorded, _reference_call(course, recorded), partial(_where, course))


def trace_data(course: Course) -> dict:
    """The reference's steps in every case of the worked example, computed here.

    :raises GradeError: the course has no worked example, or no solutions here.
    """
    if course.feedback.trace is None:
        raise GradeError(f"{course.path}: field 'feedback': this course has no worked example")
    module = import_course_module(course.feedback.trace)
    return reference_data(module, load_reference(course, remember=True))


def trace_cases(course: Course) -> dict[str, list[dict]]:
    """What ``grade trace`` compares with: the reference's steps in every case, live where the
    solutions are, else as the release stored them.

    :raises GradeError: neither is there, or the stored data is unreadable.
    """
    stored = course.feedback.trace_data
    if _solutions_here(course) or stored is None:
        return trace_data(course)["cases"]
    try:
        return json.loads(stored.read_text())["cases"]
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise GradeError(
            f"{stored}: the reference's trace is unreadable ({err}); "
            "instructors: run `grade release` again"
        ) from None


def feedback_data(course: Course) -> dict[str, dict]:
    """course.json ``feedback`` key -> its data, for what the course's feedback needs:
    ``mistakes_data`` with a catalogue, ``trace_data`` with a worked example.

    :raises GradeError: the solutions are not here, or the reference fails a public test.
    """
    data = {}
    if course.feedback.mistakes is not None:
        data["mistakes_data"] = mistakes_data(course)
    if course.feedback.trace is not None:
        data["trace_data"] = trace_data(course)
    return data


def describe(data: dict[str, dict]) -> str:
    """What :func:`feedback_data` computed, in a line."""
    said = []
    if "mistakes_data" in data:
        calls = len(data["mistakes_data"]["calls"])
        said.append(f"the known mistakes' outputs on {calls} call{'s' * (calls != 1)}")
        unseen = _unseen(data["mistakes_data"])
        if unseen:
            said.append(
                f"no public test's inputs tell {', '.join(unseen)} from the reference (the "
                "same output there): grade check can never name them"
            )
    if "trace_data" in data:
        cases = len(data["trace_data"]["cases"])
        said.append(f"the worked example's reference values in {cases} case{'s' * (cases != 1)}")
    return "; ".join(said)


def _unseen(mistakes: dict) -> list[str]:
    """The known mistakes (by family) whose outputs differ from the reference's on no call of the
    public suites, and that raise on none: a student's copy can never name them."""
    shown = {family(m) for outputs in mistakes["calls"].values() for m in outputs}
    shown |= {family(m) for raised in mistakes.get("raised", {}).values() for m in raised}
    return sorted({family(m) for m in mistakes["messages"]} - shown)


def dumps(data: dict) -> str:
    """JSON text (sorted keys; NaN and inf kept, as Python's json reads them back)."""
    return json.dumps(data, sort_keys=True, separators=(",", ":")) + "\n"
