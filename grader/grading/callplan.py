"""What the runner runs, in what order, and which calls it sends ahead: the suites' files, the table
of collected tests (points checked, public before hidden), the tests it calls directly, and the call
plan (each plain test's first call, recorded once with no student code run).
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Callable, Iterable, Mapping

import pytest

from grader.course.manifest import Course, Problem
from grader.errors import GradeError
from grader.sandbox.proxy import Planned, Recorded, Recorder

Row = tuple[pytest.Item, Problem, float, str]  # a test, its problem, its points, its visibility
FIXTURES = {"student", "reference", "mistakes", "figure"}  # the grader's own


def suite_files(course: Course, hidden: bool) -> list[Path]:
    """The suites pytest collects: every problem's public one, and with ``hidden`` its hidden one
    too.

    :raises GradeError: a problem has no hidden suite.
    """
    chosen = list(course.problems)
    files = [p.public for p in chosen]
    if hidden:
        missing = [p.name for p in chosen if p.hidden is None]
        if missing:
            raise GradeError(
                f"{course.path}: field 'hidden': no hidden suite for {', '.join(missing)}"
            )
        files += [p.hidden for p in chosen]
    return files


def direct_args(item: pytest.Item) -> list[str] | None:
    """A plain test function whose only fixtures are ours (``figure`` asks pytest for ``request``):
    its arguments, to call it without pytest's per-test machinery; None for any other item."""
    if (
        not isinstance(item, pytest.Function)
        or hasattr(item, "callspec")
        or not set(item.fixturenames) <= FIXTURES | {"request"}
    ):
        return None
    names = list(inspect.signature(item.obj).parameters)
    return names if set(names) <= FIXTURES else None


def run_order(
    items: Iterable[pytest.Item],
    suites: Mapping[Path, tuple[Problem, bool]],
    course: Course,
    hidden: bool,
) -> list[Row]:
    """The collected tests as the runner runs them, each with its problem, points and visibility.

    :param suites: each suite file -> its problem, and whether the student may see its values and
        output.
    :raises GradeError: a test has no ``points`` marker, or (``hidden``) a problem's tests do not
        add up to its points in course.json.
    """
    table, totals = [], {}
    for item in items:
        problem, _ = suites[Path(item.path).resolve()]
        marker = item.get_closest_marker("points")
        if (
            marker is None
            or not marker.args
            or not isinstance(marker.args[0], (int, float))
            or marker.args[0] <= 0
        ):
            raise GradeError(f"{item.nodeid}: needs @pytest.mark.points(p) with p > 0")
        points = float(marker.args[0])
        totals[problem.name] = totals.get(problem.name, 0.0) + points
        visibility = "visible" if item.path.resolve() == problem.public else "after_published"
        table.append((item, problem, points, visibility))
    # Every public test before any hidden one: a public test's output must never follow a hidden
    # test's calls
    # (which are sent ahead only once the public tests are over).
    table.sort(key=lambda row: row[3] != "visible")
    if hidden:
        for problem in course.problems:
            if abs(totals.get(problem.name, 0.0) - problem.points) > 1e-9:
                raise GradeError(
                    f"{course.path}: field 'points' of {problem.name!r}: the suites' "
                    f"tests add up to {totals.get(problem.name, 0.0):g}, not {problem.points:g}"
                )
    return table


def record_plan(
    table: Iterable[Row],
    args: Mapping[str, list[str] | None],
    functions: Mapping[str, str],
    value: Callable[[str, str], object],
) -> list[Planned]:
    """The calls to send ahead for every submission (see :mod:`grader.sandbox.proxy`): each plain
    test (``args``: nodeid -> its arguments, see :func:`direct_args`) runs with a
    :class:`~grader.sandbox.proxy.Recorder` for ``student``, which records its first call and stops
    it there; ``value(name, nodeid)`` gives the grader's other fixtures. No student code runs, and
    the plan is the same for every student, whoever was graded before."""
    recorder = Recorder(functions)
    for item, _, _, visibility in table:
        names = args[item.nodeid]
        if names is None:
            continue
        recorder.start_test(item.nodeid, visibility == "visible")
        try:
            item.obj(
                **{
                    name: recorder if name == "student" else value(name, item.nodeid)
                    for name in names
                }
            )
        except (Recorded, Exception, pytest.skip.Exception, pytest.fail.Exception):
            pass  # a test that fails before calling: nothing to plan
    return recorder.made
