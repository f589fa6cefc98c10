"""``grade check``: the public tests on a folder of modules, in a worker process; the score document and the
exit verdict. The CLI and the notebook's :func:`grader.commands.jupyter.check` (through the CLI) both end here.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

from grader.course.manifest import Course


@dataclass(frozen=True)
class Checked:
    """What ``grade check`` found.

    :param doc: the score document of the public tests (``scoring.score(..., hidden=False)``), only the
        problems asked for.
    :param full_points: problem -> its points in the course (public and hidden tests), for those problems.
    :param results: the tests' results (their feedback feeds the HTML page); empty when read back from a file.
    :param notes: what the grader did with the files before grading (none for a plain folder).
    """

    doc: dict
    full_points: Mapping[str, float]
    results: tuple = ()
    notes: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        """The exit verdict: every public test of the problems asked for passes."""
        return self.doc["score"] == self.doc["max_score"]

    def __bool__(self) -> bool:
        return self.ok

    def __repr__(self) -> str:                           # a notebook shows it under the cell: one line
        verdict = "every public test passes" if self.ok else "some public tests fail"
        return f"<grade check: {self.doc['score']:g}/{self.doc['max_score']:g} public points, {verdict}>"


def full_points(course: Course, names: Sequence[str] = ()) -> dict[str, float]:
    """problem -> its points in the course, for ``names`` (default: every problem)."""
    return {p.name: p.points for p in course.problems if not names or p.name in names}


def check(course: Course, folder: Path, problems: Sequence[str] = ()) -> Checked:
    """Run the public suites on the modules in ``folder`` (every suite: a block test needs to know its
    components' mistakes), in one worker process, and score the ``problems`` asked for (default: all).

    :raises GradeError: an unknown problem, or a suite that fails to load.
    """
    from grader.grading import executors
    from grader.grading.results import Job
    from grader.sandbox.client import started_worker
    from grader.sandbox.policy import PROCESS
    from grader import scoring

    for name in problems:
        course.problem(name)
    # A student's own code on their own machine: process isolation, on every OS. The worker starts first:
    # its interpreter imports numpy while this one imports pytest and collects the suites.
    worker = started_worker(folder, course.limits, PROCESS, modules=course.modules,
                                    functions=course.functions)
    graded: list = []
    try:
        executors.run(course, [Job("you", folder)], graded.append, hidden=False, level=PROCESS,
                   warm=False, first_worker=worker)
    finally:
        if worker is not None:
            worker.close()
    result = graded[0]
    if problems:
        result = dataclasses.replace(result, results=tuple(r for r in result.results if r.problem in problems))
    return Checked(scoring.score(course, result, hidden=False), full_points(course, problems), result.results)
