"""The instructor's overrides: per-student extensions and manual adjustments, from the CSV
course.json names.

``overrides`` (per assignment, a path beside course.json; instructors only: never released, never in
the Gradescope zip) is a UTF-8 CSV (a BOM is fine), one row per override, the header in any order::

    student,kind,problem,points,due,reason,by
    grace_partial,extension,,,2026-05-04T23:59:00+01:00,medical certificate,prof.hopper
    edsger_post_ln,adjust,block,+5,,pre-LN wiring right in a later cell (regraded by
    hand),ta.dijkstra

``kind`` is ``extension`` (``due``: that student's due date, ISO 8601 with a time zone), ``adjust``
(``points`` added to or removed from ``problem``; the problem stays within 0 and its points) or
``bonus`` (points added that may take the problem above its points, by at most its points; never
below 0). ``reason`` and ``by`` are required: every change of a grade says why and who made it. Only
the columns the rows use are needed. Pure: reading and checking only;
:func:`grader.scoring.finish` applies them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Mapping

from grader.course import csvfile
from grader.course.late import parse_iso
from grader.errors import GradeError

COLUMNS = ("student", "kind", "problem", "points", "due", "reason", "by")
KINDS = ("extension", "adjust", "bonus")
ALWAYS = ("student", "kind", "reason", "by")


@dataclass(frozen=True)
class Adjustment:
    """Points added to (or, negative, removed from) one problem, with why and by whom; ``line`` in
    the CSV."""

    problem: str
    kind: str
    points: float
    reason: str
    by: str
    line: int


@dataclass(frozen=True)
class Extension:
    """A student's own due date, with why and by whom."""

    due: datetime
    reason: str
    by: str
    line: int


@dataclass(frozen=True)
class StudentOverrides:
    """One student's overrides: at most one extension, and the adjustments in the file's order."""

    extension: Extension | None = None
    adjustments: tuple[Adjustment, ...] = ()


def load(
    path: Path | None, problems: Mapping[str, float], due: datetime | None
) -> dict[str, StudentOverrides]:
    """Read the overrides of one assignment, keyed by student id ({} without a file).

    :param problems: the assignment's problem names (to their points).
    :param due: the assignment's due date; an extension without one is an error.
    :raises GradeError: one line naming the file, the line and the field.
    """
    if path is None:
        return {}
    path = Path(path)
    header, rows = csvfile.rows(
        path, COLUMNS, not_found="not found (course.json's 'overrides' names it)"
    )
    for column in header:
        if column not in COLUMNS:
            raise GradeError(
                f"{path}: line 1: field {column!r}: unknown column (the header is "
                f"{','.join(COLUMNS)})"
            )
    for column in ALWAYS:
        if column not in header:
            raise GradeError(
                f"{path}: line 1: field {column!r}: column missing (the header is "
                f"{','.join(COLUMNS)})"
            )
    found: dict[str, StudentOverrides] = {}
    for line, row in enumerate(rows, start=2):
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(header):
            raise GradeError(
                f"{path}: line {line}: {len(row)} fields, the header has {len(header)}"
            )
        cells = {column: cell.strip() for column, cell in zip(header, row)}
        student = _student(path, line, cells)
        found[student] = _parsed(path, line, cells, problems, due, found.get(student))
    return found


def _student(path: Path, line: int, cells: dict) -> str:
    """The row's student, once the cells every row needs are checked."""
    for column in ALWAYS:
        if not cells[column]:
            raise GradeError(
                f"{path}: line {line}: field {column!r}: empty"
                + (" (say why the grade changes)" if column == "reason" else "")
                + (" (say who made the change)" if column == "by" else "")
            )
    if cells["kind"] not in KINDS:
        raise GradeError(
            f"{path}: line {line}: field 'kind': {cells['kind']!r} is not one of {', '.join(KINDS)}"
        )
    return cells["student"]


def _cell(path: Path, line: int, cells: dict, column: str, needed: bool) -> str:
    """A cell the row's kind needs (``needed``: must be there and not empty) or must leave empty."""
    value = cells.get(column, "")
    if needed and column not in cells:
        raise GradeError(
            f"{path}: line {line}: field {column!r}: column missing ({cells['kind']} needs it)"
        )
    if needed and not value:
        raise GradeError(f"{path}: line {line}: field {column!r}: empty ({cells['kind']} needs it)")
    if not needed and value:
        raise GradeError(
            f"{path}: line {line}: field {column!r}: must be empty for {cells['kind']}"
        )
    return value


def _parsed(
    path: Path,
    line: int,
    cells: dict,
    problems: Mapping[str, float],
    due,
    before: StudentOverrides | None,
) -> StudentOverrides:
    before = before or StudentOverrides()
    kind = cells["kind"]
    if kind == "extension":
        text = _cell(path, line, cells, "due", True)
        for column in ("problem", "points"):
            _cell(path, line, cells, column, False)
        if due is None:
            raise GradeError(
                f"{path}: line {line}: field 'due': an extension, but course.json gives no 'due'"
            )
        try:
            new_due = parse_iso(text)
        except ValueError as err:
            raise GradeError(
                f"{path}: line {line}: field 'due': not an ISO 8601 date-time with a time zone: "
                f"{err}"
            ) from None
        if before.extension is not None:
            raise GradeError(
                f"{path}: line {line}: field 'student': {cells['student']!r} already has an "
                f"extension on line {before.extension.line}"
            )
        return StudentOverrides(
            Extension(new_due, cells["reason"], cells["by"], line), before.adjustments
        )
    problem = _cell(path, line, cells, "problem", True)
    text = _cell(path, line, cells, "points", True)
    _cell(path, line, cells, "due", False)
    if problem not in problems:
        raise GradeError(
            f"{path}: line {line}: field 'problem': no problem named {problem!r} "
            f"(known: {', '.join(problems)})"
        )
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value == 0 or (kind == "bonus" and value < 0):
        raise GradeError(
            f"{path}: line {line}: field 'points': must be a number of points other than 0"
            + (" and above it (a bonus adds points)" if kind == "bonus" else "")
            + f", got {text!r}"
        )
    if (
        kind == "bonus" and value > problems[problem]
    ):  # 1e300 for 1.3, 500 for 5.00: a typo, not a bonus
        raise GradeError(
            f"{path}: line {line}: field 'points': a bonus of at most the problem's own points "
            f"({problems[problem]:g} for {problem}), got {text!r}"
        )
    return StudentOverrides(
        before.extension,
        before.adjustments
        + (Adjustment(problem, kind, round(value, 6), cells["reason"], cells["by"], line),),
    )


def recorded(doc: dict) -> tuple:
    """What of the overrides a score document records (to compare with :func:`expected`): its
    adjustments, and its extension when its lateness was assessed (a folder's or zip's is the LMS's:
    none recorded)."""
    adjustments = tuple(
        (a["problem"], a["kind"], a["points"], a["reason"], a["by"])
        for a in doc.get("adjustments", ())
    )
    late = doc.get("late")
    extension = (late or {}).get("extension")
    return adjustments, (late["due"], extension["reason"], extension["by"]) if extension else None


def expected(doc: dict, mine: StudentOverrides | None) -> tuple:
    """What a score document made now from ``mine`` would record (see :func:`recorded`)."""
    mine = mine or StudentOverrides()
    adjustments = tuple((a.problem, a.kind, a.points, a.reason, a.by) for a in mine.adjustments)
    extension = mine.extension if "late" in doc else None
    return adjustments, (
        (extension.due.isoformat(timespec="milliseconds"), extension.reason, extension.by)
        if extension
        else None
    )
