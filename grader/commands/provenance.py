"""Is a score file's submission still what it graded? What refuses a replayed score file.

Each score file holds, signed, the sha256 of the submission it graded (as collected:
:func:`grader.scoring.submission_sha256`). An earlier attempt's signed file put back into --out
still verifies; what betrays it is that the submission handed in now hashes otherwise. So
``grade autograde`` records in --out where each student's submission was handed in (:data:`RECORD`:
the path, and whether it is an nbgrader folder; signed with the course's key; an entry a student,
updated by every run, so that a folder graded from several places keeps each), and ``grade
export``, ``grade push`` and ``grade report`` collect each submission there again, exactly as
autograde does, and refuse a file whose hash differs (:func:`grader.commands.export.refusal`). The
autograde cache regrades such a file anyway.

Not checked: a submission no longer at its path (moved, deleted: said in one line), and a score
folder without a record (written before it existed, or by hand). A record whose signature fails
stops the command: someone edited it.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from grader.course.manifest import Course
from grader.errors import GradeError
from grader.grading import signature
from grader.report import write_atomic

RECORD = ".grade-submissions"  # not *.json: what globs the score files never takes it


def record(
    out_dir: Path, key: bytes, assignment: str, handed_in: dict[str, tuple[str, bool]]
) -> None:
    """Record where each of these students' submissions was handed in (``handed_in``: student ->
    (path, nbgrader)), keeping the other students' entries. Written atomically, signed."""
    try:
        entries = read(out_dir, key, assignment)
    except GradeError:  # edited: this run writes it afresh
        entries = {}
    entries.update(
        {
            student: {"path": path, "nbgrader": nbgrader}
            for student, (path, nbgrader) in handed_in.items()
        }
    )
    doc = signature.sign({"assignment": assignment, "students": entries}, key)
    write_atomic(out_dir / RECORD, json.dumps(doc, indent=1, sort_keys=True, ensure_ascii=False))


def read(folder: Path, key: bytes, assignment: str) -> dict[str, dict]:
    """The entries of ``folder``'s record ({} without one, or one of another assignment).

    :raises GradeError: one line naming the record: not JSON, or its signature fails (edited).
    """
    path = Path(folder) / RECORD
    if not path.is_file():
        return {}
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise GradeError(
            f"{path}: not readable: {err}; rerun grade autograde, which writes it"
        ) from None
    if not (
        isinstance(doc, dict)
        and isinstance(doc.get("students"), dict)
        and signature.verify(doc, key)
    ):
        raise GradeError(
            f"{path}: its signature does not match its content (edited?): rerun grade "
            "autograde, which writes it afresh"
        )
    return doc["students"] if doc.get("assignment") == assignment else {}


@dataclass(frozen=True)
class Current:
    """The score files' submissions now: student -> (sha256, path) for those still there; the paths
    that are gone (not checked)."""

    found: dict[str, tuple[str, str]] = field(default_factory=dict)
    gone: tuple[str, ...] = ()

    def warning(self) -> str | None:
        """One line about the submissions not checked, or None."""
        if not self.gone:
            return None
        more = f" and {len(self.gone) - 1} more" if len(self.gone) > 1 else ""
        return (
            f"{self.gone[0]}{more}: no longer there, so the score files graded from there are "
            "not checked against their submissions (an earlier attempt's would go through)"
        )


def current(course: Course, key: bytes, folder: Path | None, docs: Iterable[dict]) -> Current:
    """Collect the submission of each graded score file of ``folder`` again where the record says it
    was handed in, as ``grade autograde`` did, and hash it.

    :raises GradeError: the record is edited (see :func:`read`).
    """
    entries = read(folder, key, course.assignment) if folder is not None else {}
    wanted = [d for d in docs if d["status"] == "graded" and d["student"] in entries]
    if not wanted:
        return Current()
    from grader import scoring
    from grader.intake import collect

    found: dict[str, tuple[str, str]] = {}
    gone: list[str] = []
    with tempfile.TemporaryDirectory(prefix="grade-provenance-") as work:
        for i, doc in enumerate(wanted):
            entry = entries[doc["student"]]
            path = Path(str(entry.get("path", "")))
            if not path.is_absolute() or not path.exists():
                gone.append(str(path))
                continue
            notebook = f"{course.assignment}.ipynb" if entry.get("nbgrader") else None
            again = collect.one(
                course, doc["student"], path, Path(work) / str(i), notebook=notebook
            )
            found[doc["student"]] = (scoring.submission_sha256(again.folder), str(path))
    return Current(found, tuple(gone))
