"""Blackboard Learn Grade Center upload ("Work Offline"), tab-delimited.

Rows are keyed by ``Username``; the grade column's header carries its Column ID after ``|``, which is how
Blackboard matches it (without it a new text column worth 0 points is created). Text is quoted, numbers are
not, as in a Blackboard download. Only the key and the grade are written: any other column would be created.
"""
from __future__ import annotations

import csv
from pathlib import Path

from grader.errors import GradeError
from grader.lms.exporters.common import Assignment, Options, Row, Written, decimal_2, key_cell, write_table

SUFFIX = ".txt"
NEEDS_ROSTER = True


def export(rows: list[Row], assignment: Assignment, options: Options, out: Path) -> Written:
    """Write the Blackboard upload file.

    :raises GradeError: no Column ID, or an assignment name that would break the header.
    """
    column = options.blackboard_column_id
    if not column:
        raise GradeError("course.json: field 'lms.blackboard_column_id': needed for blackboard "
                         "(or pass --blackboard-column-id; it is after '|' in a downloaded file's header)")
    if any(c in assignment.name for c in "[]|\t\r\n"):
        raise GradeError(f"assignment {assignment.name!r}: Blackboard headers cannot hold [ ] | or tabs")
    header = ["Username", f"{assignment.name} [Total Pts: {assignment.max_score:g} Score] |{column}"]
    written = Written()
    lines = []
    for row in rows:
        if not row.person.login:
            written.unkeyed.append(f"{row.student}: no login in the roster (the Blackboard Username)")
            continue
        lines.append([key_cell(row.person.login, "login", row.student), decimal_2(row.score)])
    write_table(out, header, lines, delimiter="\t", quoting=csv.QUOTE_NONNUMERIC)
    return written
