"""The record ``grade collect`` writes beside the submissions it collected: when the LMS says each
student handed in, for ``grade autograde``'s late policy.

A folder or zip a student hands in can hold any file the student wrote, a ``timestamp.txt``
included, so the grader reads no submission time inside one (see :mod:`grader.intake.collect`).
``grade collect`` reads the time from the LMS's download (Gradescope's ``submission_metadata.yml``,
Blackboard's attempt names, a git clone's commit) and writes it in one file at the top of ``--out``,
``.grade-collected.json``, where no student's file lands (each student's files go into their own
entry, unpacked with no ``..``): autograde reads it from the top of SUBMISSIONS only. Its name
starts with a dot, so autograde never takes it for a submission::

    {"lms": "gradescope", "download": "/abs/export.zip", "collected_at":
    "2026-05-02T09:00:00.000+00:00",
     "students": {"ada": {"entry": "ada.zip", "submitted_at": "2026-05-01T22:58:10.000+00:00",
                          "notes": ["..."]}},
     "unplaced": ["..."]}

An entry without ``submitted_at`` carries no time (Canvas's and Moodle's downloads have none: the
LMS applies its own late policy); ``"timestamp": "missing"`` marks one whose download should have
had a time and did not (course.json's ``missing_timestamp`` decides, as for nbgrader). Plain JSON,
not signed: it sits in the instructor's folder, where the instructor may correct a time as
nbgrader's ``timestamp.txt`` may be corrected."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from grader.course.late import parse_iso
from grader.errors import GradeError

FILE = ".grade-collected.json"


@dataclass(frozen=True)
class Entry:
    """One student's line of the record: the LMS's submission time (None: none carried),
    ``timestamp`` (``missing`` when the download should have had one), and notes for the score
    file."""

    submitted_at: datetime | None = None
    timestamp: str = ""
    notes: tuple[str, ...] = ()


def read(folder: Path) -> dict[str, Entry]:
    """The entries of ``folder``'s record, by student ({} when ``grade collect`` did not write the
    folder).

    :raises GradeError: one line naming the file and the field, when it is not the record described
    above."""
    path = Path(folder) / FILE
    if not path.is_file():
        return {}
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise GradeError(f"{path}: not readable JSON: {err} (grade collect writes it)") from None
    students = doc.get("students") if isinstance(doc, dict) else None
    if not isinstance(students, dict):
        raise GradeError(f"{path}: field 'students': missing or not an object")
    found = {}
    for student, entry in students.items():
        where = f"{path}: field 'students.{student}"
        if not isinstance(entry, dict):
            raise GradeError(f"{where}': not an object")
        when = entry.get("submitted_at")
        try:
            submitted_at = parse_iso(when) if when is not None else None
        except (TypeError, ValueError) as err:
            raise GradeError(
                f"{where}.submitted_at': not an ISO 8601 time with a zone: {err}"
            ) from None
        flag = entry.get("timestamp", "")
        if flag not in ("", "missing"):
            raise GradeError(f"{where}.timestamp': must be 'missing' or absent, got {flag!r}")
        notes = entry.get("notes", [])
        if not isinstance(notes, list) or not all(isinstance(n, str) for n in notes):
            raise GradeError(f"{where}.notes': not a list of text")
        found[student] = Entry(submitted_at, flag, tuple(notes))
    return found


def dumps(doc: dict) -> str:
    """The record ``doc`` (see the module's docstring) as its file holds it."""
    return json.dumps(doc, indent=1, ensure_ascii=False, sort_keys=True) + "\n"
