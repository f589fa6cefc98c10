"""``grade export``: read and validate the score files, match them with the roster, hand rows to an exporter.

Every score file is checked against the schema before anything is written; the exporter then writes its
file atomically, so a bad input costs nothing already written. Students without a score file, score files
without a roster row, and rows the format cannot key (no LMS id) are all reported, never dropped silently.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .errors import GradeError
from .exporters import EXPORTERS
from .exporters.common import Assignment, Options, Row, UnsafeKey
from .report import validate
from .roster import Person
from .roster import load as load_roster


@dataclass(frozen=True)
class Result:
    """What ``grade export`` wrote and what it could not: ``missing`` makes the exit status 1."""

    out: Path
    rows: int
    missing: list[str]
    warnings: list[str]


def load_scores(folder: Path) -> list[dict]:
    """Every ``*.json`` score file in ``folder``, each checked against the schema.

    :raises GradeError: one line naming the file and the field; or two files for one student.
    """
    import json

    folder = Path(folder)
    if not folder.is_dir():
        raise GradeError(f"{folder}: scores folder not found")
    docs, where = [], {}
    for path in sorted(folder.glob("*.json")):
        if path.name.startswith("."):
            continue
        try:
            doc = json.loads(path.read_text(encoding="utf-8-sig"))
        except (OSError, ValueError) as err:
            raise GradeError(f"{path}: not valid JSON: {err}") from None
        validate(doc, str(path))
        if doc["student"] in where:
            raise GradeError(f"{path}: field 'student': {doc['student']!r} also has {where[doc['student']].name}")
        where[doc["student"]] = path
        docs.append(doc)
    if not docs:
        raise GradeError(f"{folder}: no score files (*.json) in it")
    names = {d["assignment"] for d in docs}
    if len(names) > 1:
        raise GradeError(f"{folder}: field 'assignment': the score files mix {', '.join(sorted(names))}")
    return docs


def exported_score(doc: dict, late_by_lms: bool) -> float:
    """The points to send: the score, or with ``late_by_lms`` the score before the grader's late penalty."""
    return doc["late"]["raw_score"] if late_by_lms and "late" in doc else doc["score"]


def match(docs: list[dict], roster: dict[str, Person] | None, late_by_lms: bool) -> tuple[list[Row], list[str]]:
    """Rows in roster order (or by student id without a roster), and one line per student left out."""
    by_student = {d["student"]: d for d in docs}
    if roster is None:
        return [Row(s, None, d, exported_score(d, late_by_lms)) for s, d in sorted(by_student.items())], []
    rows = [Row(s, p, by_student[s], exported_score(by_student[s], late_by_lms))
            for s, p in roster.items() if s in by_student]
    missing = [f"{s}: in the roster, no score file" for s in roster if s not in by_student]
    missing += [f"{s}: has a score file, not in the roster" for s in sorted(by_student) if s not in roster]
    return rows, missing


def export(scores: Path, fmt: str, out: Path | None, roster_path: Path | None, options: Options) -> Result:
    """Write ``scores`` in format ``fmt`` to ``out`` (default ``<assignment>-<fmt><suffix>``).

    :raises GradeError: unknown format, a bad score file or roster, or a field the format needs is missing.
    """
    exporter = EXPORTERS.get(fmt)
    if exporter is None:
        raise GradeError(f"unknown format {fmt!r} (known: {', '.join(sorted(EXPORTERS))})")
    if roster_path is None and exporter.NEEDS_ROSTER:
        raise GradeError(f"--roster is needed for {fmt}: it maps student ids to the LMS's user ids")
    docs = load_scores(scores)
    roster = load_roster(roster_path) if roster_path else None
    rows, missing = match(docs, roster, options.late_by_lms)
    assignment = Assignment(docs[0]["assignment"], max(d["max_score"] for d in docs))
    out = Path(out) if out else Path(f"{assignment.name}-{fmt}{exporter.SUFFIX}")
    (out if not exporter.SUFFIX else out.parent).mkdir(parents=True, exist_ok=True)   # no suffix: a folder
    try:
        written = exporter.export(rows, assignment, options, out)
    except UnsafeKey as err:
        raise GradeError(f"{roster_path}: {err}") from None
    return Result(out, len(rows) - len(written.unkeyed), missing + written.unkeyed, written.warnings)
