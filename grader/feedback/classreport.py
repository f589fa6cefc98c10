"""The class report's numbers (``grade report``): from one assignment's checked score files to plain
data that the terminal and the HTML page both show.

Only graded score files count: a grader error is no grade (it is listed apart, never a 0 in a
histogram or a rate), and files ``grade export`` would refuse (unsigned, edited, stale) are listed
with the reason and left out. Every share is of the students counted (``Assignment.counted``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

from grader.feedback.mismatch import split_diagnosis


@dataclass(frozen=True)
class TestRate:
    """One test's failures: ``failed`` of the ``taken`` counted students who have the test."""

    problem: str
    name: str
    public: bool
    failed: int
    taken: int

    @property
    def rate(self) -> float:
        return self.failed / self.taken if self.taken else 0.0


@dataclass(frozen=True)
class Diagnosed:
    """A known mistake (its catalogue id and the sentence students were shown) and the students who
    made it."""

    mistake: str
    message: str
    students: tuple[str, ...]
    share: float


@dataclass(frozen=True)
class Problem:
    """A problem's scores (one per counted student) and the points the class lost on it."""

    name: str
    max_score: float
    scores: tuple[float, ...]
    lost: float  # points lost by all counted students together
    lost_share: float  # of all points the class lost, on every problem

    @property
    def mean(self) -> float:
        return sum(self.scores) / len(self.scores) if self.scores else 0.0


@dataclass(frozen=True)
class Late:
    """A late submission, one with an extension, or one with no readable submission time (``flag``:
    what was missing, and what the course counts it as)."""

    student: str
    days_late: int
    penalty: float
    raw_score: float
    score: float
    extension: str = ""
    flag: str = ""


@dataclass(frozen=True)
class Adjusted:
    """An instructor's change to a problem's score (the overrides file), as the score file records
    it."""

    student: str
    problem: str
    applied: float
    reason: str
    by: str


@dataclass(frozen=True)
class Student:
    """A counted student's row: total, each problem's points (by name) and the mistakes
    diagnosed."""

    student: str
    score: float
    problems: Mapping[str, float]
    mistakes: tuple[str, ...]
    blank: bool = False
    late: bool = False
    zeros: tuple[tuple[str, str], ...] = ()  # (problem, why it scored 0): :func:`zero_reason`


@dataclass(frozen=True)
class Assignment:
    """One assignment's class report."""

    name: str
    max_score: float
    students: tuple[Student, ...]  # the counted ones: graded and trusted, by student id
    problems: tuple[Problem, ...]
    tests: tuple[TestRate, ...]  # most failed first
    diagnoses: tuple[Diagnosed, ...]  # most students first
    grader_errors: tuple[
        tuple[str, str], ...
    ]  # (student, the grader's message): no grade, not counted
    refused: tuple[
        tuple[str, str], ...
    ]  # (student, "file: why"): left out, as grade export leaves them out
    blank: tuple[str, ...]
    missing: tuple[str, ...]  # in the roster (or another assignment's folder), no score file here
    late: tuple[Late, ...]
    adjusted: tuple[Adjusted, ...] = ()
    similar: object | None = None  # grader.feedback.similarity.Similarity (if asked)
    pages: Mapping[str, str] = field(default_factory=dict)  # student -> a link to their page

    @property
    def counted(self) -> int:
        return len(self.students)

    @property
    def totals(self) -> tuple[float, ...]:
        return tuple(s.score for s in self.students)

    @property
    def mean(self) -> float:
        return sum(self.totals) / self.counted if self.counted else 0.0

    @property
    def median(self) -> float:
        ordered = sorted(self.totals)
        n = len(ordered)
        return (
            0.0
            if not n
            else ordered[n // 2]
            if n % 2
            else (ordered[n // 2 - 1] + ordered[n // 2]) / 2
        )


def build(
    name: str,
    docs: Sequence[dict],
    refused: Sequence[tuple[str, str]] = (),
    expected: Iterable[str] = (),
) -> Assignment:
    """The report of one assignment.

    :param docs: its schema-valid score files that were not refused (grader errors included: listed
        apart).
    :param refused: (student, "file: why") per refused file (see
        ``grader.commands.export.refusal``).
    :param expected: every student who should have a score file here (the roster, or the other
        assignments').
    """
    errors = tuple(
        sorted(
            (d["student"], d.get("error") or "no message")
            for d in docs
            if d["status"] == "grader_error"
        )
    )
    graded = sorted((d for d in docs if d["status"] != "grader_error"), key=lambda d: d["student"])
    names = [(p["name"], p["max_score"]) for p in graded[0]["problems"]] if graded else []
    if not graded and docs:
        names = [(p["name"], p["max_score"]) for p in docs[0]["problems"]]
    scores = {n: [_problem_score(d, n) for d in graded] for n, _ in names}
    lost = {n: sum(m - s for s in scores[n]) for n, m in names}
    all_lost = sum(lost.values())
    problems = tuple(
        Problem(n, m, tuple(scores[n]), lost[n], lost[n] / all_lost if all_lost else 0.0)
        for n, m in names
    )
    seen = {d["student"] for d in docs} | {student for student, _ in refused}
    return Assignment(
        name=name,
        max_score=max((d["max_score"] for d in docs), default=0.0),
        students=tuple(_student(d) for d in graded),
        problems=problems,
        tests=_rates(graded),
        diagnoses=_diagnoses(graded),
        grader_errors=errors,
        refused=tuple(refused),
        blank=tuple(d["student"] for d in graded if d.get("blank")),
        missing=tuple(sorted(set(expected) - seen)),
        late=tuple(_late(d) for d in graded if _is_late(d)),
        adjusted=tuple(
            Adjusted(d["student"], a["problem"], a["applied"], a["reason"], a["by"])
            for d in graded
            for a in d.get("adjustments", ())
        ),
    )


def _is_late(doc: dict) -> bool:
    """Late, extended, or with no submission time to tell (``late.timestamp``)."""
    late = doc.get("late") or {}
    return bool(late.get("days_late") or late.get("extension") or late.get("timestamp"))


def _late(doc: dict) -> Late:
    late = doc["late"]
    flag = (
        f"no timestamp ({late['timestamp']}), counted as {late.get('counted_as', '?')}"
        if late.get("timestamp")
        else ""
    )
    return Late(
        doc["student"],
        late.get("days_late", 0),
        late["penalty"],
        late["raw_score"],
        doc["score"],
        str(late.get("extension") or ""),
        flag,
    )


def _problem_score(doc: dict, name: str) -> float:
    return next((p["score"] for p in doc["problems"] if p["name"] == name), 0.0)


def _student(doc: dict) -> Student:
    mistakes = sorted(
        {t["diagnosis"] for t in doc["tests"] if t.get("diagnosis") and t["status"] != "passed"}
    )
    zeros = tuple(
        (p["name"], zero_reason(doc, p["name"]))
        for p in doc["problems"]
        if p["score"] == 0 and p["max_score"] > 0
    )
    return Student(
        doc["student"],
        doc["score"],
        {p["name"]: p["score"] for p in doc["problems"]},
        tuple(mistakes),
        bool(doc.get("blank")),
        bool((doc.get("late") or {}).get("days_late")),
        zeros,
    )


# What a zero's first failed test says, and the kind of zero it is (checked in order).
ZERO_KINDS = (
    (
        "import error",
        re.compile(
            r"^importing \S+ failed|could not be imported|"
            r"ModuleNotFoundError|SyntaxError|IndentationError"
        ),
    ),
    ("not implemented", re.compile(r"not implemented|NotImplementedError")),
    (
        "missing function",
        re.compile(
            r"no code defines|has no (?:function|attribute)|"
            r"is not defined|not found in|missing"
        ),
    ),
    ("timed out", re.compile(r"timed out|budget|wall-clock")),
    ("crashed", re.compile(r"crashed|killed|memory")),
)


def zero_reason(doc: dict, problem: str) -> str:
    """Why ``problem`` scored 0 for this student, in a few words and the grader's first line: a
    blank submission, an error that stopped grading, else the kind of its first failed test's
    message (an import error, the stub not implemented, a missing function, a time-out, a crash)
    and that message's first line; else "every test failed"."""
    if doc.get("blank"):
        return "blank: every exercise function missing or the released stub"
    if doc.get("error"):
        return f"not graded: {doc['error'][:160]}"
    failed = [t for t in doc["tests"] if t["problem"] == problem and t["status"] != "passed"]
    first = next((t["output"].strip().splitlines()[0] for t in failed if t["output"].strip()), "")
    for kind, pattern in ZERO_KINDS:
        if first and pattern.search(first):
            return f"{kind}: {first[:160]}"
    if any(t["status"] == "error" for t in failed) and first:
        return f"error: {first[:160]}"
    return "every test failed" + (f": {first[:160]}" if first else "")


def _rates(graded: Sequence[dict]) -> tuple[TestRate, ...]:
    taken: dict[tuple[str, str], list[int]] = {}
    public: dict[tuple[str, str], bool] = {}
    for doc in graded:
        for t in doc["tests"]:
            key = (t["problem"], t["name"])
            taken.setdefault(key, []).append(t["status"] != "passed")
            public[key] = t["visibility"] == "visible"
    rates = [TestRate(p, n, public[(p, n)], sum(v), len(v)) for (p, n), v in taken.items()]
    return tuple(sorted(rates, key=lambda r: (-r.rate, r.problem, r.name)))


def _diagnoses(graded: Sequence[dict]) -> tuple[Diagnosed, ...]:
    """Each diagnosed mistake, the students whose failed tests it names (each once), and the
    sentence of its first failed test (a mistake fitted to other numbers may read a little
    differently for another student)."""
    students: dict[str, set[str]] = {}
    message: dict[str, str] = {}
    for doc in graded:
        for t in doc["tests"]:
            mistake = t.get("diagnosis")
            if not mistake or t["status"] == "passed":
                continue
            students.setdefault(mistake, set()).add(doc["student"])
            if mistake not in message:
                message[mistake] = split_diagnosis(t)[0] or ""
    n = len(graded)
    rows = [Diagnosed(m, message[m], tuple(sorted(s)), len(s) / n) for m, s in students.items()]
    return tuple(sorted(rows, key=lambda d: (-len(d.students), d.mistake)))


def histogram(
    values: Sequence[float], top: float, bins: int = 10
) -> list[tuple[float, float, int]]:
    """``values`` from 0 to ``top`` in ``bins`` equal bins: (low, high, count); the last bin holds
    ``top``."""
    width = top / bins if top > 0 else 1.0
    counts = [0] * bins
    for v in values:
        counts[min(int(v / width), bins - 1) if v > 0 else 0] += 1
    return [(i * width, (i + 1) * width, c) for i, c in enumerate(counts)]
