"""Canvas gradebook CSV import (``gradebook_importer.rb``).

Header ``Student,ID,SIS User ID,SIS Login ID,Section,<Assignment> (<assignment id>)``: Canvas matches the
column by the id in parentheses (else by title, else it creates a new assignment), and each row by ``ID``,
then ``SIS User ID``, then ``SIS Login ID``. A row needs one of them. No "Points Possible" row unless asked.
Students without a score are left out (a blank cell would clear their grade).
"""
from __future__ import annotations

from pathlib import Path

from grader.errors import GradeError
from grader.lms.exporters.common import Assignment, Options, Row, Written, key_cell, points_2, text_cell, write_table

SUFFIX = ".csv"
NEEDS_ROSTER = True
# Canvas skips any column whose header contains one of these (canvas-lms#2134).
IGNORED_TITLES = ("Current Score", "Current Points", "Current Grade", "Final Score", "Final Points", "Final Grade",
                  "Override Score", "Override Grade", "Override Status")


def export(rows: list[Row], assignment: Assignment, options: Options, out: Path) -> Written:
    """Write the Canvas CSV.

    :raises GradeError: no Canvas assignment id, or a title Canvas would ignore.
    """
    if not options.canvas_assignment_id:
        raise GradeError("course.json: field 'lms.canvas_assignment_id': needed for canvas "
                         "(or pass --canvas-assignment-id; it is the number in the assignment's URL)")
    hit = next((t for t in IGNORED_TITLES if t.lower() in assignment.name.lower()), None)
    if hit:
        raise GradeError(f"assignment {assignment.name!r}: Canvas ignores columns whose title contains {hit!r}")
    header = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section",
              f"{assignment.name} ({options.canvas_assignment_id})"]
    lines = [["    Points Possible", "", "", "", "", points_2(assignment.max_score)]] if options.points_possible else []
    written = Written()
    for row in rows:
        p = row.person
        if not (p.lms_id or p.sis_id or p.login):
            written.unkeyed.append(f"{row.student}: no lms_id, sis_id or login in the roster (Canvas needs one)")
            continue
        lines.append([text_cell(p.name), key_cell(p.lms_id, "lms_id", row.student),
                      key_cell(p.sis_id, "sis_id", row.student), key_cell(p.login, "login", row.student),
                      text_cell(p.section), points_2(row.score)])
    write_table(out, header, lines)
    return written
