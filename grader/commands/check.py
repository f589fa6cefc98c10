"""``grade check``: the public tests on a folder of modules, in a worker process; the score document
and the exit verdict. The CLI and the notebook's :func:`grader.commands.jupyter.check` (through the
CLI) both end here.
"""

from __future__ import annotations

import dataclasses
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

from grader.course.manifest import Course
from grader.errors import ExitStatus, GradeError


def main(
    *,
    problems: Sequence[str],
    course_path: Path,
    path: Path | None,
    json_path: Path | None,
    html_path: Path | None,
) -> ExitStatus:
    """Check the modules at ``path`` (default: the course's exercises/), a folder or a hand-in,
    print the table and write the files asked for; the exit status (0 only when every test
    passes)."""
    import click

    from grader.course import manifest as course_mod
    from grader.feedback.glyphs import console

    course = course_mod.load(course_path)
    folder = path or course.exercises
    if not folder.exists():
        raise GradeError(
            f"{folder}: folder not found (pass --path with your modules' folder, or your hand-in)"
        )
    for name in problems:
        course.problem(name)
    warning = foreign_code_warning(folder) if path is not None else None
    if warning:
        click.echo(warning, err=True)
    work = Path(tempfile.mkdtemp(prefix="grade-check-"))
    try:
        checked = check(course, as_graded(course, folder, work), problems)
        from grader import report  # after: it imports numpy, the worker starts first

        report.problem_table(checked.doc, console(), full_points=checked.full_points)
        if json_path:
            report.write_score(checked.doc, json_path)
        if html_path:
            from grader.feedback import page

            report.write_atomic(
                html_path, page.render(checked.doc, page.feedback_of(checked.results))
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return ExitStatus.OK if checked.ok else ExitStatus.FAILED


@dataclass(frozen=True)
class Checked:
    """What ``grade check`` found.

    :param doc: the score document of the public tests (``scoring.score(..., hidden=False)``), only
        the problems asked for.
    :param full_points: problem -> its points in the course (public and hidden tests), for those
        problems.
    :param results: the tests' results (their feedback feeds the HTML page); empty when read back
        from a file.
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

    def __repr__(self) -> str:  # a notebook shows it under the cell: one line
        verdict = "every public test passes" if self.ok else "some public tests fail"
        return (
            f"<grade check: {self.doc['score']:g}/{self.doc['max_score']:g} public points, "
            f"{verdict}>"
        )


def full_points(course: Course, names: Sequence[str] = ()) -> dict[str, float]:
    """problem -> its points in the course, for ``names`` (default: every problem)."""
    return {p.name: p.points for p in course.problems if not names or p.name in names}


def check(course: Course, folder: Path, problems: Sequence[str] = ()) -> Checked:
    """Run the public suites on the modules in ``folder`` (every suite: a block test needs to know
    its components' mistakes), in one worker process, and score the ``problems`` asked for (default:
    all).

    :raises GradeError: an unknown problem, or a suite that fails to load.
    """
    from grader import scoring
    from grader.grading import executors, phases
    from grader.grading.results import Job
    from grader.sandbox.client import started_worker
    from grader.sandbox.policy import PROCESS

    for name in problems:
        course.problem(name)
    # A student's own code on their own machine: process isolation, on every OS. The worker starts
    # first:
    # its interpreter imports numpy while this one imports pytest and collects the suites.
    first = phases.plan(course)[0]
    # A student's release holds no reference: its worker may be forked from this process (Linux).
    worker = started_worker(
        folder,
        course.limits,
        PROCESS,
        modules=first.modules,
        reference=first.reference,
        fork=not phases.has_reference(course),
    )
    graded: list = []
    try:
        executors.run(
            course,
            [Job("you", folder)],
            graded.append,
            hidden=False,
            level=PROCESS,
            warm=False,
            first_worker=worker,
        )
    finally:
        if worker is not None:
            worker.close()
    result = graded[0]
    if problems:
        result = dataclasses.replace(
            result, results=tuple(r for r in result.results if r.problem in problems)
        )
    return Checked(
        scoring.score(course, result, hidden=False), full_points(course, problems), result.results
    )


def as_graded(course: Course, path: Path, work: Path) -> Path:
    """The folder autograde would grade for ``path`` (a folder, .zip, .ipynb or .py), made under
    ``work``; its notes (what was left out, and why) are printed. Hand-in and check read alike."""
    import click

    from grader.intake import collect

    if path.is_file() and path.suffix not in collect.SUFFIXES:
        raise GradeError(f"{path}: not a folder, .zip, .ipynb or .py")
    submission = collect.one(course, "you", path, work)
    for note in submission.notes:
        click.echo(f"note: {note}", err=True)
    if submission.error:
        raise GradeError(f"{path}: {submission.error}")
    return submission.folder


def foreign_code_warning(folder: Path, euid: int | None = None) -> str | None:
    """The warning for `grade check --path FOLDER` when the code may not be the user's own: run by
    root, or in a folder someone else owns (a TA checking a student's work). `check` has no
    sandbox."""
    import os

    if os.name != "posix":
        return None
    euid = os.geteuid() if euid is None else euid
    if euid == 0:
        return (
            "Warning: grade check as root: this code runs as root with only process isolation and "
            "can read, "
            "change or kill anything on this machine; check someone else's work as an unprivileged "
            "user, or "
            "grade it with grade autograde (bwrap sandbox)."
        )
    try:
        owner = folder.stat().st_uid
    except OSError:
        return None
    if owner != euid:
        return (
            f"Warning: {folder} belongs to another user (uid {owner}): grade check runs its code "
            "with only "
            "process isolation, and it can read or change whatever you can; grade someone else's "
            "work with "
            "grade autograde (bwrap sandbox)."
        )
    return None
