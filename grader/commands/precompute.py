"""`grade precompute`: the course data a student's feedback needs without the solutions (instructors only).

- ``feedback.mistakes_data``: the known mistakes' outputs on every call the public suites diagnose, found by running
  the public suites in this process with the reference as the student and noting each ``mistakes.<function>(...)``;
- ``feedback.trace_data``: the reference's value at every step of the worked example, for every case.

Run it after changing a public suite, the catalogue, the worked example or a solution; ``--check`` (and the
project's tests) fail while a stored file is out of date.
"""
from __future__ import annotations

import copy
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from grader.course.manifest import Course
from grader.course.modules import forget_other_courses, import_course_module
from grader.errors import ExitStatus, GradeError
from grader.feedback.figures import Figures
from grader.feedback.mistakes import Catalogue, Recorder, precompute
from grader.grading.callplan import suite_files
from grader.grading.plugin import PYTEST_INI
from grader.grading.reference import load_reference


class InProcess:
    """Trusted functions called like the student proxy: on copies of the arguments, in this process."""

    def __init__(self, functions: SimpleNamespace):
        self._functions = functions

    def __getattr__(self, name: str):
        function = getattr(self._functions, name)
        return lambda *args, **kwargs: function(*copy.deepcopy(args), **copy.deepcopy(kwargs))

    def call_with_inputs(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, list, dict]:
        args, kwargs = copy.deepcopy(list(args)), copy.deepcopy(kwargs)
        return getattr(self._functions, name)(*args, **kwargs), args, kwargs


class _PublicRun:
    """A pytest plugin: the public suites with the reference as the student, noting the diagnosed calls."""

    def __init__(self, reference: SimpleNamespace):
        self.recorder = Recorder()
        self.failures: list[str] = []
        self.student = InProcess(reference)

    def pytest_configure(self, config: pytest.Config) -> None:
        config.addinivalue_line("markers", "points(p): the points a test is worth (p > 0)")

    @pytest.fixture(name="student")
    def _student(self) -> InProcess:
        return self.student

    @pytest.fixture
    def mistakes(self) -> Recorder:
        return self.recorder

    @pytest.fixture
    def figure(self) -> Figures:
        return Figures()

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.failures.append(report.nodeid)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.failed:
            self.failures.append(report.nodeid)


def public_run(course: Course, reference: SimpleNamespace) -> _PublicRun:
    """The public suites run with the reference as the student, in this process.

    :raises GradeError: the reference fails a public test.
    """
    run = _PublicRun(reference)
    forget_other_courses(course)
    pytest.main([str(f) for f in suite_files(course, hidden=False)] + [
        "-c", str(PYTEST_INI), "--rootdir", str(course.root), "--noconftest", "-p", "no:cacheprovider",
        "-p", "no:terminal", "-p", "no:logging"], plugins=[run])
    if run.failures:
        raise GradeError(f"the reference fails public tests, so nothing was written: {', '.join(run.failures)}")
    return run


def mistakes_data(course: Course, reference: SimpleNamespace, run: _PublicRun) -> dict:
    """The mistakes' outputs for every call the public suites diagnose.

    :raises GradeError: the course names no catalogue.
    """
    if course.feedback.mistakes is None:
        raise GradeError(f"{course.path}: field 'feedback.mistakes': no catalogue of mistakes")
    functions = InProcess(reference)
    return precompute(Catalogue.for_course(course).mistakes, run.recorder.calls,
                      lambda name, args, kwargs: getattr(functions, name)(*args, **kwargs))


def trace_data(course: Course, reference: SimpleNamespace) -> dict:
    """The reference's value at every step of the worked example, for every case of the course's trace."""
    from grader.feedback.trace import reference_data

    if course.feedback.trace is None:
        raise GradeError(f"{course.path}: field 'feedback.trace': no worked example to trace")
    return reference_data(import_course_module(course.feedback.trace), InProcess(reference))


def dumps(data: dict) -> str:
    """Stable JSON text (sorted keys; NaN and inf kept, as Python's json reads them back)."""
    return json.dumps(data, sort_keys=True, separators=(",", ":")) + "\n"


def build(course: Course) -> dict[Path, str]:
    """Every file ``grade precompute`` writes, path -> text.

    :raises GradeError: the course has no solutions, or names no feedback files.
    """
    reference = load_reference(course)
    files = {}
    if course.feedback.mistakes_data is not None:
        files[course.feedback.mistakes_data] = dumps(mistakes_data(course, reference, public_run(course, reference)))
    if course.feedback.trace_data is not None:
        files[course.feedback.trace_data] = dumps(trace_data(course, reference))
    if not files:
        raise GradeError(f"{course.path}: field 'feedback': names no data file to precompute")
    return files


def main(*, course_path: Path, check_only: bool) -> ExitStatus:
    """Write every file :func:`build` makes that changed (with ``check_only``, write nothing and name the
    files out of date); the exit status (1: ``check_only`` found one)."""
    import click

    from grader import report
    from grader.course import manifest as course_mod

    files = build(course_mod.load(course_path))
    stale = [path for path, text in files.items() if not path.is_file() or path.read_text() != text]
    for path in stale if check_only else files:
        if check_only:
            click.echo(f"{path}: out of date (run `grade precompute`)", err=True)
        else:
            report.write_atomic(path, files[path])
            click.echo(f"wrote {path}")
    return ExitStatus.FAILED if check_only and stale else ExitStatus.OK
