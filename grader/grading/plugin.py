"""Run the trusted pytest suites against submissions, in the grader process, and collect plain results.

pytest runs once per grader process: the suites are collected once, then every item runs once per
submission (``pytest_runtestloop``), with the ``student`` fixture bound to that submission's proxy.
Student code runs only in the sandboxed worker behind the proxy. Each collected test starts as
"not run" with 0 points; only the grader's own verdict on a test makes it pass.
"""
from __future__ import annotations

import importlib
import socket
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Callable, Iterable

import pytest

from grader.course.manifest import Course, Problem
from grader.course.modules import forget_other_courses
from grader.errors import GradeError, GraderFault, StudentError
from grader.feedback.mismatch import Mismatch
from grader.feedback.figures import Figures
from grader.grading import callplan
from grader.grading.results import Graded, Job, TestResult
from grader.grading.verdicts import verdict
from grader.sandbox.client import Worker, started_worker
from grader.sandbox.policy import describe
from grader.sandbox.proxy import Planned, Student
from grader.sandbox.zygote import Zygote

PYTEST_INI = Path(__file__).with_name("pytest.ini")


def load_reference(course: Course) -> SimpleNamespace:
    """The reference functions from ``solutions/``, imported in the grader process (trusted code).

    :raises GradeError: when the course has no solutions (a student's release).
    """
    if course.solutions is None or not course.solutions.is_dir():
        raise GradeError(f"{course.path}: field 'solutions': the reference solutions are not available here")
    forget_other_courses(course)
    sys.path.insert(0, str(course.solutions))
    try:
        modules = {p.module: importlib.import_module(p.module) for p in course.problems}
    finally:
        sys.path.remove(str(course.solutions))
    return SimpleNamespace(**{f: getattr(modules[p.module], f) for p in course.problems for f in p.functions})


class GradingPlugin:
    """The pytest plugin that feeds submissions to the collected items and records verdicts."""

    def __init__(self, course: Course, jobs: Iterable[Job], on_result: Callable[[Graded], None],
                 hidden: bool, level: str, warm: bool, tmp_root: Path | None, first_worker: Worker | None = None,
                 run_as: str | None = None):
        self.course = course
        self.run_as = run_as
        self.tmp_root = tmp_root
        self.level = level
        self.warm = warm and hasattr(socket, "send_fds")    # POSIX: fork workers from a warm zygote
        self._zygote: Zygote | None = None
        self._early = first_worker                       # the first submission's worker, started cold and early
        self.jobs = jobs
        self.on_result = on_result
        self.hidden = hidden
        self.error: BaseException | None = None
        self.ran = False
        self._collect_errors: list[str] = []
        self._student: Student | None = None
        self._reference: SimpleNamespace | None = None
        self._mistakes = None
        self._verdicts: dict[str, tuple[str, str, str]] = {}
        self._feedback: dict[str, dict] = {}
        self._figures: dict[str, Figures] = {}
        self._standins = None                            # a grader.feedback.standins.Wiring, made on first need
        self._plan: list[Planned] = []                   # the calls to send ahead (see _plan_calls)
        self._suites: dict[Path, tuple[Problem, bool]] = {}
        self._public: dict[str, bool] = {}                # nodeid -> may the student see values and output
        self._direct_args: dict[str, list[str] | None] = {}   # nodeid -> arguments when called directly
        self._properties: set[str] = set()               # nodeids of the property tests
        for p in course.problems:
            self._suites[p.public] = (p, True)
            if p.hidden:
                self._suites[p.hidden] = (p, course.release_hidden_details)

    def pytest_configure(self, config: pytest.Config) -> None:
        config.addinivalue_line("markers", "points(p): the points a test is worth (p > 0)")
        config.addinivalue_line("markers", "wiring: the test calls student.wired(...) (run last, in a fresh worker)")
        config.addinivalue_line("markers", "property: the test checks a property on the student's own outputs "
                                           "(never their values against the reference's)")

    def _value(self, name: str, nodeid: str):
        """The value of one of the grader's fixtures for the test ``nodeid``."""
        if name == "student":
            return self._student
        if name == "reference":
            if self._reference is None:
                self._reference = load_reference(self.course)
            return self._reference
        if name == "mistakes":
            if self._mistakes is None:
                from grader.feedback.mistakes import Catalogue

                self._mistakes = Catalogue.for_course(self.course)
            return self._mistakes
        if name == "figure":
            return self._figures.setdefault(nodeid, Figures())
        raise KeyError(name)

    @pytest.fixture
    def student(self) -> Student:
        """The current submission's functions, run in the sandboxed worker."""
        return self._value("student", "")

    @pytest.fixture(scope="session")
    def reference(self) -> SimpleNamespace:
        """The reference functions (hidden suites only)."""
        return self._value("reference", "")

    @pytest.fixture(scope="session")
    def mistakes(self):
        """The course's known mistakes: ``diagnose=mistakes.<function>(*args)`` (see grader.feedback.mistakes)."""
        return self._value("mistakes", "")

    @pytest.fixture
    def figure(self, request: pytest.FixtureRequest) -> Figures:
        """``figure(title, **arrays)``: heat maps for this test's feedback page (see grader.feedback.figures)."""
        return self._value("figure", request.node.nodeid)

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self._collect_errors.append(f"{report.nodeid}: {report.longreprtext.strip().splitlines()[-1]}")

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo) -> pytest.TestReport:
        """Record the verdict, and make a plain report: pytest's own would format a traceback we never show."""
        if call.when == "call" or call.excinfo is not None:
            self._record(item.nodeid, call.excinfo.value if call.excinfo else None)
        verdict = self._verdicts.get(item.nodeid, ("passed", "", ""))
        outcome = "passed" if call.excinfo is None else "failed"
        return pytest.TestReport(item.nodeid, item.location, {}, outcome, verdict[2] or None, call.when,
                                 duration=call.duration, start=call.start, stop=call.stop)

    def _items(self, session: pytest.Session) -> list[callplan.Row]:
        if self._collect_errors:
            raise GradeError("a suite failed to load: " + "; ".join(self._collect_errors))
        table = callplan.run_order(session.items, self._suites, self.course, self.hidden)
        for item, *_ in table:
            self._public[item.nodeid] = self._suites[Path(item.path).resolve()][1]
            self._direct_args[item.nodeid] = callplan.direct_args(item)
            if item.get_closest_marker("property") is not None:
                self._properties.add(item.nodeid)
        return table

    def start_early(self) -> None:
        """Start the zygote (or, cold, the first submission's worker) before pytest starts: its interpreter
        imports numpy while pytest loads and collects the suites (about 0.1 s off `grade check`)."""
        if self.warm:
            self._zygote = Zygote(self.level, self.tmp_root, wait=False, imports=self.course.limits.imports,
                                  run_as=self.run_as)
        elif self._early is None and isinstance(self.jobs, (list, tuple)) and self.jobs:
            self._early = started_worker(self.jobs[0].path, self.course.limits, self.level, self.tmp_root,
                                         self.course.modules, self.run_as, self.course.functions)

    def close(self) -> None:
        """Stop the zygote and any worker started early."""
        for opened in (self._zygote, self._early):
            if opened is not None:
                opened.close()
        self._zygote = self._early = None

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> bool:
        self.ran = True
        try:
            items = self._items(session)
            self._plan_calls(items)
            for job in self.jobs:
                self.on_result(self._grade(job, items))
        except BaseException as exc:                     # re-raised by run() after pytest returns
            self.error = exc
        return True

    def _plan_calls(self, items: list[callplan.Row]) -> None:
        """Learn the calls to send ahead (:func:`grader.grading.callplan.record_plan`); only with a zygote
        (calls are sent ahead to forked workers)."""
        if self.warm:
            self._plan = callplan.record_plan(items, self._direct_args, self.course.functions, self._value)

    def _worker(self, job: Job) -> Worker:
        """This submission's worker: the one started early, or forked from the zygote (restarted if a
        submission killed it), or else started cold.

        :raises GradeError: the zygote's sandbox could not start.
        """
        if self._early is not None and self.jobs and job is self.jobs[0]:
            early, self._early = self._early, None
            return early
        if not self.warm:
            return Worker(job.path, self.course.limits, self.level, None, self.tmp_root, self.course.modules,
                          self.run_as, self.course.functions)
        if self._zygote is not None and not self._zygote.alive:
            self._discard_zygote()
        if self._zygote is None:
            self._zygote = Zygote(self.level, self.tmp_root, imports=self.course.limits.imports, run_as=self.run_as)
        self._zygote.wait()
        return Worker(job.path, self.course.limits, self.level, self._zygote, self.tmp_root, self.course.modules,
                      functions=self.course.functions)

    def _wiring(self):
        """Where the wiring tests' stand-ins get their values (the reference where the solutions are here)."""
        if self._standins is None:
            from grader.feedback.standins import Wiring

            has_solutions = self.course.solutions is not None and self.course.solutions.is_dir()
            self._standins = Wiring.for_course(self.course, self._value("reference", "") if has_solutions else None)
        return self._standins

    def _record(self, nodeid: str, exc: BaseException | None) -> None:
        """Keep a test's first verdict, and the feedback (diff, diagnosis, figures) the student may see."""
        public = self._public[nodeid]
        output = self._student.take_output() if self._student else ""
        if exc is None:
            self._verdicts.setdefault(nodeid, ("passed", "", ""))
        else:
            self._verdicts.setdefault(nodeid, verdict(exc, public, output))
            if isinstance(exc, Mismatch):
                self._feedback.setdefault(nodeid, exc.feedback(public))
        if public and nodeid in self._figures:
            self._feedback.setdefault(nodeid, {})["figures"] = self._figures[nodeid].items

    def _call_directly(self, item: pytest.Function, nodeid: str, names: list[str]) -> None:
        """Run one test function with the grader's fixtures and record its verdict (the same verdicts as
        through pytest's protocol, about a millisecond faster a test)."""
        try:
            item.obj(**{name: self._value(name, nodeid) for name in names})
        except GraderFault:
            raise
        except (Exception, pytest.skip.Exception, pytest.fail.Exception) as exc:
            self._record(nodeid, exc)
        else:
            self._record(nodeid, None)

    def _grade(self, job: Job, items: list) -> Graded:
        """Grade one submission; when the grader's own machinery fails, once more from scratch with a fresh
        zygote (a zygote killed from outside, say), and if it fails again, flag it (``grader_error``)."""
        graded = self._grade_once(job, items)
        if graded.grader_error:
            self._discard_zygote()
            graded = self._grade_once(job, items)
        return graded

    def _discard_zygote(self) -> None:
        if self._zygote is not None:
            self._zygote.close()
            self._zygote = None

    def _grade_once(self, job: Job, items: list) -> Graded:
        started = time.monotonic()
        self._verdicts, self._feedback, self._figures = {}, {}, {}
        error, fault = "", False
        nodeids = [item.nodeid for item, *_ in items]    # (pytest makes the string anew each time it is read)
        try:
            with self._worker(job) as worker:
                self._student = Student(worker, self.course.functions, self.course.limits, self._plan,
                                        self._wiring())
                for i, ((item, problem, _, visibility), nodeid) in enumerate(zip(items, nodeids)):
                    self._student.charge_to(problem.name)
                    args = self._direct_args[nodeid]
                    self._student.start_test(nodeid, visibility == "visible")
                    if args is not None:
                        self._call_directly(item, nodeid, args)
                    else:
                        nextitem = items[i + 1][0] if i + 1 < len(items) else None
                        item.ihook.pytest_runtest_protocol(item=item, nextitem=nextitem)
                    worker.check_fault()                 # a fault a suite's `except` swallowed still counts
        except GraderFault as err:
            error, fault = f"the grader failed, not your code: {err}", True
        except StudentError as err:                      # e.g. a submission too large to copy
            error = err.message
        except GradeError:                               # the sandbox cannot start: stop, score no one 0
            raise
        except Exception as exc:                         # never let one submission stop the batch
            import traceback

            traceback.print_exc(file=sys.stderr)         # for the instructor; the score file says only what
            error, fault = f"the grader failed on this submission ({type(exc).__name__}; its traceback is in " \
                           "the grader's output)", True  # (a message could hold a student's value)
        finally:
            self._student = None
        broken = [item.name for (item, *_), nodeid in zip(items, nodeids)
                  if self._verdicts.get(nodeid, ("", "", ""))[1] == "grader_error"]
        if broken and not fault:
            error, fault = f"the grader failed, not your code: test {broken[0]} raised an error of its own", True
        results = []
        for (item, problem, points, visibility), nodeid in zip(items, nodeids):
            status, kind, output = self._verdicts.get(nodeid, ("error", "not_run", f"not run: {error}"))
            results.append(TestResult(name=item.name, problem=problem.name, points=points, status=status,
                                      output=output, visibility=visibility, kind=kind,
                                      feedback=self._feedback.get(nodeid, {}),
                                      property=nodeid in self._properties))
        return Graded(job, tuple(results), time.monotonic() - started, describe(self.level), error, fault)

