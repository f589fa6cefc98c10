"""Run the trusted pytest suites against submissions, in the grader process, and collect plain results.

pytest runs once per grader process: the suites are collected once, then every item runs once per
submission (``pytest_runtestloop``), with the ``student`` fixture bound to that submission's proxy.
Student code runs only in the sandboxed worker behind the proxy. Each collected test starts as
"not run" with 0 points; only the grader's own verdict on a test makes it pass.
"""
from __future__ import annotations

import importlib
import multiprocessing
import os
import queue
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Callable, Iterable

import pytest

from .compare import Mismatch
from .course import Course, Problem
from .course import load as load_course
from .errors import GradeError, StudentError
from .proxy import Student
from .sandbox import Worker, isolation_level

PYTEST_INI = Path(__file__).with_name("pytest.ini")
MAX_SHOWN_OUTPUT = 2000


@dataclass(frozen=True)
class Job:
    """One submission to grade: the student id and the folder holding their modules."""

    student: str
    path: Path


@dataclass(frozen=True)
class TestResult:
    """One test's outcome for one submission.

    :param status: ``passed``, ``failed`` (a wrong value) or ``error`` (the code raised, timed out, crashed).
    :param output: what the student may see: for hidden tests, no inputs, values or printed output.
    :param visibility: ``visible`` for public tests, ``after_published`` for hidden ones.
    :param kind: the failure's tag (``mismatch``, ``timeout``, ``import_error``, ...), empty when passed.
    """

    name: str
    problem: str
    points: float
    status: str
    output: str
    visibility: str
    kind: str = ""


@dataclass(frozen=True)
class Graded:
    """All the results for one submission, plus the wall-clock seconds it took and the isolation used."""

    job: Job
    results: tuple[TestResult, ...]
    seconds: float
    sandbox: str
    error: str = ""


def load_reference(course: Course) -> SimpleNamespace:
    """The reference functions from ``solutions/``, imported in the grader process (trusted code).

    :raises GradeError: when the course has no solutions (a student's release).
    """
    if course.solutions is None or not course.solutions.is_dir():
        raise GradeError(f"{course.path}: field 'solutions': the reference solutions are not available here")
    sys.path.insert(0, str(course.solutions))
    try:
        modules = {p.module: importlib.import_module(p.module) for p in course.problems}
    finally:
        sys.path.remove(str(course.solutions))
    return SimpleNamespace(**{f: getattr(modules[p.module], f) for p in course.problems for f in p.functions})


def _message(exc: BaseException, public: bool, function_output: str) -> tuple[str, str, str]:
    """(status, kind, output) for a test that raised ``exc``."""
    if isinstance(exc, Mismatch):
        status, kind, text = "failed", "mismatch", exc.full if public else exc.public
    elif isinstance(exc, StudentError):
        status, kind = "error", exc.kind
        text = exc.message + (f"\n{exc.detail}" if public and exc.detail else "")
    elif isinstance(exc, AssertionError):
        status, kind, text = "failed", "assertion", (str(exc) or "assertion failed") if public else "assertion failed"
    elif isinstance(exc, pytest.skip.Exception):
        status, kind, text = "failed", "skipped", "skipped: a skipped test earns no points"
    else:
        status, kind, text = "error", "grader_error", f"error in the test itself: {type(exc).__name__}: {exc}"
    if public and function_output.strip():
        shown = function_output if len(function_output) <= MAX_SHOWN_OUTPUT else (
            function_output[:MAX_SHOWN_OUTPUT] + "\n[... output cut ...]")
        text += f"\nyour code printed:\n{shown.rstrip()}"
    return status, kind, text


class GradingPlugin:
    """The pytest plugin that feeds submissions to the collected items and records verdicts."""

    def __init__(self, course: Course, jobs: Iterable[Job], on_result: Callable[[Graded], None],
                 hidden: bool, problems: Iterable[str] = ()):
        self.course = course
        self.selected = set(problems) or set(course.problem_names)   # whose points must add up
        self.jobs = jobs
        self.on_result = on_result
        self.hidden = hidden
        self.error: BaseException | None = None
        self.ran = False
        self._collect_errors: list[str] = []
        self._student: Student | None = None
        self._verdicts: dict[str, tuple[str, str, str]] = {}
        self._suites: dict[Path, tuple[Problem, bool]] = {}
        for p in course.problems:
            self._suites[p.public] = (p, True)
            if p.hidden:
                self._suites[p.hidden] = (p, course.release_hidden_details)

    def pytest_configure(self, config: pytest.Config) -> None:
        config.addinivalue_line("markers", "points(p): the points a test is worth (p > 0)")

    @pytest.fixture
    def student(self) -> Student:
        """The current submission's functions, run in the sandboxed worker."""
        return self._student

    @pytest.fixture(scope="session")
    def reference(self) -> SimpleNamespace:
        """The reference functions (hidden suites only)."""
        return load_reference(self.course)

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self._collect_errors.append(f"{report.nodeid}: {report.longreprtext.strip().splitlines()[-1]}")

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo) -> pytest.TestReport:
        """Record the verdict, and make a plain report: pytest's own would format a traceback we never show."""
        if call.when == "call" or call.excinfo is not None:
            _, public = self._suites[Path(item.path).resolve()]
            output = self._student.take_output() if self._student else ""
            if call.excinfo is None:
                self._verdicts.setdefault(item.nodeid, ("passed", "", ""))
            else:
                self._verdicts.setdefault(item.nodeid, _message(call.excinfo.value, public, output))
        verdict = self._verdicts.get(item.nodeid, ("passed", "", ""))
        outcome = "passed" if call.excinfo is None else "failed"
        return pytest.TestReport(item.nodeid, item.location, {}, outcome, verdict[2] or None, call.when,
                                 duration=call.duration, start=call.start, stop=call.stop)

    def _items(self, session: pytest.Session) -> list[tuple[pytest.Item, Problem, float, str]]:
        if self._collect_errors:
            raise GradeError("a suite failed to load: " + "; ".join(self._collect_errors))
        table, totals = [], {}
        for item in session.items:
            problem, public = self._suites[Path(item.path).resolve()]
            marker = item.get_closest_marker("points")
            if marker is None or not marker.args or not isinstance(marker.args[0], (int, float)) \
                    or marker.args[0] <= 0:
                raise GradeError(f"{item.nodeid}: needs @pytest.mark.points(p) with p > 0")
            points = float(marker.args[0])
            totals[problem.name] = totals.get(problem.name, 0.0) + points
            visibility = "visible" if item.path.resolve() == problem.public else "after_published"
            table.append((item, problem, points, visibility))
        if self.hidden:
            for problem in self.course.problems:
                if problem.name in self.selected and abs(totals.get(problem.name, 0.0) - problem.points) > 1e-9:
                    raise GradeError(f"{self.course.path}: field 'points' of {problem.name!r}: the suites' "
                                     f"tests add up to {totals.get(problem.name, 0.0):g}, not {problem.points:g}")
        return table

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> bool:
        self.ran = True
        try:
            items = self._items(session)
            for job in self.jobs:
                self.on_result(self._grade(job, items))
        except BaseException as exc:                     # re-raised by run() after pytest returns
            self.error = exc
        return True

    def _grade(self, job: Job, items: list) -> Graded:
        started = time.monotonic()
        self._verdicts = {}
        error = ""
        try:
            with Worker(job.path, self.course.limits) as worker:
                self._student = Student(worker, self.course.functions, self.course.limits)
                for i, (item, problem, _, _) in enumerate(items):
                    self._student.charge_to(problem.name)
                    nextitem = items[i + 1][0] if i + 1 < len(items) else None
                    item.ihook.pytest_runtest_protocol(item=item, nextitem=nextitem)
        except StudentError as err:                      # e.g. a submission too large to copy
            error = err.message
        finally:
            self._student = None
        results = []
        for item, problem, points, visibility in items:
            status, kind, output = self._verdicts.get(item.nodeid, ("error", "not_run", f"not run: {error}"))
            results.append(TestResult(name=item.name, problem=problem.name, points=points, status=status,
                                      output=output, visibility=visibility, kind=kind))
        return Graded(job, tuple(results), time.monotonic() - started, isolation_level(), error)


def suite_files(course: Course, hidden: bool, problems: Iterable[str] = ()) -> list[Path]:
    chosen = [course.problem(n) for n in problems] if problems else list(course.problems)
    files = [p.public for p in chosen]
    if hidden:
        missing = [p.name for p in chosen if p.hidden is None]
        if missing:
            raise GradeError(f"{course.path}: field 'hidden': no hidden suite for {', '.join(missing)}")
        files += [p.hidden for p in chosen]
    return files


def run(course: Course, jobs: Iterable[Job], on_result: Callable[[Graded], None], *, hidden: bool,
        problems: Iterable[str] = ()) -> None:
    """Grade ``jobs`` one after another in this process, calling ``on_result`` for each.

    :param hidden: run the hidden suites too (instructors), not only the public ones (students).
    :param problems: limit the run to these problem names (default: all).
    :raises GradeError: a suite failed to load, or its points disagree with course.json.
    """
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    # The whole course stays visible to the suites (the student proxy, the reference): a block test may
    # call the student's layernorm even when only the block problem is run.
    plugin = GradingPlugin(course, jobs, on_result, hidden, problems)
    args = [str(f) for f in suite_files(course, hidden, problems)] + [
        "-c", str(PYTEST_INI), "--rootdir", str(course.root), "--noconftest", "-p", "no:cacheprovider",
        "-p", "no:terminal", "-p", "no:logging"]
    code = pytest.main(args, plugins=[plugin])
    if plugin.error is not None:
        raise plugin.error
    if not plugin.ran:
        raise GradeError(f"pytest could not run the suites (exit status {int(code)})")


def _serve(course_path: str, hidden: bool, tasks, results) -> None:
    """A grader process for :func:`run_parallel`: grade jobs from ``tasks`` until it sends ``None``."""
    course = load_course(course_path)

    def jobs():
        for job in iter(tasks.get, None):
            results.put(("start", os.getpid(), job))
            yield job

    try:
        run(course, jobs(), lambda graded: results.put(("done", os.getpid(), graded)), hidden=hidden)
    except BaseException as exc:
        results.put(("fatal", os.getpid(), f"{type(exc).__name__}: {exc}"))


def run_parallel(course: Course, jobs: list[Job], on_result: Callable[[Graded], None], *, hidden: bool,
                 processes: int) -> None:
    """Like :func:`run`, with ``processes`` grader processes; a grader process that dies costs only its
    current submission (graded as an error) and is replaced."""
    if processes <= 1 or len(jobs) <= 1:
        run(course, jobs, on_result, hidden=hidden)
        return
    ctx = multiprocessing.get_context("spawn")
    tasks, results = ctx.Queue(), ctx.Queue()
    for job in jobs:
        tasks.put(job)
    pending = len(jobs)
    procs: dict[int, multiprocessing.Process] = {}
    current: dict[int, Job] = {}

    def start() -> None:
        proc = ctx.Process(target=_serve, args=(str(course.path), hidden, tasks, results), daemon=True)
        proc.start()
        procs[proc.pid] = proc

    for _ in range(min(processes, len(jobs))):
        start()
    while pending:
        try:
            tag, pid, payload = results.get(timeout=1.0)
        except queue.Empty:
            for pid, proc in list(procs.items()):
                if not proc.is_alive():
                    del procs[pid]
                    job = current.pop(pid, None)
                    if job is not None:
                        pending -= 1
                        on_result(Graded(job, (), 0.0, isolation_level(),
                                         f"the grader process died (exit code {proc.exitcode})"))
                    if pending:
                        start()
            continue
        if tag == "start":
            current[pid] = payload
        elif tag == "done":
            current.pop(pid, None)
            pending -= 1
            on_result(payload)
        elif tag == "fatal":
            for proc in procs.values():
                proc.kill()
            raise GradeError(payload.split(": ", 1)[1] if payload.startswith("GradeError") else payload)
    for _ in procs:
        tasks.put(None)
    for proc in procs.values():
        proc.join(timeout=5)
