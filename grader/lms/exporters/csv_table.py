"""A CSV for people (format ``csv``). For one assignment: one row per student, a column per problem,
lateness spelled out, the instructor's notes and the student's feedback (the comment the Canvas push
sends). For several (a gradebook): ``student``, then a column per assignment with each one's
score, empty where the student has none.

UTF-8 with a BOM, so that Excel shows accents; text cells are neutralised against formulas.
"""

from __future__ import annotations

from pathlib import Path

from grader.lms.exporters.common import (
    Gradebook,
    Options,
    Written,
    points_2,
    student_comment,
    text_cell,
    write_table,
)

SUFFIX = ".csv"
NEEDS_ROSTER = False
MANY_COLUMNS = True


def roster_columns(options: Options) -> tuple[tuple[str, ...], ...]:
    """The roster columns this format needs beyond ``student`` (each group: one of them).

    Name and section are shown when there.
    """
    return ()


def export(book: Gradebook, options: Options, out: Path) -> Written:
    """Write the table; without a roster the name and section columns stay empty."""
    if len(book.columns) > 1:
        header = ["student"] + [column.assignment.name for column in book.columns]
        lines = [
            [text_cell(student)] + [points_2(row.score) if row else "" for row in cells]
            for student, _, cells in book.lines()
        ]
        write_table(out, header, lines, excel=True)
        return Written()
    rows = list(book.columns[0].rows.values())
    problems = list(dict.fromkeys(p["name"] for row in rows for p in row.doc["problems"]))
    maxima = {p["name"]: p["max_score"] for row in rows for p in row.doc["problems"]}
    header = (
        ["student", "name", "section"]
        + [f"{n} ({maxima[n]:g})" for n in problems]
        + [
            "raw_score",
            "late_penalty",
            "score",
            "max_score",
            "days_late",
            "submitted_at",
            "graded_at",
            "notes",
            "feedback",
        ]
    )
    hidden = book.columns[0].assignment.release_hidden_details
    lines = []
    for row in rows:
        doc, late = row.doc, row.doc.get("late", {})
        by_name = {p["name"]: p["score"] for p in doc["problems"]}
        penalty = 0.0 if options.late_by_lms else late.get("penalty", 0.0)
        notes = "; ".join(
            ([doc["error"]] if doc.get("error") else [])
            + _overrides(doc)
            + doc.get("submission_notes", [])
        )
        lines.append(
            [
                text_cell(row.student),
                text_cell(row.person.name if row.person else ""),
                text_cell(row.person.section if row.person else ""),
            ]
            + [points_2(by_name[n]) if n in by_name else "" for n in problems]
            + [
                points_2(late.get("raw_score", doc["score"])),
                points_2(penalty),
                points_2(row.score),
                points_2(doc["max_score"]),
                str(late.get("days_late", "")),
                late.get("submitted_at", ""),
                doc["graded_at"],
                text_cell(notes),
                # what the student is told (the Canvas push's comment): the diagnoses
                text_cell(
                    student_comment(
                        doc, row.score, release_hidden=hidden, late_by_lms=options.late_by_lms
                    )
                ),
            ]
        )
    write_table(out, header, lines, excel=True)
    return Written()


def _overrides(doc: dict) -> list[str]:
    """The notes column's account of the instructor's changes and of a missing submission time."""
    late = doc.get("late", {})
    notes = []
    for a in doc.get("adjustments", []):
        asked = "" if a["applied"] == a["points"] else f", asked {a['points']:+g}"
        notes.append(
            f"{a['problem']} {a['applied']:+g} ({a['kind']}{asked}): {a['reason']} [{a['by']}]"
        )
    if late.get("extension"):
        ext = late["extension"]
        notes.append(
            f"extension to {late['due']} (course due {ext['course_due']}): {ext['reason']} "
            f"[{ext['by']}]"
        )
    if late.get("timestamp"):
        notes.append(f"timestamp.txt {late['timestamp']}: counted as {late['counted_as']}")
    return notes
