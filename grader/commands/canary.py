"""Whether the course can grade its own reference: the evidence that a failure is the course's.

A course.json within its ranges can still break grading: a suite that raises (every submission a
grader error), a suite that expects a wrong value, a limit too tight for this course (everyone loses
the same points). A failure of one student's is that student's; a failure the reference shares is
the course's. So before a batch replaces a graded score file, ``grade autograde`` grades the
reference as it grades a submission (the hidden suites, the same sandbox and limits) and stops,
writing no score file, when the reference does not score full marks.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from grader import scoring
from grader.course.manifest import Course
from grader.grading import executors
from grader.grading.results import Job

FAULT = "the grader failed, not your code: "  # how a grader error speaks to a student


def failure(course: Course, level: str, work: Path, run_as: str | None = None) -> str | None:
    """How the course fails its own reference, in a few words (``is a grader error too (...)``,
    ``scores 3/4 (test_x failed)``); None when the reference scores full marks, or when the course
    has no reference here (no ``solutions``: nothing to tell the course's fault from a student's).

    :param work: a private folder for the reference's copy (one the workers of ``run_as`` reach).
    """
    if course.solutions is None:
        return None
    copy = work / "reference"
    shutil.copytree(course.solutions, copy, ignore=shutil.ignore_patterns("__pycache__", ".*"))
    docs: list[dict] = []
    try:
        executors.run(
            course,
            [Job("reference", copy)],
            lambda graded: docs.append(scoring.score(course, graded, hidden=True)),
            hidden=True,
            level=level,
            tmp_root=work,
            run_as=run_as,
        )
    finally:
        shutil.rmtree(copy, ignore_errors=True)
    doc = docs[0]
    if doc["status"] == "grader_error":  # here it is the course's, not "not yours"
        return f"is a grader error too ({(doc.get('error') or 'no message').removeprefix(FAULT)})"
    if doc["score"] < doc["max_score"]:
        failed = [t["name"] for t in doc["tests"] if t["status"] != "passed"]
        more = f" and {len(failed) - 3} more" if len(failed) > 3 else ""
        return (
            f"scores {doc['score']:g}/{doc['max_score']:g} ({', '.join(failed[:3])}{more} failed)"
        )
    return None
