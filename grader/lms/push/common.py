"""What the pushes share: one student's outcome, retrying a call the LMS throttled, the feedback comment."""
from __future__ import annotations

import importlib.util
import time
from dataclasses import dataclass
from typing import Callable, TypeVar

from grader.errors import GradeError

T = TypeVar("T")

POSTED, UNCHANGED, FAILED = "posted", "unchanged", "failed"
SHOWN_NAMES = 5          # failed tests named per problem in a comment; the feedback page names them all


@dataclass(frozen=True)
class Outcome:
    """What became of one student's score: ``posted``, ``unchanged`` (the LMS already has it) or ``failed``
    (the LMS refused it: ``detail`` says why)."""

    student: str
    status: str
    detail: str


@dataclass(frozen=True)
class Backoff:
    """How to wait on a throttled call: ``first`` seconds, doubled on each of at most ``retries`` retries."""

    retries: int = 5
    first: float = 1.0
    sleep: Callable[[float], None] = time.sleep


TIMEOUT = 30.0           # seconds an LMS may take to answer one request: a hung LMS fails the push, never hangs it


def session():
    """A requests session whose every request gives up after :data:`TIMEOUT` seconds (requests, and so canvasapi
    and pylti1p3, wait forever by default)."""
    import requests

    class TimedSession(requests.Session):
        def request(self, *args, **kwargs):
            if kwargs.get("timeout") is None:
                kwargs["timeout"] = TIMEOUT
            return super().request(*args, **kwargs)

    return TimedSession()


class Throttled(Exception):
    """The LMS asked to slow down (Canvas: 403 "Rate Limit Exceeded" or 429; AGS: 429)."""


def require(module: str) -> None:
    """:raises GradeError: ``module`` (a library of the push extra) is not installed."""
    if importlib.util.find_spec(module) is None:
        raise GradeError(f"grade push needs {module}: pip install 'transformer-block-grader[push]'")


def redact(text: str, *secrets: str) -> str:
    """``text`` with each of ``secrets`` (a token, an assertion) replaced: an LMS, a proxy or a firewall may echo
    the request's ``Authorization`` header or body in an error it answers, and that answer is printed."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "[redacted]")
    return text


def with_backoff(call: Callable[[], T], backoff: Backoff, throttled: Callable[[Exception], bool]) -> T:
    """``call()``, retried after a growing wait while it raises an exception ``throttled`` recognises.

    :raises Throttled: still throttled after the last retry.
    """
    for attempt in range(backoff.retries + 1):
        try:
            return call()
        except Exception as err:            # noqa: BLE001 - re-raised unless it is the LMS throttling
            if not throttled(err):
                raise
            if attempt == backoff.retries:
                raise Throttled(f"still rate-limited after {backoff.retries} retries: {err}") from None
            backoff.sleep(backoff.first * 2 ** attempt)
    raise AssertionError("unreachable")


def comment(doc: dict, score: float, release_hidden: bool, late_by_lms: bool) -> str:
    """The student's feedback as plain text: the total, each problem's points and tests passed, the known
    mistakes the failed tests matched, the public tests that failed, and how many hidden ones did (their
    diagnoses and names only when the course releases hidden details: ``release_hidden``). Deterministic
    (no time in it), so an LMS that already has it is not sent it again."""
    lines = [f"{doc['assignment']}: {score:g}/{doc['max_score']:g}"]
    for problem in doc["problems"]:
        tests = [t for t in doc["tests"] if t["problem"] == problem["name"]]
        passed = sum(t["status"] == "passed" for t in tests)
        lines.append(f"{problem['name']} {problem['score']:g}/{problem['max_score']:g} "
                     f"({passed}/{len(tests)} tests passed)")
        failed = [t for t in tests if t["status"] != "passed"]
        shown = [t for t in failed if t["visibility"] == "visible" or release_hidden]
        diagnoses = dict.fromkeys(line.strip() for t in shown for line in t["output"].splitlines()
                                  if line.startswith("diagnosis:"))
        lines += [f"  {d}" for d in diagnoses]
        if shown and not diagnoses:
            first = next((t["output"].splitlines()[0] for t in shown if t["output"].strip()), "")
            if first:
                lines.append(f"  first failure: {first[:300]}")
        if shown:
            names = [t["name"] for t in shown]
            more = f" and {len(names) - SHOWN_NAMES} more" if len(names) > SHOWN_NAMES else ""
            lines.append("  failed: " + ", ".join(names[:SHOWN_NAMES]) + more)
        hidden = len(failed) - len(shown)
        if hidden:
            lines.append(f"  {hidden} hidden test(s) failed (their details are not released)")
    late = doc.get("late")
    if late and late["days_late"]:
        lines.append(f"Submitted {late['days_late']} day(s) late"
                     + (": the LMS applies the late policy." if late_by_lms else
                        f": {late['penalty']:g} points off {late['raw_score']:g}." if late["penalty"] else "."))
    lines += [f"Note: {note}" for note in doc.get("submission_notes", [])]
    return "\n".join(lines)
