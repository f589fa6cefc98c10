"""A class to push, for the issue 29 push tests: a course, each student's signed score file (a
failed test with a diagnosis, as the suites write it), their feedback page beside it (a small
one with the line ``grade autograde --html``'s page ends with: "Graded <graded_at> by grader
..."; not the real renderer, which other work changes), a roster with an LMS id each; and
``push.main`` with quick, recorded waits."""

from __future__ import annotations

import csv
import re
from pathlib import Path

from test_export import ROSTER, score_doc, write_course, write_scores

from grader.commands import push
from grader.course.manifest import CourseFile
from grader.lms.push.common import Backoff

TOKEN = "s3cret-canvas-token-issue29-4b1a"
CLIENT_ID = "10000000000077"
POINTS = {"layernorm": 20, "gelu": 15, "attention": 25, "block": 10.125, "params": 15}  # 85.125
DIAGNOSIS = (
    "diagnosis: this matches the post-LN block (LayerNorm after the residual add): "
    "normalise the sublayer's input instead"
)
STATUS = re.compile(r"^(posted|unchanged|kept|failed|not tried): (\S+): (.*)$", re.M)


def students(n: int) -> dict[str, str]:
    """``n`` students, s01 ... with Canvas user ids 301 ..."""
    return {f"s{i:02d}": str(300 + i) for i in range(1, n + 1)}


def page_of(doc: dict) -> str:
    """A feedback page of ``doc``, as far as the push reads one."""
    problems = "".join(
        f"<li>{p['name']} {p['score']:g}/{p['max_score']:g}</li>" for p in doc["problems"]
    )
    return (
        f"<!DOCTYPE html><html><head><title>{doc['student']}: {doc['assignment']}</title>"
        f'</head><body><ul>{problems}</ul><p class="note">Graded {doc["graded_at"]} by '
        f"grader {doc['grader_version']} (sandbox: {doc['sandbox']}).</p></body></html>\n"
    )


def doc_of(student: str, points: dict, sha256: str) -> dict:
    doc = score_doc(student, points, sha256)
    for test in doc["tests"]:
        if test["status"] == "failed":
            test["output"] += "\n" + DIAGNOSIS
    return doc


def write_class(
    folder: Path, users: dict[str, str], points: dict | None = None, pages: bool = True
) -> Path:
    """The course in ``folder``, a score file (and page) per student of ``users``, the roster."""
    course = write_course(folder, lms={"canvas_assignment_id": "48213"})
    (folder / "scores").mkdir(exist_ok=True)
    docs = {s: doc_of(s, (points or {}).get(s, POINTS), course.sha256) for s in users}
    write_scores(folder, docs)
    if pages:
        for s, doc in docs.items():
            (folder / "scores" / f"{s}.html").write_text(page_of(doc), encoding="utf-8")
    with open(folder / "roster.csv", "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(
            [ROSTER[0]] + [(s, u, "", s, f"{s}@x.edu", s.upper(), "A") for s, u in users.items()]
        )
    return folder


def regrade(folder: Path, student: str, points: dict) -> dict:
    """``student`` graded again with ``points`` (a new score file and page, signed)."""
    from grader.course.manifest import load as load_course

    course = load_course(folder / "course.json")
    doc = doc_of(student, points, course.sha256)
    doc["graded_at"] = "2026-05-04T09:30:00.000+00:00"
    write_scores(folder, {student: doc})
    (folder / "scores" / f"{student}.html").write_text(page_of(doc), encoding="utf-8")
    return doc


def run(
    folder: Path, lms: str, env: dict, *, yes: bool = True, waits: list | None = None, **kwargs
) -> int:
    """``grade push`` on ``folder``'s class; ``waits`` records each wait instead of sleeping."""
    waits = [] if waits is None else waits
    kwargs.setdefault("backoff", Backoff(retries=2, first=1.0, sleep=waits.append))
    return push.main(
        lms=lms,
        scores_dir=folder / "scores",
        roster=folder / "roster.csv",
        course_path=CourseFile(folder / "course.json", None),
        yes=yes,
        config=None,
        env=env,
        **kwargs,
    )


def canvas_env(server, folder: Path) -> dict:
    return {
        "GRADE_CANVAS_URL": server.url,
        "GRADE_CANVAS_TOKEN": TOKEN,
        "XDG_CONFIG_HOME": str(folder.parent / "xdg"),
    }


def lti_env(platform, key_file: Path, folder: Path) -> dict:
    return {
        "GRADE_LTI_CLIENT_ID": CLIENT_ID,
        "GRADE_LTI_TOKEN_URL": platform.token_url,
        "GRADE_LTI_KEY_FILE": str(key_file),
        "XDG_CONFIG_HOME": str(folder.parent / "xdg"),
    }


def report(text: str) -> dict[str, tuple[str, str]]:
    """Each student's (status, detail) in what a push printed; each listed at most once."""
    found: dict[str, tuple[str, str]] = {}
    for status, student, detail in STATUS.findall(text):
        assert student not in found, f"{student} listed twice:\n{text}"
        found[student] = (status, detail)
    return found
