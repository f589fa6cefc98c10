"""`grade trace`: the course's worked example through a student's own functions, step by step,
beside the reference.

The course's trace module (course.json ``feedback.trace``) defines ``steps(**case)``, which yields
``(key, step, function responsible, compute)``: ``compute(f, v)`` gives the step from the functions
``f`` and ``v``, the earlier steps' values by key; ``cases()``, every case it takes; and optionally
``CALLS`` (function -> the course functions it is meant to call), ``CASES`` (each case keyword of
``steps`` -> one line for ``grade trace --cases``) and ``cannot_check(**case)`` (what a case's
weights hide, or None).

Each step is computed twice with the student's functions: from the reference's earlier values
("yours": it judges that step's function alone, so two faults in two functions show at two steps)
and from the student's own earlier values ("your chain": where their block ends up). "Yours" runs
the step's function with the reference's own components where the solutions are (the worker of its
problem's phase, :func:`grader.grading.phases.plan`: the block with the course's layernorm,
attention and gelu, as grading runs it); in a release, which has none, with the student's own, and
the step says so (:attr:`Step.own`). A step whose value cannot be read off the student's function
(:class:`Unreadable`: the attention weights read back through a value path that is not the identity
the probe gave it) is shown with why, never judged. The reference's values are computed live where
the solutions are (the instructor's checkout), in the grader process: the inputs are the course's
own worked example, never a student's. A student's copy has no solutions: ``grade release`` writes
the values into it (``feedback.trace_data``; both: :mod:`grader.commands.feedback_data`). The
student's functions run in the sandboxed worker through the same proxy as grading
(:class:`grader.sandbox.client.Worker`, :class:`grader.sandbox.proxy.Student`).
"""

from __future__ import annotations

import inspect
import json
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from grader.course.manifest import Course
from grader.course.modules import import_course_module
from grader.errors import GradeError, StudentError
from grader.feedback.compare import _outside, allowed, same_array
from grader.sandbox.client import Worker
from grader.sandbox.proxy import Student

RTOL, ATOL = 1e-5, 1e-8  # a step matches the reference as a test's default check would
NEAR = 1e-9  # closer than this (relative) is the reference computed another way: not a near miss


def off(value: np.ndarray | None, reference: np.ndarray) -> np.ndarray:
    """Where ``value`` differs from ``reference`` beyond the tolerance (everywhere when it is
    missing or its shape differs), as a boolean array of the reference's shape: the tolerance of
    :meth:`Step.matches` (the check's, scaled to the whole array), so a row is marked ✗ only in a
    step that is ✗."""
    if value is None or value.shape != reference.shape:
        return np.ones(reference.shape, dtype=bool)
    return _outside(value, reference, allowed(reference, RTOL, ATOL))


def rows_of(mask: np.ndarray) -> list[int]:
    """0-based rows (first axis) where ``mask`` is set anywhere."""
    mask = np.atleast_1d(mask)
    return [int(i) for i in np.flatnonzero(mask.reshape(len(mask), -1).any(axis=1))]


class Unreadable(Exception):
    """Raised by a trace module's ``compute`` when what the student's function gave cannot be read
    as the step's value (e.g. attention weights read off an output whose rows do not sum to 1): the
    message says why. The step is then shown unjudged, never as the student's value."""


@dataclass(frozen=True)
class Step:
    """One step of the worked example.

    :param name: what the step is, e.g. "LayerNorm(x)".
    :param function: the student function that computes it ("" for the trace's own sums, e.g. h = x
        + a).
    :param reference: the reference's value.
    :param yours: the student's function on the reference's earlier values (float64), or None when
        it failed.
    :param chain: the student's value from their own earlier values, or None when it failed.
    :param error: why ``yours`` is None (their code raised, timed out, returned something unusable).
    :param chain_error: why ``chain`` is None.
    :param calls: the functions ``function`` is meant to call (the trace module's ``CALLS``) that
        were the student's own at this step (the others were the reference's).
    :param own: those of ``calls`` that are another problem's (a release has no reference to run
        them with).
    :param unread: why ``yours`` could not be read off the student's function (:class:`Unreadable`):
        the step is shown, not judged.
    """

    name: str
    function: str
    reference: np.ndarray
    yours: np.ndarray | None
    chain: np.ndarray | None
    error: str = ""
    chain_error: str = ""
    calls: tuple[str, ...] = ()
    own: tuple[str, ...] = ()
    unread: str = ""

    @property
    def matches(self) -> bool:
        """The student's function gives the reference's value from the reference's input (an unread
        step is not judged: it matches)."""
        if self.unread:
            return True
        return self.yours is not None and same_array(
            self.yours, self.reference, rtol=RTOL, atol=ATOL
        )

    @property
    def chain_matches(self) -> bool:
        if self.unread and self.chain is None:
            return True
        return self.chain is not None and same_array(
            self.chain, self.reference, rtol=RTOL, atol=ATOL
        )

    def rows_off(self) -> list[int]:
        """0-based rows where ``yours`` differs; every row when it is missing or its shape
        differs."""
        return rows_of(off(self.yours, self.reference))


@dataclass(frozen=True)
class Verdict:
    """One function's verdict: the steps (0-based) where it differs from the reference's input, and
    the functions it is meant to call that differ too (its difference may only be theirs), and those
    that match only within the tolerance (a near miss that this function's sums can carry beyond
    it)."""

    function: str
    steps: tuple[int, ...]
    calls_off: tuple[str, ...] = ()
    calls_near: tuple[str, ...] = ()


@dataclass(frozen=True)
class Trace:
    """Every step of one case, with what the course says about its functions and about what the case
    hides."""

    case: dict
    steps: tuple[Step, ...]
    calls: Mapping[str, Iterable[str]] = field(default_factory=dict)
    cannot_check: dict | None = None

    @property
    def matches(self) -> bool:
        return all(s.matches and s.chain_matches for s in self.steps)

    @property
    def first_difference(self) -> int | None:
        """The first step where the student's own chain differs (None: their block follows the
        reference)."""
        return next((i for i, s in enumerate(self.steps) if not s.chain_matches), None)

    def verdicts(self) -> list[Verdict]:
        """Every function the trace calls, in the order of its first step. A function's difference
        may be that of a function it called as the student's own (:attr:`Step.calls`: with the
        reference's components, only its own problem's); an unread step judges nothing."""
        functions = list(dict.fromkeys(s.function for s in self.steps if s.function))
        wrong = {
            f: tuple(i for i, s in enumerate(self.steps) if s.function == f and not s.matches)
            for f in functions
        }
        near = {
            f
            for f in functions
            if not wrong[f]
            and any(
                s.function == f
                and not s.unread
                and not same_array(s.yours, s.reference, rtol=NEAR, atol=0.0)
                for s in self.steps
            )
        }
        ran = {
            f: tuple(dict.fromkeys(c for s in self.steps if s.function == f for c in s.calls))
            for f in functions
        }
        return [
            Verdict(
                f,
                wrong[f],
                tuple(c for c in ran[f] if wrong.get(c)),
                tuple(c for c in ran[f] if c in near),
            )
            for f in functions
        ]


def case_key(case: dict) -> str:
    """The key of a case in the trace data, e.g. ``{"change_last": false, "no_attention": false,
    ...}``."""
    return json.dumps(case, sort_keys=True)


def reference_data(module: Any, functions: Any) -> dict:
    """Every case's steps with the values of ``functions`` (the reference's): the JSON data of
    ``feedback.trace_data``."""
    cases = {}
    for case in module.cases():
        values: dict[str, np.ndarray] = {}
        cases[case_key(case)] = rows = []
        for key, name, function, compute in module.steps(**case):
            values[key] = np.asarray(compute(functions, values), dtype=np.float64)
            rows.append(
                {
                    "key": key,
                    "name": name,
                    "function": function,
                    "value": values[key].round(12).tolist(),
                }
            )
    return {"cases": cases}


def _module(course: Course) -> Any:
    if course.feedback.trace is None:
        raise GradeError(
            f"{course.path}: field 'feedback': this course has no worked example to trace"
        )
    return import_course_module(course.feedback.trace)


def case_options(course: Course) -> dict[str, tuple[Any, str]]:
    """The worked example's case keys: key -> (its default, what it does), from its trace module:
    ``steps()``'s keyword parameters, described by ``CASES`` (key -> one line) where the module has
    it."""
    module = _module(course)
    described = getattr(module, "CASES", {})
    return {
        name: (p.default, described.get(name, ""))
        for name, p in inspect.signature(module.steps).parameters.items()
        if p.default is not inspect.Parameter.empty
    }


def case_from(course: Course, settings: Sequence[str]) -> dict:
    """The case that ``grade trace --case KEY=VALUE ...`` asks for: the defaults, with each
    setting's value read as JSON (``row_x10=3``, ``random=true``; a bare ``KEY`` is true; other text
    is a string).

    :raises GradeError: a key the worked example does not take (naming the ones it does).
    """
    options = case_options(course)
    case = {key: default for key, (default, _) in options.items()}
    for setting in settings:
        key, sep, text = setting.partition("=")
        key = key.strip().replace("-", "_")
        if key not in options:
            raise GradeError(
                f"--case {setting}: the worked example has no case {key!r} "
                f"(its cases: {', '.join(options) or 'none'}: grade trace --cases)"
            )
        try:
            case[key] = json.loads(text) if sep else True
        except ValueError:
            case[key] = text
    return case


def run(
    course: Course,
    folder: Path,
    case: dict,
    cases: Mapping[str, list[dict]],
    phases: Sequence[Any] = (),
) -> Trace:
    """Run the worked example's ``case`` through the functions in ``folder``, in the sandboxed
    worker.

    :param cases: the reference's steps in every case (``reference_data(...)["cases"]``).
    :param phases: grading's (:func:`grader.grading.phases.plan`): a step runs with the reference's
        components its phase holds; with none (a release), with the student's own.
    :raises GradeError: the course has no trace, or ``cases`` has no reference for ``case`` or not
        its steps.
    """
    feedback = course.feedback
    module = _module(course)
    reference = cases.get(case_key(case))
    if reference is None:
        offered = [json.loads(key) for key in cases]
        values = {k: sorted({json.dumps(c.get(k)) for c in offered}) for k in case}
        raise GradeError(
            "the worked example has no such case: "
            + "; ".join(f"{k} is one of {', '.join(v)}" for k, v in values.items() if len(v) > 1)
        )
    specs = list(module.steps(**case))
    if [s[0] for s in specs] != [r.get("key") for r in reference]:
        raise GradeError(
            f"{feedback.trace_data or feedback.trace}: the reference's values do not "
            f"follow the steps of {feedback.trace.name} (grade release writes both: "
            "release again)"
        )
    blind = getattr(module, "cannot_check", lambda **_: None)(**case)
    calls = getattr(module, "CALLS", {})
    problem_of = {f: p.name for p in course.problems for f in p.functions}
    home = {
        f: phase
        for phase in phases
        if phase.reference
        for p in course.problems
        if p.name in phase.problems
        for f in p.functions
    }
    with ExitStack() as stack:
        own = Student(
            stack.enter_context(Worker(folder, course.limits, modules=course.modules)),
            course.functions,
            course.limits,
        )
        started: dict[int, Student] = {}

        def yours(function: str) -> tuple[Student, tuple[str, ...], tuple[str, ...]]:
            """The student whose ``function`` a step runs ("yours"), the functions it calls that are
            the student's own there, and those of them that are another problem's."""
            theirs = tuple(
                c for c in calls.get(function, ()) if problem_of.get(c) == problem_of.get(function)
            )
            others = tuple(c for c in calls.get(function, ()) if c not in theirs)
            phase = home.get(function)
            if phase is None:  # no reference here (a release), or none needed
                return own, tuple(calls.get(function, ())), others
            if id(phase) not in started:
                worker = stack.enter_context(
                    Worker(folder, course.limits, modules=phase.modules, reference=phase.reference)
                )
                started[id(phase)] = Student(worker, course.functions, course.limits)
            return started[id(phase)], theirs, ()

        steps = tuple(_steps(yours, own, specs, reference))
    return Trace(case, steps, calls, blind)


class _Missing(Exception):
    """An earlier value the step needs is missing: the student's code failed there."""


class _Values(dict):
    def __missing__(self, key: str):
        raise _Missing(key)


def _compute(
    compute: Callable, student: Student, values: Mapping, function: str
) -> tuple[np.ndarray | None, str]:
    """The step's value from ``values`` with the student's functions, or (None, why not);
    :class:`Unreadable` goes through."""
    try:
        value = compute(student, values)
    except Unreadable:
        raise
    except StudentError as err:  # the student's own copy: their exception and its line
        return None, "\n".join(filter(None, [err.public, err.detail]))
    except _Missing:
        return None, "not computed: an earlier step of yours that it needs failed"
    except Exception as err:  # e.g. a wrong shape that the step's own sums cannot use
        return None, f"could not compute this step from your values ({type(err).__name__}: {err})"
    try:
        return np.asarray(value, dtype=np.float64), ""
    except (TypeError, ValueError):
        return None, f"{function or 'your code'}() returned {type(value).__name__}, not numbers"


def _steps(
    yours: Callable[[str], tuple[Student, tuple[str, ...], tuple[str, ...]]],
    student: Student,
    specs: list,
    reference: list[dict],
) -> Iterable[Step]:
    """Each step from the reference's earlier values (its function run by ``yours(function)``'s
    student) and from the student's own (``student``: every module theirs)."""
    given, own = _Values(), _Values()
    for (key, name, function, compute), ref in zip(specs, reference):
        expected = np.asarray(ref["value"], dtype=np.float64)
        runner, calls, others = yours(function) if function else (student, (), ())
        unread = ""
        try:
            value, error = _compute(compute, runner, given, function)
        except Unreadable as why:
            value, error, unread = None, "", str(why)
        try:
            chain, chain_error = _compute(compute, student, own, function)
        except Unreadable as why:
            chain, chain_error = None, str(why)
        given[key] = expected
        if chain is not None:
            own[key] = chain
        yield Step(
            name, function, expected, value, chain, error, chain_error, calls, others, unread
        )
