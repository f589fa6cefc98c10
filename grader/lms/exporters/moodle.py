"""Moodle gradebook CSV import (``grade/import/csv``).

The instructor maps one column to the user key and the others to grade items or feedback. We write the key
(email, username or idnumber, by ``--moodle-key``), the grade, and its feedback (Moodle drops the grades of a
feedback column imported without them). ``.`` decimals work on every site; a row with no key would hand its
grade to the previous row's user, so such rows are left out and reported.
"""
from __future__ import annotations

from pathlib import Path

from grader.errors import GradeError
from grader.lms.exporters.common import (Assignment, Options, Row, Written, feedback, key_cell, points_2, text_cell,
                                         write_table)

SUFFIX = ".csv"
NEEDS_ROSTER = True
KEYS = {"email": ("Email address", "email"), "username": ("Username", "login"), "idnumber": ("ID number", "sis_id")}


def export(rows: list[Row], assignment: Assignment, options: Options, out: Path) -> Written:
    """Write the Moodle CSV.

    :raises GradeError: an unknown ``moodle_key``.
    """
    if options.moodle_key not in KEYS:
        raise GradeError(f"--moodle-key: {options.moodle_key!r} is not one of {', '.join(KEYS)}")
    title, column = KEYS[options.moodle_key]
    written = Written()
    if assignment.max_score > 100:
        written.warnings.append(f"grades above 100 are refused by Moodle unless the site allows unlimited grades "
                                f"(maximum here: {assignment.max_score:g})")
    lines = []
    for row in rows:
        key = getattr(row.person, column)
        if not key:
            written.unkeyed.append(f"{row.student}: no {column} in the roster (the Moodle key)")
            continue
        lines.append([key_cell(key, column, row.student), points_2(row.score),
                      text_cell(feedback(row.doc, row.score))])
    write_table(out, [title, assignment.name, f"Feedback: {assignment.name}"], lines)
    return written
