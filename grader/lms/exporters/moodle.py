"""Moodle gradebook CSV import (``grade/import/csv``).

The instructor maps one column to the user key and the others to grade items or feedback. We write
the key (email, username or idnumber, by ``--moodle-key``), then for each assignment its grade and
its feedback (Moodle drops the grades of a feedback column imported without them). ``.`` decimals
work on every site; a row with no key would hand its grades to the previous row's user, so such rows
are left out and reported. A student with no score in some assignment gets blank cells there (Moodle
clears that grade: a warning says so).
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
    student_comment,
    text_cell,
    write_table,
)

SUFFIX = ".csv"
NEEDS_ROSTER = True
MANY_COLUMNS = True
KEYS = {
    "email": ("Email address", "email"),
    "username": ("Username", "login"),
    "idnumber": ("ID number", "sis_id"),
}


def roster_columns(options: Options) -> tuple[tuple[str, ...], ...]:
    """The roster columns this format needs: the one ``--moodle-key`` names (an unknown key: export
    says so)."""
    return ((KEYS[options.moodle_key][1],),) if options.moodle_key in KEYS else ()


def export(book: Gradebook, options: Options, out: Path) -> Written:
    """Write the Moodle CSV.

    :raises GradeError: an unknown ``moodle_key``.
    """
    if options.moodle_key not in KEYS:
        raise GradeError(f"--moodle-key: {options.moodle_key!r} is not one of {', '.join(KEYS)}")
    title, field = KEYS[options.moodle_key]
    written, blank = Written(), 0
    header = [title]
    for column in book.columns:
        assignment = column.assignment
        header += [assignment.name, f"Feedback: {assignment.name}"]
        if assignment.max_score > 100:
            written.warnings.append(
                f"grades above 100 are refused by Moodle unless the site allows unlimited grades "
                f"(maximum{book.where(assignment)} here: {assignment.max_score:g})"
            )
    lines = []
    for student, person, cells in book.lines():
        key = getattr(person, field)
        if not key:
            written.unkeyed.append(f"{student}: no {field} in the roster (the Moodle key)")
            continue
        line = [key_cell(key, field, student)]
        for column, row in zip(book.columns, cells):
            # the comment the Canvas push sends: diagnoses, failed tests, adjustments, lateness
            hidden = column.assignment.release_hidden_details
            comment = (
                student_comment(
                    row.doc, row.score, late_by_lms=options.late_by_lms, release_hidden=hidden
                )
                if row
                else ""
            )
            line += [points_2(row.score), text_cell(comment)] if row else ["", ""]
        lines.append(line)
        blank += cells.count(None)
    write_table(out, header, lines)
    written.warnings.extend(blank_warning(blank, "Moodle"))
    return written
