"""Run the trusted pytest suites against submissions, in the grader process, and collect plain
results.

pytest runs once per grader process: the suites are collected once, then every item runs once per
submission (``pytest_runtestloop``), with the ``student`` fixture bound to that submission's proxy.
Student code runs only in the sandboxed workers behind the proxy, one per phase
(:mod:`grader.grading.phases`). Each collected test starts as "not run" with 0 points; only the
grader's own verdict on a test makes it pass.
"""

from __future__ import annotations

import dataclasses
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Callable, Iterable

import pytest

from grader.course.manifest import Course, Problem
from grader.errors import GradeError, GraderFault, StudentError
from grader.feedback.figures import Figures
from grader.grading import callplan, phases
from grader.grading.reference import load_reference
from grader.grading.results import Graded, Job
from grader.grading.verdicts import Test, Verdicts
from grader.sandbox.client import Worker, started_worker
from grader.sandbox.inflight import Spent
from grader.sandbox.policy import describe
from grader.sandbox.process import Copy
from grader.sandbox.proxy import Planned, Student
from grader.sandbox.zygote import Zygote

PYTEST_INI = Path(__file__).with_name("pytest.ini")


class GradingPlugin:
    """The pytest plugin that feeds submissions to the collected items and records verdicts."""

    def __init__(
        self,
        course: Course,
        jobs: Iterable[Job],
        on_result: Callable[[Graded], None],
        hidden: bool,
        level: str,
        warm: bool,
        tmp_root: Path | None,
        first_worker: Worker | None = None,
        run_as: str | None = None,
        mistakes=None,
    ):
        self.course = course
        self.run_as = run_as
        self.tmp_root = tmp_root
        self.level = level
        self.warm = warm and _passes_fds()  # POSIX: fork workers from a warm zygote
        self._zygote: Zygote | None = None
        self._early = first_worker  # the first submission's worker, started cold and early
        self.jobs = jobs
        self.on_result = on_result
        self.hidden = hidden
        self.error: BaseException | None = None
        self.ran = False
        self._collect_errors: list[str] = []
        self._student: Student | None = None
        self._reference: SimpleNamespace | None = None
        self._mistakes = mistakes  # the catalogue, made on first need unless given
        self._verdicts = Verdicts({})
        self._phases: list[
            tuple[phases.Phase, list[callplan.Row], list[Planned]]
        ] = []  # see _plan_phases
        self._suites: dict[Path, tuple[Problem, bool]] = {}
        self._tests: dict[str, Test] = {}  # nodeid -> what the runner knows of it
        self._direct_args: dict[
            str, list[str] | None
        ] = {}  # nodeid -> arguments when called directly
        for p in course.problems:
            self._suites[p.public] = (p, True)
            if p.hidden:
                self._suites[p.hidden] = (p, course.release_hidden_details)

    def pytest_configure(self, config: pytest.Config) -> None:
        config.addinivalue_line("markers", "points(p): the points a test is worth (p > 0)")
        config.addinivalue_line(
            "markers",
            "property: the test checks a property on the student's own outputs "
            "(never their values against the reference's)",
        )

    def _value(self, name: str, nodeid: str):
        """The value of one of the grader's fixtures for the test ``nodeid``."""
        if name == "student":
            return self._student
        if name == "reference":
            if self._reference is None:
                self._reference = load_reference(self.course, remember=True)
            return self._reference
        if name == "mistakes":
            if self._mistakes is None:
                from grader.feedback.mistakes import Catalogue

                self._mistakes = Catalogue.for_course(self.course)
            return self._mistakes
        if name == "figure":
            return self._verdicts.figures.setdefault(nodeid, Figures())
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
        """The course's known mistakes: ``diagnose=mistakes.<function>(*args)`` (see
        grader.feedback.mistakes)."""
        return self._value("mistakes", "")

    @pytest.fixture
    def figure(self, request: pytest.FixtureRequest) -> Figures:
        """``figure(title, **arrays)``: heat maps for this test's feedback page (see
        grader.feedback.figures)."""
        return self._value("figure", request.node.nodeid)

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self._collect_errors.append(
                f"{report.nodeid}: {report.longreprtext.strip().splitlines()[-1]}"
            )

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo
    ) -> pytest.TestReport:
        """Record the verdict, and make a plain report: pytest's own would format a traceback we
        never show."""
        if call.when == "call" or call.excinfo is not None:
            self._record(item.nodeid, call.excinfo.value if call.excinfo else None)
        verdict = self._verdicts.verdicts.get(item.nodeid, ("passed", "", ""))
        outcome = "passed" if call.excinfo is None else "failed"
        return pytest.TestReport(
            item.nodeid,
            item.location,
            {},
            outcome,
            verdict[2] or None,
            call.when,
            duration=call.duration,
            start=call.start,
            stop=call.stop,
        )

    def _items(self, session: pytest.Session) -> list[callplan.Row]:
        if self._collect_errors:
            raise GradeError("a suite failed to load: " + "; ".join(self._collect_errors))
        table = callplan.run_order(session.items, self._suites, self.course, self.hidden)
        uses = phases.uses(self.course)
        for item, problem, points, visibility in table:
            self._tests[item.nodeid] = Test(
                item.name,
                problem.name,
                problem.module,
                points,
                visibility,
                self._suites[Path(item.path).resolve()][1],
                item.get_closest_marker("property") is not None,
                uses[problem.name],
            )
            self._direct_args[item.nodeid] = callplan.direct_args(item)
        return table

    def start_early(self) -> None:
        """Start the zygote (or, cold, the first submission's worker) before pytest starts: its
        interpreter imports numpy while pytest loads and collects the suites (about 0.1 s off `grade
        check`)."""
        if self.warm:
            self._zygote = Zygote(
                self.level,
                self.tmp_root,
                wait=False,
                imports=self.course.limits.imports,
                run_as=self.run_as,
            )
        elif self._early is None and isinstance(self.jobs, (list, tuple)) and self.jobs:
            first = phases.plan(self.course)[0]
            self._early = started_worker(
                self.jobs[0].path,
                self.course.limits,
                self.level,
                self.tmp_root,
                first.modules,
                self.run_as,
                first.reference,
            )

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
            self._plan_phases(items)
            for job in self.jobs:
                self.on_result(self._grade(job, items))
        except BaseException as exc:  # re-raised by run() after pytest returns
            self.error = exc
        return True

    def _plan_phases(self, items: list[callplan.Row]) -> None:
        """Split the tests by phase (:func:`grader.grading.phases.plan`), and learn each phase's
        calls to send ahead (:func:`grader.grading.callplan.record_plan`; only with a zygote: calls
        are sent ahead to forked workers)."""
        for phase in phases.plan(self.course):
            # a problem that uses others after them: its feedback says whether they failed their own
            # tests
            rows = sorted(
                (row for row in items if row[1].name in phase.problems),
                key=lambda row: (row[3] != "visible", bool(self._tests[row[0].nodeid].uses)),
            )
            if not rows:
                continue
            plan = callplan.record_plan(rows, self._direct_args, self.course.functions, self._value)
            self._phases.append((phase, rows, plan))
            for item, *_ in rows:
                self._tests[item.nodeid] = dataclasses.replace(
                    self._tests[item.nodeid], components=phase.components
                )

    def _worker(self, job: Job, phase: phases.Phase, spent: Spent, copies: list[Copy]) -> Worker:
        worker = self._new_worker(job, phase, spent, copies)
        if not phase.reference:  # the student's own components: which ones each call ran
            uses = phases.uses(self.course)
            worker.watch({p.module: uses[p.name] for p in self.course.problems})
        return worker

    def _new_worker(
        self, job: Job, phase: phases.Phase, spent: Spent, copies: list[Copy]
    ) -> Worker:
        """This submission's worker for ``phase``: the one started early, or forked from the zygote
        (restarted if a submission killed it) on the submission's private copy in its spool (made
        for the first phase, and added to ``copies``), or else started cold.

        :raises GradeError: the zygote's sandbox could not start.
        :raises StudentError: the submission cannot be copied.
        """
        if (
            self._early is not None
            and self.jobs
            and job is self.jobs[0]
            and phase is self._phases[0][0]
        ):
            early, self._early = self._early, None
            return early
        modules, reference = phase.modules, phase.reference
        if not self.warm:
            return Worker(
                job.path,
                self.course.limits,
                self.level,
                None,
                self.tmp_root,
                modules,
                self.run_as,
                reference,
                spent,
            )
        if self._zygote is not None and not self._zygote.alive:
            self._discard_zygote()
        if self._zygote is None:
            self._zygote = Zygote(
                self.level, self.tmp_root, imports=self.course.limits.imports, run_as=self.run_as
            )
        self._zygote.wait()
        if not copies or copies[-1].parent != self._zygote.spool:
            copies.append(Copy(job.path, self._zygote.spool, self._zygote.run_as, shared=True))
        return Worker(
            job.path,
            self.course.limits,
            self.level,
            self._zygote,
            self.tmp_root,
            modules,
            reference=reference,
            spent=spent,
            copy=copies[-1],
        )

    def _record(self, nodeid: str, exc: BaseException | None) -> None:
        student = self._student
        self._verdicts.record(
            nodeid,
            exc,
            student.take_output() if student else "",
            student.take_used() if student else None,
        )

    def _call_directly(self, item: pytest.Function, nodeid: str, names: list[str]) -> None:
        """Run one test function with the grader's fixtures and record its verdict (the same
        verdicts as through pytest's protocol, about a millisecond faster a test)."""
        try:
            item.obj(**{name: self._value(name, nodeid) for name in names})
        except GraderFault:
            raise
        except (Exception, pytest.skip.Exception, pytest.fail.Exception) as exc:
            self._record(nodeid, exc)
        else:
            self._record(nodeid, None)

    def _grade(self, job: Job, items: list) -> Graded:
        """Grade one submission; when the grader's own machinery fails, once more from scratch with
        a fresh zygote (a zygote killed from outside, say), and if it fails again, flag it
        (``grader_error``)."""
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
        self._verdicts = Verdicts(self._tests)
        error, fault = "", False
        nodeids = [
            item.nodeid for item, *_ in items
        ]  # (pytest makes the string anew each time it is read)
        order = [
            row[0] for _, rows, _ in self._phases for row in rows
        ]  # the items in the order run
        following = dict(zip(order, order[1:]))
        spent = Spent()  # the submission's imports, over its workers
        copies: list[Copy] = []  # its private copy, read by every phase's worker
        try:
            for phase, rows, plan in self._phases:
                with self._worker(job, phase, spent, copies) as worker:
                    spent = worker.spent
                    if self._student is None:
                        self._student = Student(
                            worker, self.course.functions, self.course.limits, plan
                        )
                    else:
                        self._student.use(worker, plan)
                    for item, problem, _, visibility in rows:
                        nodeid = item.nodeid
                        self._student.charge_to(problem.name)
                        args = self._direct_args[nodeid]
                        self._student.start_test(nodeid, visibility == "visible")
                        if args is not None:
                            self._call_directly(item, nodeid, args)
                        else:
                            item.ihook.pytest_runtest_protocol(
                                item=item, nextitem=following.get(item)
                            )
                        worker.check_fault()  # a fault a suite's `except` swallowed still counts
                    self._student.start_test(None)
        except GraderFault as err:
            error, fault = f"the grader failed, not your code: {err}", True
        except StudentError as err:  # e.g. a submission too large to copy
            error = err.message
        except GradeError:  # the sandbox cannot start: stop, score no one 0
            raise
        except Exception as exc:  # never let one submission stop the batch
            import traceback

            traceback.print_exc(
                file=sys.stderr
            )  # for the instructor; the score file says only what
            error, fault = (
                f"the grader failed on this submission ({type(exc).__name__}; its traceback is in "
                "the grader's output)",
                True,
            )  # (a message could hold a student's value)
        finally:
            self._student = None
            for copy in copies:
                copy.close()
        broken = self._verdicts.grader_error()
        if broken and not fault:
            error, fault = (
                f"the grader failed, not your code: test {broken} raised an error of its own",
                True,
            )
        return Graded(
            job,
            self._verdicts.results(nodeids, error),
            time.monotonic() - started,
            describe(self.level),
            error,
            fault,
        )


def _passes_fds() -> bool:
    """Whether this system passes file descriptors over a socket (a zygote hands out workers so)."""
    import socket  # not grade check's cost: it never starts a zygote

    return hasattr(socket, "send_fds")
