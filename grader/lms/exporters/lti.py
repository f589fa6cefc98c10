"""LTI 1.3 Assignment and Grade Services score objects, one per line (JSON Lines), for a tool to
POST.

Each line is an ``application/vnd.ims.lis.v1.score+json`` object for ``{lineitem}/scores``:
``userId`` (the roster's ``lms_id``), ``scoreGiven`` and ``scoreMaximum`` in points,
``activityProgress: Completed``, ``gradingProgress: FullyGraded``, the export's ``timestamp`` (ISO
8601, milliseconds, UTC), ``comment`` only when there is one, and ``submission.submittedAt`` when
timestamp.txt gave it. Every object is validated against ``lti_score.schema.json`` (written from the
AGS 2.0 spec, section 3.4) before the file is written.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from functools import lru_cache
from pathlib import Path

from grader.errors import GradeError
from grader.lms.exporters.common import Gradebook, Options, Row, Written, student_comment
from grader.report import write_atomic

SUFFIX = ".jsonl"
NEEDS_ROSTER = True
MANY_COLUMNS = False  # one line item per file
SCHEMA_PATH = Path(__file__).with_name("lti_score.schema.json")
MEDIA_TYPE = "application/vnd.ims.lis.v1.score+json"


def roster_columns(options: Options) -> tuple[tuple[str, ...], ...]:
    """The roster columns this format needs beyond ``student`` (each group: one of them).

    The LTI userId.
    """
    return (("lms_id",),)


@lru_cache(maxsize=1)
def validator():
    """The JSON Schema validator of one score object."""
    from grader.report import jsonschema_module

    return jsonschema_module().Draft202012Validator(
        json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    )


def score_object(
    row: Row, timestamp: str, *, release_hidden: bool = False, late_by_lms: bool = False
) -> dict:
    """The AGS score object for one student (without validation); its comment is the one the Canvas
    push sends (:func:`grader.lms.exporters.common.student_comment`)."""
    doc = row.doc
    obj = {
        "userId": row.person.lms_id,
        "scoreGiven": round(row.score, 6),
        "scoreMaximum": doc["max_score"],
        "activityProgress": "Completed",
        "gradingProgress": "FullyGraded",
        "timestamp": timestamp,
    }
    comment = student_comment(
        doc, row.score, release_hidden=release_hidden, late_by_lms=late_by_lms
    ).strip()
    if comment:
        obj["comment"] = comment
    if "submitted_at" in doc.get("late", {}):
        obj["submission"] = {"submittedAt": doc["late"]["submitted_at"]}
    return obj


def score_objects(
    rows: list[Row], now: datetime, *, release_hidden: bool = False, late_by_lms: bool = False
) -> tuple[list[tuple[str, dict]], Written]:
    """Each keyed row's validated score object, with its student, stamped ``now`` (what ``grade
    export`` writes and ``grade push lti`` posts); the rows without an ``lms_id`` are in
    ``Written.unkeyed``.

    :raises GradeError: an object breaks the schema (naming the student and the field).
    """
    timestamp = now.astimezone(timezone.utc).isoformat(timespec="milliseconds")
    written = Written()
    objects = []
    for row in rows:
        if not row.person.lms_id:
            written.unkeyed.append(f"{row.student}: no lms_id in the roster (the LTI userId)")
            continue
        obj = score_object(row, timestamp, release_hidden=release_hidden, late_by_lms=late_by_lms)
        error = next(iter(validator().iter_errors(obj)), None)
        if error is not None:
            field = ".".join(str(p) for p in error.path) or "(top level)"
            raise GradeError(f"LTI score of {row.student!r}: field {field!r}: {error.message}")
        objects.append((row.student, obj))
    return objects, written


def export(book: Gradebook, options: Options, out: Path) -> Written:
    """Write one validated score object per line.

    :raises GradeError: an object breaks the schema (naming the student and the field).
    """
    column = book.columns[0]  # the only column
    objects, written = score_objects(
        list(column.rows.values()),
        options.now,
        late_by_lms=options.late_by_lms,
        release_hidden=column.assignment.release_hidden_details,
    )
    write_atomic(
        out,
        "".join(json.dumps(obj, ensure_ascii=False, allow_nan=False) + "\n" for _, obj in objects),
    )
    return written
