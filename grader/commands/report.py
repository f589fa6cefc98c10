"""``grade report``: the instructor's class report of one or several assignments' score folders, on
the terminal and, with ``--html``, as one self-contained page.

The score files are read and checked as ``grade export`` reads and checks them (:func:`load_scores`:
the schema, one assignment a folder; :func:`refusal`: signature, sums, course and grader versions).
A grader error is listed apart and never counted; a refused file is listed with its reason and left
out.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from grader.commands.export import Trust, load_scores, refusal, trust_of
from grader.course.manifest import Course, CourseFile
from grader.course.manifest import load as load_course
from grader.errors import ExitStatus, GradeError
from grader.feedback import classreport
from grader.feedback.glyphs import console
from grader.grading.signature import load_key


def _assignment(
    docs: list[tuple[Path, dict]], course: Course, trust: Trust, expected: set[str]
) -> classreport.Assignment:
    kept, refused = [], []
    for path, doc in docs:
        why = (
            None if doc["status"] == "grader_error" else refusal(doc, trust)
        )  # grader errors: listed apart
        if why is None:
            kept.append(doc)
        else:
            refused.append((doc["student"], f"{path.name}: {why}"))
    return classreport.build(course.assignment, kept, refused, expected)


def reports(
    folders: Sequence[Path],
    course_file: CourseFile,
    roster: Path | None = None,
    allow_stale: bool = False,
    similarity: Path | None = None,
    page_dir: Path | None = None,
) -> list[classreport.Assignment]:
    """One report per score folder, in the order given.

    :param roster: who should have a score file (else: whoever has one in some folder).
    :param similarity: the submissions folder of one assignment (the only one given, or
        ``course_file``'s ``--assignment``), whose code is compared
        (:mod:`grader.feedback.similarity`).
    :param page_dir: where the report's page is written: each student with a feedback page beside
        their score file (``grade autograde --html``) gets a link to it, relative to there.
    :raises GradeError: a bad score file, roster or course; two folders of one assignment;
        ``--similarity`` without saying which assignment it is.
    """
    key = load_key(course_file.path)
    loaded = [load_scores(folder) for folder in folders]
    names = [docs[0][1]["assignment"] for docs in loaded]
    for i, name in enumerate(names):
        if name in names[:i]:
            raise GradeError(
                f"{folders[i]}: field 'assignment': {name!r} is also the assignment of "
                f"{folders[names.index(name)]}"
            )
    if course_file.assignment is not None and course_file.assignment not in names:
        raise GradeError(
            f"--assignment {course_file.assignment}: none of the score folders is its "
            f"(they are {', '.join(names)})"
        )
    compared = course_file.assignment or (names[0] if len(names) == 1 else None)
    if similarity is not None and compared is None:
        raise GradeError(
            "--similarity: several score folders: say whose submissions these are with --assignment"
        )
    if roster is not None:
        from grader.lms.roster import load as load_roster

        expected = set(load_roster(roster))
    else:
        expected = {doc["student"] for docs in loaded for _, doc in docs}
    out = []
    for folder, docs, name in zip(folders, loaded, names):
        course = load_course(CourseFile(course_file.path, name))
        trust = trust_of(course, key, allow_stale, folder, [d for _, d in docs])
        report = _assignment(docs, course, trust, expected)
        from dataclasses import replace

        if similarity is not None and name == compared:
            from grader.feedback.similarity import compare

            report = replace(report, similar=compare(course, similarity))
        if page_dir is not None:
            report = replace(report, pages=_pages(folder, report, page_dir))
        out.append(report)
    return out


def _pages(folder: Path, report: classreport.Assignment, page_dir: Path) -> dict[str, str]:
    """Each counted student's feedback page (``<student>.html`` beside the score file), as a link
    relative to ``page_dir``: percent-encoded, since a student id may hold any character."""
    import os
    from urllib.parse import quote

    found = {}
    for student in report.students:
        page = folder / f"{student.student}.html"
        if page.is_file():
            found[student.student] = quote(
                Path(os.path.relpath(page.resolve(), page_dir.resolve())).as_posix()
            )
    return found


def main(
    *,
    scores_dirs: Sequence[Path],
    course_path: CourseFile,
    html_path: Path | None,
    roster: Path | None,
    allow_stale: bool,
    similarity: Path | None,
) -> ExitStatus:
    """Print the class report of ``scores_dirs`` and, with ``html_path``, write its page there."""
    found = reports(
        scores_dirs,
        course_path,
        roster,
        allow_stale,
        similarity,
        html_path.parent if html_path is not None else None,
    )
    if html_path is not None:  # drawn first: a missing extra fails before any output
        from grader.feedback import classpage
        from grader.report import write_atomic

        title = (
            load_course(CourseFile(course_path.path, found[0].name)).title
            if len(found) == 1
            else ", ".join(r.name for r in found)
        )
        page = classpage.render(found, title)
    out = console()
    for report in found:
        from grader.feedback.classview import show

        show(report, out)
    if html_path is not None:
        html_path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(html_path, page)
        out.print(f"{html_path}: the class report page", markup=False, highlight=False)
    return ExitStatus.OK
