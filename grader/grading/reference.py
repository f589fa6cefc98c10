"""The reference functions, imported in the grader process from ``solutions/`` (trusted code), for
the hidden suites' expected values: computed on the suites' own inputs only, never on a
student's."""

from __future__ import annotations

import copy
import importlib
import sys
from functools import partial
from types import SimpleNamespace

from grader.course.manifest import Course
from grader.course.modules import forget_other_courses
from grader.errors import GradeError
from grader.sandbox.child.protocol import WireError
from grader.sandbox.inflight import encode_call


def load_reference(course: Course, remember: bool = False) -> SimpleNamespace:
    """The reference functions from ``solutions/``; with ``remember``, each keeps its values
    (:func:`remembered`).

    :raises GradeError: when the course has no solutions (a student's release).
    """
    if course.solutions is None or not course.solutions.is_dir():
        raise GradeError(
            f"{course.path}: field 'solutions': the reference solutions are not available here"
        )
    forget_other_courses(course)
    sys.path.insert(0, str(course.solutions))
    try:
        modules = {p.module: importlib.import_module(p.module) for p in course.problems}
    finally:
        sys.path.remove(str(course.solutions))
    functions = {f: getattr(modules[p.module], f) for p in course.problems for f in p.functions}
    return SimpleNamespace(
        **{f: remembered(v, f) if remember else v for f, v in functions.items()},
        call_with_inputs=partial(_with_inputs, functions),
    )


def _with_inputs(functions: dict, name: str, *args, **kwargs) -> tuple:
    """``reference.call_with_inputs(name, *args, **kwargs)``, as the student proxy's: the value,
    and the arguments as the function left them (a Generator advanced by its draws), on copies."""
    args, kwargs = copy.deepcopy(list(args)), copy.deepcopy(kwargs)
    return functions[name](*args, **kwargs), args, kwargs


def remembered(function, name: str):
    """``function`` (a reference function: pure) with its values kept by its arguments' bytes: a
    hidden test's expected values are computed once per grader process, not once per submission."""
    values: dict = {}

    def call(*args, **kwargs):
        try:
            key = b"".join(encode_call(name, args, kwargs))
        except WireError:  # (an argument that cannot travel: not kept)
            return function(*args, **kwargs)
        if key not in values:
            values[key] = function(*copy.deepcopy(args), **copy.deepcopy(kwargs))
        return copy.deepcopy(values[key])

    call.__name__ = call.__qualname__ = name
    return call
