"""Canvas gradebook CSV import (``gradebook_importer.rb``).

Header ``Student,ID,SIS User ID,SIS Login ID,Section``, then a column per assignment, ``<Assignment>
(<id>)``: Canvas matches each column by the id in parentheses (else by title, else it creates a new
assignment), and each row by ``ID``, then ``SIS User ID``, then ``SIS Login ID``. A row needs one of
them. No "Points Possible" row unless asked. Students with no score in any column are left out (a
blank cell would clear their grade); one with no score in some column gets a blank cell there, and a
warning says so.
"""

from __future__ import annotations

from pathlib import Path

from grader.errors import GradeError
from grader.lms.exporters.common import (
    Gradebook,
    Options,
    Written,
    blank_warning,
    key_cell,
    points_2,
    text_cell,
    write_table,
)

SUFFIX = ".csv"
NEEDS_ROSTER = True
MANY_COLUMNS = True


def roster_columns(options: Options) -> tuple[tuple[str, ...], ...]:
    """The roster columns this format needs beyond ``student`` (each group: one of them).

    Canvas matches ID, else SIS User ID, else SIS Login ID.
    """
    return (("lms_id", "sis_id", "login"),)


# Canvas skips any column whose header contains one of these (canvas-lms#2134).
IGNORED_TITLES = (
    "Current Score",
    "Current Points",
    "Current Grade",
    "Final Score",
    "Final Points",
    "Final Grade",
    "Override Score",
    "Override Grade",
    "Override Status",
)


def export(book: Gradebook, options: Options, out: Path) -> Written:
    """Write the Canvas CSV.

    :raises GradeError: an assignment without its Canvas id, or with a title Canvas would ignore.
    """
    for column in book.columns:
        assignment = column.assignment
        if not assignment.canvas_assignment_id:
            raise GradeError(
                f"course.json: field 'lms.canvas_assignment_id'{book.where(assignment)}: needed "
                "for "
                "canvas (or pass --canvas-assignment-id; it is the number in the assignment's URL)"
            )
        hit = next((t for t in IGNORED_TITLES if t.lower() in assignment.name.lower()), None)
        if hit:
            raise GradeError(
                f"assignment {assignment.name!r}: Canvas ignores columns whose title contains "
                f"{hit!r}"
            )
    assignments = [column.assignment for column in book.columns]
    header = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"] + [
        f"{a.name} ({a.canvas_assignment_id})" for a in assignments
    ]
    lines = (
        [["    Points Possible", "", "", "", ""] + [points_2(a.max_score) for a in assignments]]
        if options.points_possible
        else []
    )
    written, blank = Written(), 0
    for student, p, cells in book.lines():
        if not (p.lms_id or p.sis_id or p.login):
            written.unkeyed.append(
                f"{student}: no lms_id, sis_id or login in the roster (Canvas needs one)"
            )
            continue
        lines.append(
            [
                text_cell(p.name),
                key_cell(p.lms_id, "lms_id", student),
                key_cell(p.sis_id, "sis_id", student),
                key_cell(p.login, "login", student),
                text_cell(p.section),
            ]
            + [points_2(row.score) if row else "" for row in cells]
        )
        blank += cells.count(None)
    write_table(out, header, lines)
    written.warnings.extend(blank_warning(blank, "Canvas"))
    return written
