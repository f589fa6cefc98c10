"""Late submissions: read the submission time, compare it with the due date, and deduct the penalty.

Pure functions and stdlib only (``grade check`` imports this through :mod:`grader.course.manifest`).
The policy comes from course.json (``due``, ``late_policy``); the submission time from nbgrader's
``timestamp.txt``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from datetime import datetime, timezone
from pathlib import Path

from grader.course.fields import _fail, _get, _number, _only_known
from grader.errors import GradeError

DAY = 86400.0
TIMESTAMP_FILE = "timestamp.txt"
# course.json ``missing_timestamp``: what a submission that should have a time and has none counts
# as
MISSING_TIMESTAMP = ("on_time", "late", "refuse")
# course.json ``late_policy``: what each value may be (least, most, unit); percents of the maximum
POLICY_RANGES = {
    "percent_per_day": (0, 100, "percent"),
    "max_percent": (0, 100, "percent"),
    "grace_minutes": (0, 7 * 24 * 60, "minutes"),
}  # a week of grace, at most


@dataclass(frozen=True)
class LatePolicy:
    """How much a late submission loses.

    :param percent_per_day: percent of the assignment's maximum deducted per started day late (100:
        zero).
    :param max_percent: the deduction never exceeds this percent of the maximum.
    :param grace_minutes: minutes after the due date that still count as on time.
    """

    percent_per_day: float
    max_percent: float = 100.0
    grace_minutes: float = 0.0

    def describe(self) -> str:
        return (
            f"{self.percent_per_day:g}% of the maximum per started day late, at most "
            f"{self.max_percent:g}%, "
            f"after {self.grace_minutes:g} min of grace"
        )


def parse_iso(text: str) -> datetime:
    """An ISO 8601 date-time that names its time zone, e.g. ``2026-05-01T23:59:00+02:00`` or
    ``...Z``.

    :raises ValueError: not ISO 8601, or no time zone.
    """
    value = datetime.fromisoformat(text.strip().replace("Z", "+00:00").replace("z", "+00:00"))
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError(f"{text!r} has no time zone (add e.g. +00:00 or Z)")
    return value


def parse_timestamp(text: str) -> datetime:
    """A submission time as nbgrader writes it to ``timestamp.txt``, as an aware datetime.

    Accepts ``2026-02-02 14:58:23.948203 America/Los_Angeles`` (an IANA zone name), ``... UTC``, an
    ISO 8601 offset (``+01:00``, ``Z``), or no zone at all, which nbgrader reads as UTC.

    :raises ValueError: not a date and time, or an unknown zone name (abbreviations like ``PST`` are
        ambiguous).
    """
    text = text.strip()
    head, _, zone = text.rpartition(" ")
    if head and zone[:1] in "+-":  # "... 14:58:23 +01:00": an offset after a space
        stamp, zone = head + zone, ""
    elif head and any(c.isalpha() for c in zone):  # "... 14:58:23 Europe/Lisbon": a zone name
        stamp = head
    else:
        stamp, zone = text, ""
    value = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    if zone:
        if value.tzinfo is not None:
            raise ValueError(f"{text!r} gives two time zones")
        value = value.replace(tzinfo=_zone(zone))
    return value if value.tzinfo is not None else value.replace(tzinfo=timezone.utc)


def _zone(name: str):
    if name.upper() in ("UTC", "GMT", "Z"):
        return timezone.utc
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(
            f"unknown time zone {name!r} (use an IANA name such as Europe/Lisbon, or an offset)"
        ) from None


def read_timestamp(folder: Path) -> datetime | None:
    """The submission time from ``folder/timestamp.txt``, or None when the file is absent.

    :raises GradeError: one line naming the file, when it is unreadable or not a time.
    """
    path = Path(folder) / TIMESTAMP_FILE
    if not path.is_file():
        return None
    try:
        return parse_timestamp(path.read_text(encoding="utf-8-sig", errors="strict")[:200])
    except (OSError, UnicodeDecodeError, ValueError) as err:
        raise GradeError(f"{path}: not a submission time: {err}") from None


def assess(
    submitted_at: datetime, due: datetime, policy: LatePolicy | None, max_score: float
) -> dict:
    """The lateness of one submission and the points it loses (before any capping at the earned
    score).

    :returns: ``submitted_at``, ``due`` (ISO 8601), ``seconds_late`` (>= 0), ``days_late`` (started
        days after the grace period), ``percent`` (of ``max_score``) and ``penalty`` (points); no
        policy means no penalty.
    """
    seconds = max(0.0, (submitted_at - due).total_seconds())
    grace = policy.grace_minutes * 60 if policy else 0.0
    days = math.ceil((seconds - grace) / DAY) if seconds > grace else 0
    percent = min(policy.max_percent, days * policy.percent_per_day) if policy else 0.0
    return {
        "submitted_at": submitted_at.isoformat(timespec="milliseconds"),
        "due": due.isoformat(timespec="milliseconds"),
        "seconds_late": round(seconds, 3),
        "days_late": days,
        "percent": round(percent, 6),
        "penalty": round(max_score * percent / 100, 6),
    }


def apply(doc: dict, submitted_at: datetime, due: datetime, policy: LatePolicy | None) -> dict:
    """A copy of the score document with its ``late`` record and the penalty taken off ``score``.

    The score never goes below 0, and ``late.penalty`` is what was actually deducted, so
    ``late.raw_score - late.penalty == score``.
    """
    late = assess(submitted_at, due, policy, doc["max_score"])
    raw = doc["score"]
    final = round(max(0.0, raw - late["penalty"]), 6)
    late.update(raw_score=raw, penalty=round(raw - final, 6))
    return {**doc, "score": final, "late": late}


def apply_missing(
    doc: dict, flag: str, due: datetime, policy: LatePolicy | None, counted_as: str
) -> dict:
    """A copy of the score document for a submission whose ``timestamp.txt`` is ``flag`` (missing,
    unreadable): its ``late`` record says so, and course.json's ``missing_timestamp``
    (``counted_as``) decides: on time (no penalty), late (the policy's largest penalty,
    ``max_percent``: how late is unknown) or refuse (no penalty here; ``grade export`` refuses the
    file). Never on time silently."""
    percent = policy.max_percent if counted_as == "late" and policy else 0.0
    raw = doc["score"]
    final = round(max(0.0, raw - doc["max_score"] * percent / 100), 6)
    late = {
        "timestamp": flag,
        "counted_as": counted_as,
        "due": due.isoformat(timespec="milliseconds"),
        "percent": round(percent, 6),
        "penalty": round(raw - final, 6),
        "raw_score": raw,
    }
    return {**doc, "score": final, "late": late}


def from_settings(
    data: dict, path: Path, at: str = ""
) -> tuple[datetime | None, LatePolicy | None, str]:
    """course.json's ``due``, ``late_policy`` and ``missing_timestamp`` (default ``refuse``) of one
    assignment.

    :raises GradeError: one line naming the file and the field.
    """
    due_text = _get(data, "due", str, path, at, None)
    try:
        due = parse_iso(due_text) if due_text else None
    except ValueError as err:
        raise _fail(
            path, at + "due", f"must be an ISO 8601 date-time with a time zone: {err}"
        ) from None
    missing = _get(data, "missing_timestamp", str, path, at, "refuse")
    if missing not in MISSING_TIMESTAMP:
        raise _fail(
            path,
            at + "missing_timestamp",
            f"must be one of {', '.join(MISSING_TIMESTAMP)}, got {missing!r}",
        )
    if "missing_timestamp" in data and due is None:
        raise _fail(path, at + "missing_timestamp", "needs a 'due' date-time")
    policy_data = _get(data, "late_policy", dict, path, at, None)
    if policy_data is None:
        return due, None, missing
    if due is None:
        raise _fail(path, at + "late_policy", "needs a 'due' date-time")
    _only_known(policy_data, {f.name for f in fields(LatePolicy)}, path, at + "late_policy.")
    if "percent_per_day" not in policy_data:
        raise _fail(path, at + "late_policy.percent_per_day", "is missing")
    values = {
        key: _number(policy_data, key, path, at + "late_policy.", *POLICY_RANGES[key])
        for key in policy_data
    }
    return due, LatePolicy(**values), missing
