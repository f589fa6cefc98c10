"""``grade override add STUDENT ...``: a TA's change of a grade, appended to the assignment's
overrides CSV (course.json ``overrides``) after the same checks every row of that file gets
(:func:`grader.course.overrides.load`: the kind, the problem, the points and their bounds, the due
date, one extension a student, a reason and who made it). The next ``grade autograde`` applies it to
the kept score file (re-scored, not regraded; regraded when it writes pages, ``--html``: a page
needs the results) and its summary says so; nothing is written when the row, or the file with it,
would not load."""

from __future__ import annotations

import csv
import io
import tempfile
from pathlib import Path

import click

from grader.course import csvfile
from grader.course import overrides as overrides_mod
from grader.course.manifest import CourseFile
from grader.course.manifest import load as load_course
from grader.errors import ExitStatus, GradeError
from grader.report import write_atomic


def add(
    *,
    course_path: CourseFile,
    student: str,
    kind: str,
    problem: str | None,
    points: str | None,
    due: str | None,
    reason: str,
    by: str,
) -> ExitStatus:
    """Append one override row, checked as the file's rows are; the line it became.

    :raises GradeError: course.json names no overrides file, or the row (or the file with it) does
        not load: one line naming the file, the line and the field; the file is left as it was.
    """
    course = load_course(course_path)
    path = course.overrides
    if path is None:
        raise GradeError(
            f"{course.path}: assignment {course.assignment!r} names no 'overrides' file: "
            f'add "overrides": "overrides/{course.assignment}.csv" to it (a header '
            "alone is a valid file)"
        )
    row = {
        "student": student,
        "kind": kind,
        "problem": problem or "",
        "points": points or "",
        "due": due or "",
        "reason": reason,
        "by": by,
    }
    if path.exists():
        header, rows = csvfile.rows(path, overrides_mod.COLUMNS)
        text = path.read_text(encoding="utf-8-sig")
    else:
        header, rows, text = list(overrides_mod.COLUMNS), [], ""
    needed = [c for c in overrides_mod.COLUMNS if row[c] or c in overrides_mod.ALWAYS]
    if all(c in header for c in needed):  # append: the file as it was, one line more
        body = text + ("" if not text or text.endswith(("\n", "\r")) else "\n")
        if not text:
            body = _line(list(overrides_mod.COLUMNS))
            header = list(overrides_mod.COLUMNS)
        body += _line([row.get(c, "") for c in header])
    else:  # a column it lacks: the whole header
        full = list(overrides_mod.COLUMNS)
        old = [dict(zip(header, r)) for r in rows if any(cell.strip() for cell in r)]
        body = _line(full) + "".join(_line([r.get(c, "") for c in full]) for r in old + [row])
    line = body.rstrip("\r\n").count("\n") + 1
    _check(body, path, course)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, body)
    what = f"extension to {due}" if kind == "extension" else f"{kind} {problem} {points}"
    click.echo(
        f"{path}: line {line}: {what} for {student} ({reason}; by {by}): the next grade "
        "autograde applies it (re-scored, or regraded with --html: a page needs the results) and "
        "its summary shows it"
    )
    return ExitStatus.OK


def _line(cells: list[str]) -> str:
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerow(cells)
    return buffer.getvalue()


def _check(body: str, path: Path, course) -> None:
    """``body`` loads as the overrides file (else a GradeError naming ``path``, not the copy)."""
    with tempfile.TemporaryDirectory(prefix="grade-override-") as tmp:
        copy = Path(tmp) / path.name
        copy.write_text(body, encoding="utf-8")
        try:
            overrides_mod.load(copy, {p.name: p.points for p in course.problems}, course.due)
        except GradeError as err:
            raise GradeError(
                str(err).replace(str(copy), str(path)) + " (nothing was written)"
            ) from None
