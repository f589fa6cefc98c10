"""Blackboard Learn Grade Center upload ("Work Offline"), tab-delimited.

Rows are keyed by ``Username``; then a column per assignment, whose header carries its Column ID
after ``|``, which is how Blackboard matches it (without it a new text column worth 0 points is
created). Text is quoted, numbers are not, as in a Blackboard download. Only the key and the grades
are written: any other column would be created. A student with no score in some assignment gets an
empty cell there.
"""

from __future__ import annotations

import csv
from pathlib import Path

from grader.errors import GradeError
from grader.lms.exporters.common import (
    Gradebook,
    Options,
    Written,
    decimal_2,
    key_cell,
    write_table,
)

SUFFIX = ".xls"  # tab-delimited text, as Blackboard's help names it
NEEDS_ROSTER = True
MANY_COLUMNS = True


def roster_columns(options: Options) -> tuple[tuple[str, ...], ...]:
    """The roster columns this format needs beyond ``student`` (each group: one of them).

    The Blackboard Username.
    """
    return (("login",),)


def export(book: Gradebook, options: Options, out: Path) -> Written:
    """Write the Blackboard upload file.

    :raises GradeError: an assignment without its Column ID, or with a name that would break the
        header.
    """
    header = ["Username"]
    for column in book.columns:
        assignment = column.assignment
        if not assignment.blackboard_column_id:
            raise GradeError(
                f"course.json: field 'lms.blackboard_column_id'{book.where(assignment)}: needed "
                "for "
                "blackboard (or pass --blackboard-column-id; it is after '|' in a downloaded "
                "file's "
                "header)"
            )
        if any(c in assignment.name for c in "[]|\t\r\n"):
            raise GradeError(
                f"assignment {assignment.name!r}: Blackboard headers cannot hold [ ] | or tabs"
            )
        header.append(
            f"{assignment.name} [Total Pts: {assignment.max_score:g} Score] "
            f"|{assignment.blackboard_column_id}"
        )
    written = Written()
    lines = []
    for student, person, cells in book.lines():
        if not person.login:
            written.unkeyed.append(f"{student}: no login in the roster (the Blackboard Username)")
            continue
        lines.append(
            [key_cell(person.login, "login", student)]
            + [decimal_2(row.score) if row else "" for row in cells]
        )
    write_table(out, header, lines, delimiter="\t", quoting=csv.QUOTE_NONNUMERIC)
    return written
