"""Gradescope ``results.json``, one per student: ``OUT/<student>/results.json``.

The top-level ``score`` is the student's points (it overrides the tests' sum, so a late penalty
holds); each test has ``name`` (``problem: test``), ``number``, ``score`` and ``max_score`` rounded
to 2 decimals, ``status`` (``passed``/``failed``), ``output`` (a hidden test's shows no inputs or
values) and ``visibility``. ``grade gradescope-zip`` writes the autograder that produces this file
on Gradescope.
"""

from __future__ import annotations

import json
from pathlib import Path

from grader.errors import GradeError
from grader.lms.exporters.common import Gradebook, Options, Written, decimal_2, student_comment
from grader.report import write_atomic

SUFFIX = ""  # a folder
NEEDS_ROSTER = False
MANY_COLUMNS = False  # one assignment's autograder


def roster_columns(options: Options) -> tuple[tuple[str, ...], ...]:
    """The roster columns this format needs beyond ``student`` (each group: one of them).

    Keyed by the student id.
    """
    return ()


def results(
    doc: dict, score: float, *, release_hidden: bool = False, late_by_lms: bool = False
) -> dict:
    """Gradescope's results.json for one score file; its ``output`` is the comment the Canvas push
    sends (:func:`grader.lms.exporters.common.student_comment`: the notes and an error too)."""
    numbers: dict[str, int] = {}
    order = {p["name"]: i for i, p in enumerate(doc["problems"], 1)}
    tests = []
    for test in doc["tests"]:
        numbers[test["problem"]] = numbers.get(test["problem"], 0) + 1
        tests.append(
            {
                "name": f"{test['problem']}: {test['name']}",
                "number": f"{order.get(test['problem'], 0)}.{numbers[test['problem']]}",
                "score": float(decimal_2(test["score"])),
                "max_score": float(decimal_2(test["max_score"])),
                "status": "passed" if test["status"] == "passed" else "failed",
                "output": test["output"],
                "visibility": test["visibility"],
            }
        )
    output = student_comment(doc, score, release_hidden=release_hidden, late_by_lms=late_by_lms)
    return {
        "score": float(decimal_2(score)),
        "execution_time": doc["execution_time"],
        "output": output,
        "tests": tests,
    }


def export(book: Gradebook, options: Options, out: Path) -> Written:
    """Write ``out/<student>/results.json`` for every row.

    :raises GradeError: a student id that is not a plain folder name.
    """
    rows = list(book.columns[0].rows.values())  # the only column
    for row in rows:
        if row.student in (".", "..") or any(c in row.student for c in "/\\\x00"):
            raise GradeError(
                f"score file of {row.student!r}: field 'student': not usable as a folder name"
            )
    for row in rows:
        folder = out / row.student
        folder.mkdir(parents=True, exist_ok=True)
        found = results(
            row.doc,
            row.score,
            late_by_lms=options.late_by_lms,
            release_hidden=book.columns[0].assignment.release_hidden_details,
        )
        write_atomic(
            folder / "results.json",
            json.dumps(found, indent=2, ensure_ascii=False, allow_nan=False) + "\n",
        )
    return Written()
