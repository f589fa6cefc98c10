"""``grade release-feedback OUT/ --to DIR``: each student's feedback, in a folder of their own, to
hand back.

The score folder is read and checked as ``grade export`` checks it (the schema, the signature, the
course's and grader's versions, the overrides as they are now): a grader error or a refused file is
listed and not delivered (it is no grade). Every other student gets ``DIR/<student>/``:

- ``<assignment>.html``, their feedback page, when ``grade autograde --html`` wrote one;
- ``<assignment>-feedback.txt``, the comment every LMS gets
(:func:`grader.lms.exporters.common.student_comment`:
  points, known mistakes, failed public tests, adjustments with their reason, lateness).

For an nbgrader course, ``--nbgrader COURSE`` writes nbgrader's own layout instead, the one
``nbgrader generate_feedback`` writes and ``nbgrader release_feedback`` reads:
``COURSE/feedback/<student>/<assignment>/ <assignment>.html`` (the page, or the comment as a page
when there is none) with the submission's ``timestamp.txt`` (and ``submission_secret.txt``, when
nbgrader's exchange wrote one) copied from ``COURSE/submitted/<student>/<assignment>/``."""

from __future__ import annotations

import html
import shutil
from pathlib import Path

import click

from grader.commands.export import load_scores, refusal, trust_of
from grader.course.manifest import CourseFile
from grader.course.manifest import load as load_course
from grader.errors import ExitStatus, GradeError
from grader.grading.signature import load_key
from grader.lms.exporters.common import student_comment
from grader.report import write_atomic

NBGRADER_COPIED = (
    "timestamp.txt",
    "submission_secret.txt",
)  # what nbgrader's release_feedback reads


def main(
    *,
    scores_dir: Path,
    course_path: CourseFile,
    to_dir: Path | None = None,
    nbgrader_dir: Path | None = None,
    allow_stale: bool = False,
) -> ExitStatus:
    """Write each trusted score file's feedback; exit status 1 when a student was left out.

    :raises GradeError: bad input (score files, course, options), before anything is written.
    """
    if (to_dir is None) == (nbgrader_dir is None):
        raise GradeError(
            "give --to DIR (a folder per student) or --nbgrader COURSE_DIR "
            "(nbgrader's feedback/<student>/<assignment>/)"
        )
    loaded = load_scores(scores_dir)
    name = loaded[0][1]["assignment"]
    if course_path.assignment is not None and course_path.assignment != name:
        raise GradeError(
            f"{scores_dir}: field 'assignment': its score files are {name!r}'s, not "
            f"{course_path.assignment!r}'s"
        )
    course = load_course(CourseFile(course_path.path, name))
    trust = trust_of(course, load_key(course.path), allow_stale, scores_dir, [d for _, d in loaded])
    left_out, written = [], 0
    for path, doc in loaded:
        student = doc["student"]
        why = refusal(doc, trust)
        if why is not None:
            left_out.append(f"{student} ({path.name}): {why}")
            continue
        if student in (".", "..") or any(c in student for c in "/\\\0"):
            left_out.append(f"{student} ({path.name}): not usable as a folder name")
            continue
        text = student_comment(doc, doc["score"], release_hidden=course.release_hidden_details)
        page = path.with_suffix(".html")
        page = page if page.is_file() else None
        if to_dir is not None:
            folder = to_dir / student
            folder.mkdir(parents=True, exist_ok=True)
            write_atomic(folder / f"{name}-feedback.txt", text + "\n")
            if page is not None:
                shutil.copyfile(page, folder / f"{name}.html")
        else:
            _nbgrader(nbgrader_dir, student, name, text, page)
        written += 1
    for line in left_out:
        click.echo(f"left out: {line}", err=True)
    where = to_dir if to_dir is not None else nbgrader_dir / "feedback"
    click.echo(f"{where}: feedback of {written} students of {name}, {len(left_out)} left out")
    return ExitStatus.FAILED if left_out else ExitStatus.OK


def _nbgrader(
    course_dir: Path, student: str, assignment: str, text: str, page: Path | None
) -> None:
    """nbgrader's feedback layout: ``feedback/<student>/<assignment>/<assignment>.html``, and the
    files of the submission that ``nbgrader release_feedback`` reads."""
    folder = course_dir / "feedback" / student / assignment
    folder.mkdir(parents=True, exist_ok=True)
    if page is not None:
        shutil.copyfile(page, folder / f"{assignment}.html")
    else:  # graded without --html: the comment, as a page nbgrader serves
        write_atomic(
            folder / f"{assignment}.html",
            f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>'
            f"{html.escape(assignment)}: feedback for {html.escape(student)}</title></head>"
            f"<body><pre>{html.escape(text)}</pre></body></html>\n",
        )
    submitted = course_dir / "submitted" / student / assignment
    for name in NBGRADER_COPIED:
        if (submitted / name).is_file():
            shutil.copyfile(submitted / name, folder / name)
