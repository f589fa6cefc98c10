"""Pure scoring: (course, graded results) -> the score document. No I/O, no student code.

The denominator comes from course.json (autograde) or from the public suites' points (``grade
check``), never from the tests that happened to report.
"""

from __future__ import annotations

import hashlib
import os
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from grader import __version__
from grader.course import late
from grader.course.manifest import Course
from grader.course.overrides import StudentOverrides

if TYPE_CHECKING:  # not imported at run time: `grade export` needs points() without pytest
    from grader.grading.results import Graded


def points(x: float) -> float:
    """Round once, to 6 decimals, so sums like 0.1 + 0.2 never reach a gradebook as
    0.30000000000000004."""
    return round(x + 0.0, 6)


HASHED_BYTES = 8 << 20  # of each file; a larger one is hashed by its first 8 MiB and its size


def submission_sha256(folder: Path) -> str:
    """sha256 over the submission's regular files (relative path, size, content), in sorted
    order."""
    digest = hashlib.sha256()
    for root, dirs, files in sorted(os.walk(folder)):
        dirs.sort()
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        for name in sorted(files):
            path = Path(root) / name
            if path.is_symlink() or not path.is_file():
                continue
            digest.update(
                os.fsencode(path.relative_to(folder)) + b"\0" + str(path.stat().st_size).encode()
            )
            try:
                with open(path, "rb") as f:
                    digest.update(f.read(HASHED_BYTES))
            except OSError:
                digest.update(b"unreadable")
    return digest.hexdigest()


def _text(value: str) -> str:
    """Text safe for a JSON file in UTF-8: a student's lone surrogates become U+FFFD."""
    return value.encode("utf-8", "replace").decode("utf-8")


def score(
    course: Course, graded: Graded, *, hidden: bool, graded_at: datetime | None = None
) -> dict:
    """Build one student's score document (see ``grade schema``).

    :param hidden: True for autograde (maximum from course.json), False for ``grade check`` (public
        points).
    """
    problems, tests = [], []
    for problem in course.problems:
        mine = [r for r in graded.results if r.problem == problem.name]
        if hidden:
            max_score = problem.points
        elif mine:
            max_score = points(sum(r.points for r in mine))
        else:
            continue
        earned = sum(
            points(r.points) for r in mine if r.status == "passed"
        )  # as finish() sums the tests
        problems.append(
            {
                "name": problem.name,
                "score": points(min(earned, max_score)),
                "max_score": points(max_score),
                "tests": [r.name for r in mine],
                "passed": sum(r.status == "passed" for r in mine),
            }
        )
        for r in mine:
            entry = {
                "name": r.name,
                "problem": r.problem,
                "score": points(r.points if r.status == "passed" else 0),
                "max_score": points(r.points),
                "status": r.status,
                "output": _text(r.output),
                "visibility": r.visibility,
            }
            if r.kind:
                entry["kind"] = r.kind
            if r.property:
                entry["property"] = True
            if r.feedback.get("diagnosis"):
                entry["diagnosis"] = r.feedback["diagnosis"]
            tests.append(entry)
    doc = {
        "student": _text(graded.job.student),
        "assignment": course.assignment,
        # The grader's own failure is never the student's grade: flagged, so that no cache keeps it
        # and no
        # export sends it.
        "status": "grader_error" if graded.grader_error else "graded",
        "score": points(sum(p["score"] for p in problems)),
        "max_score": points(sum(p["max_score"] for p in problems)),
        "problems": problems,
        "tests": tests,
        "execution_time": round(graded.seconds, 3),
        "graded_at": (graded_at or datetime.now(timezone.utc)).isoformat(timespec="milliseconds"),
        "grader_version": __version__,
        "submission_sha256": submission_sha256(graded.job.path),
        "course_sha256": course.sha256,
        "sandbox": graded.sandbox,
    }
    if graded.error:
        doc["error"] = _text(graded.error)
    return doc


def finish(
    doc: dict, course: Course, mine: StudentOverrides | None, when: "datetime | str | None"
) -> dict:
    """The score document with the instructor's adjustments and the lateness applied afresh, from
    its tests.

    Each problem's score is first what its tests scored, then ``mine``'s adjustments in the file's
    order (an ``adjust`` keeps the problem within 0 and its points, a ``bonus`` may exceed them;
    ``applied`` is what changed), so ``score`` is the sum of the problems; then the late penalty on
    that sum, against the student's extension if any. Pure and idempotent: ``grade autograde``
    applies it to a new grading and to a kept score file alike, so a changed overrides.csv or
    timestamp.txt re-scores a file without regrading its code.

    :param when: the submission time; ``"missing"`` or ``"unreadable"`` when a ``timestamp.txt``
        should be there (nbgrader) and is not (course.json's ``missing_timestamp`` decides); None
        where the grader reads no time (a folder or a zip: the LMS's own submission time counts).
    """
    doc = {k: v for k, v in doc.items() if k not in ("adjustments", "late", "signature")}
    earned: dict[str, float] = {}
    for test in doc["tests"]:
        earned[test["problem"]] = earned.get(test["problem"], 0) + test["score"]
    problems = [
        {**p, "score": points(min(earned.get(p["name"], 0), p["max_score"]))}
        for p in doc["problems"]
    ]
    by_name = {p["name"]: p for p in problems}
    adjustments = []
    for change in mine.adjustments if mine else ():
        problem = by_name.get(change.problem)
        if problem is None:  # not graded in this document (grade check's public run)
            continue
        before = problem["score"]
        after = max(0.0, before + change.points)
        if change.kind == "adjust":
            after = min(after, max(problem["max_score"], before))
        problem["score"] = points(after)
        adjustments.append(
            {
                "problem": change.problem,
                "kind": change.kind,
                "points": change.points,
                "applied": points(after - before),
                "reason": change.reason,
                "by": change.by,
            }
        )
    doc.update(problems=problems, score=points(sum(p["score"] for p in problems)))
    if adjustments:
        doc["adjustments"] = adjustments
    if course.due is None or when is None:
        return doc
    extension = mine.extension if mine else None
    due = extension.due if extension else course.due
    if isinstance(when, str):
        doc = late.apply_missing(doc, when, due, course.late_policy, course.missing_timestamp)
    else:
        doc = late.apply(doc, when, due, course.late_policy)
    if extension:
        doc["late"]["extension"] = {
            "course_due": course.due.isoformat(timespec="milliseconds"),
            "reason": extension.reason,
            "by": extension.by,
        }
    return doc
