"""What every exporter shares: the gradebook it gets (a column of rows per assignment), number and
text cells, CSV writing, the feedback line.

Numbers are rounded once, here, to 2 decimals with a ``.`` (half up, from the score file's value).
Text cells that a spreadsheet would run as a formula (starting with ``= + - @``, tab or CR) get a
leading ``'``; key cells (ids, logins, emails) are never changed, since the LMS must match them, so
one that starts like a formula is an error instead. CSV goes through the ``csv`` module (RFC 4180
quoting, CRLF) and an atomic write.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from datetime import datetime, timezone
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Iterable, Sequence

from grader.errors import GradeError
from grader.lms.roster import Person
from grader.report import write_atomic

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


class UnsafeKey(GradeError):
    """A roster id that starts like a spreadsheet formula (:func:`key_cell`)."""


@dataclass(frozen=True)
class Options:
    """What the formats need beyond the score files (each from a ``grade export`` flag or
    course.json).

    :param late_by_lms: export the score before the grader's late penalty (the LMS applies its own).
    :param points_possible: Canvas: add the optional "Points Possible" row.
    :param moodle_key: the Moodle user field the file is keyed on: ``email``, ``username`` or
        ``idnumber``.
    :param canvas_assignment_id: ``--canvas-assignment-id``: the one assignment's id, over
        course.json's.
    :param blackboard_column_id: ``--blackboard-column-id``: the one assignment's column, over
        course.json's.
    :param now: the export's time (LTI timestamps).
    """

    late_by_lms: bool = False
    canvas_assignment_id: str | None = None
    points_possible: bool = False
    moodle_key: str = "email"
    blackboard_column_id: str | None = None
    now: datetime = field(default_factory=lambda: datetime.now(timezone.utc))


@dataclass(frozen=True)
class Row:
    """One student to export: the roster row (None without a roster), the score file, the points to
    send."""

    student: str
    person: Person | None
    doc: dict
    score: float


@dataclass(frozen=True)
class Assignment:
    """An assignment: its name (the score files' ``assignment``), its maximum in points, and where
    it lives in the LMS (course.json ``lms``, or the flags when there is one assignment)."""

    name: str
    max_score: float
    canvas_assignment_id: str | None = None
    blackboard_column_id: str | None = None
    release_hidden_details: bool = False  # course.json's: the comments name hidden tests too


@dataclass(frozen=True)
class Column:
    """One assignment's grades: its rows by student id; a student without a row gets an empty
    cell."""

    assignment: Assignment
    rows: dict[str, Row]


@dataclass(frozen=True)
class Gradebook:
    """What an exporter writes: a column per assignment, and the students with a row in at least
    one, in roster order (by student id without a roster)."""

    columns: tuple[Column, ...]
    students: tuple[str, ...]

    def lines(self) -> list[tuple[str, Person | None, list[Row | None]]]:
        """Each student, their roster row (None without a roster) and their row in each column (or
        None)."""
        lines = []
        for student in self.students:
            cells = [column.rows.get(student) for column in self.columns]
            lines.append((student, next(row.person for row in cells if row is not None), cells))
        return lines

    def where(self, assignment: Assignment) -> str:
        """``" of assignment 'x'"`` when there are several columns, for messages that must say
        which."""
        return f" of assignment {assignment.name!r}" if len(self.columns) > 1 else ""


@dataclass(frozen=True)
class Written:
    """An exporter's report: students it could not key (no id for this LMS) and warnings for the
    instructor."""

    unkeyed: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def decimal_2(x: float) -> Decimal:
    """``x`` rounded once to 2 decimals, half up, from its shortest repr (2.675 -> 2.68)."""
    return Decimal(repr(float(x))).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP) + Decimal(
        "0.00"
    )


def points_2(x: float) -> str:
    """``8.5`` -> ``"8.50"``: plain decimal, ``.`` separator, no thousands separator."""
    return str(decimal_2(x))


def text_cell(value: str) -> str:
    """A text cell a spreadsheet will not run as a formula: ``=SUM(A1)`` -> ``'=SUM(A1)``."""
    return "'" + value if value.startswith(FORMULA_START) else value


def key_cell(value: str, column: str, student: str) -> str:
    """An id cell, unchanged (the LMS matches it exactly).

    :raises UnsafeKey: it starts like a formula, which can neither be written safely nor changed.
    """
    if value.startswith(FORMULA_START):
        raise UnsafeKey(
            f"student {student!r}: field {column!r}: {value!r} starts like a spreadsheet formula; "
            "an LMS would not match it once neutralised"
        )
    return value


def feedback(doc: dict, score: float) -> str:
    """One line for the student: each problem's points, the total, adjustments (with their reason),
    lateness (an extension, a missing submission time) and any grading error."""
    parts = [f"{p['name']} {p['score']:g}/{p['max_score']:g}" for p in doc["problems"]]
    text = "; ".join(parts) + f". Total {score:g}/{doc['max_score']:g}."
    for change in doc.get("adjustments", []):  # the reason, for the student; who made it stays home
        text += f" {change['problem']} {change['applied']:+g} by hand: {change['reason']}."
    late = doc.get("late")
    if late and late.get("extension"):
        text += f" Extension: due {late['due']}."
    if late and late.get("days_late"):
        text += f" Submitted {late['days_late']} day(s) late" + (
            f": {late['penalty']:g} points off {late['raw_score']:g}." if late["penalty"] else "."
        )
    if late and late.get("timestamp"):
        text += (
            f" No submission time ({late['timestamp']}): counted as "
            f"{late['counted_as'].replace('_', ' ')}"
            + (
                f", {late['penalty']:g} points off {late['raw_score']:g}."
                if late["penalty"]
                else "."
            )
        )
    if doc.get("error"):
        text += f" Not graded: {doc['error']}"
    return text


SHOWN_NAMES = 5  # failed tests named per problem in a comment; the feedback page names them all


def student_comment(
    doc: dict, score: float, *, release_hidden: bool = False, late_by_lms: bool = False
) -> str:
    """The student's feedback as plain text, one text for every place a comment goes: the Canvas
    push's submission comment, the LTI score's ``comment``, Moodle's ``Feedback:`` column,
    Gradescope's ``output``, the csv's ``feedback`` column and ``grade release-feedback``.

    The total; each problem's points and tests passed, the known mistakes its failed tests matched
    (their ``diagnosis:`` lines), the first failure when no mistake was matched, the public tests
    that failed (at most :data:`SHOWN_NAMES`, then how many more), and only a count of failed
    hidden tests unless the course releases hidden details (``release_hidden``); the instructor's
    adjustments with their reason (who made them stays home); an extension, lateness
    (``late_by_lms``: the LMS applies the late policy, so no penalty is said), a missing submission
    time; an error
    that stopped grading; the notes on what was handed in. Deterministic (no time in it), so an LMS
    that already has it is not sent it again.
    """
    lines = [f"{doc['assignment']}: {score:g}/{doc['max_score']:g}"]
    if doc.get("error"):
        lines.append(f"Not graded: {doc['error']}")
    for problem in doc["problems"]:
        tests = [t for t in doc["tests"] if t["problem"] == problem["name"]]
        passed = sum(t["status"] == "passed" for t in tests)
        lines.append(
            f"{problem['name']} {problem['score']:g}/{problem['max_score']:g} "
            f"({passed}/{len(tests)} tests passed)"
        )
        failed = [t for t in tests if t["status"] != "passed"]
        shown = [t for t in failed if t["visibility"] == "visible" or release_hidden]
        diagnoses = dict.fromkeys(
            line.strip()
            for t in shown
            for line in t["output"].splitlines()
            if line.startswith("diagnosis:")
        )
        lines += [f"  {d}" for d in diagnoses]
        if shown and not diagnoses:
            first = next((t["output"].splitlines()[0] for t in shown if t["output"].strip()), "")
            if first:
                lines.append(f"  first failure: {first[:300]}")
        if shown:
            names = [t["name"] for t in shown]
            more = f" and {len(names) - SHOWN_NAMES} more" if len(names) > SHOWN_NAMES else ""
            lines.append("  failed: " + ", ".join(names[:SHOWN_NAMES]) + more)
        hidden = len(failed) - len(shown)
        if hidden:
            lines.append(f"  {hidden} hidden test(s) failed (their details are not released)")
    for change in doc.get("adjustments", []):
        lines.append(f"{change['problem']} {change['applied']:+g} by hand: {change['reason']}")
    late = doc.get("late") or {}
    if late.get("extension"):
        lines.append(f"Extension: due {late['due']}.")
    if late.get("days_late"):
        penalty = (
            f": {late['penalty']:g} points off {late['raw_score']:g}." if late["penalty"] else "."
        )
        lines.append(
            f"Submitted {late['days_late']} day(s) late"
            + (": the LMS applies the late policy." if late_by_lms else penalty)
        )
    if late.get("timestamp"):
        lines.append(
            f"No submission time ({late['timestamp']}): counted as "
            f"{late['counted_as'].replace('_', ' ')}"
            + (
                f", {late['penalty']:g} points off {late['raw_score']:g}."
                if late["penalty"] and not late_by_lms
                else "."
            )
        )
    lines += [f"Note: {note}" for note in doc.get("submission_notes", [])]
    return "\n".join(lines)


def write_table(
    out: Path,
    header: Sequence[str],
    rows: Iterable[Sequence],
    *,
    delimiter: str = ",",
    quoting: int = csv.QUOTE_MINIMAL,
    excel: bool = False,
) -> None:
    """Write a CSV (or tab-separated) file atomically, UTF-8 (with a BOM when ``excel``), CRLF line
    ends."""
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer, delimiter=delimiter, quoting=quoting, lineterminator="\r\n")
    writer.writerow(header)
    writer.writerows(rows)
    write_atomic(out, buffer.getvalue(), encoding="utf-8-sig" if excel else "utf-8")


def blank_warning(blank: int, lms: str) -> list[str]:
    """A warning when ``blank`` cells are empty (students refused or without a score file in an
    assignment): Canvas and Moodle read a blank cell as "no grade", clearing one already there."""
    return (
        [
            f"{blank} empty grade cell(s), for students refused or without a score file in an "
            f"assignment: {lms} clears "
            "a grade already there on a blank cell (delete those cells, or the column, to keep it)"
        ]
        if blank
        else []
    )
