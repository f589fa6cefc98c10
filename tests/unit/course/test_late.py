"""Late submissions: nbgrader's timestamp.txt is read with its zone, and the penalty follows
course.json."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from grader.course.late import LatePolicy, apply, parse_timestamp, read_timestamp
from grader.errors import GradeError

DUE = datetime(2026, 5, 1, 23, 59, tzinfo=timezone.utc)
POLICY = LatePolicy(percent_per_day=10, max_percent=30, grace_minutes=15)


@pytest.mark.parametrize(
    "text, utc",
    [
        (
            "2026-02-02 14:58:23.948203 America/Los_Angeles",
            "2026-02-02T22:58:23.948203+00:00",
        ),  # nbgrader's form
        ("2026-02-02 14:58:23.948203 UTC", "2026-02-02T14:58:23.948203+00:00"),
        ("2026-02-02 14:58:23", "2026-02-02T14:58:23+00:00"),  # naive: UTC
        ("2026-02-02T14:58:23+01:00", "2026-02-02T13:58:23+00:00"),
        ("2026-02-02 14:58:23 +01:00", "2026-02-02T13:58:23+00:00"),
        ("2026-02-02T14:58:23Z\n", "2026-02-02T14:58:23+00:00"),
    ],
)
def test_timestamps_are_read_in_their_own_zone(text, utc):
    assert parse_timestamp(text).astimezone(timezone.utc).isoformat() == utc


def test_a_bad_timestamp_file_is_named(tmp_path):
    assert read_timestamp(tmp_path) is None  # no file: no time
    (tmp_path / "timestamp.txt").write_text("2026-02-02 14:58:23 PST\n")
    with pytest.raises(GradeError) as err:
        read_timestamp(tmp_path)
    assert str(tmp_path / "timestamp.txt") in str(err.value) and "'PST'" in str(err.value)


def doc(score: float) -> dict:
    return {"score": score, "max_score": 100.0}


@pytest.mark.parametrize(
    "late_by, days, penalty",
    [
        (timedelta(0), 0, 0.0),
        (timedelta(minutes=15), 0, 0.0),  # inside the grace period
        (timedelta(minutes=16), 1, 10.0),  # a started day counts
        (timedelta(days=1, minutes=16), 2, 20.0),
        (timedelta(days=9), 9, 30.0),  # capped at max_percent
        (-timedelta(days=2), 0, 0.0),  # early
    ],
)
def test_penalty_per_started_day_after_grace(late_by, days, penalty):
    result = apply(doc(80.0), DUE + late_by, DUE, POLICY)
    assert result["late"]["days_late"] == days
    assert result["late"]["penalty"] == penalty
    assert result["score"] == 80.0 - penalty and result["late"]["raw_score"] == 80.0


def test_penalty_never_takes_the_score_below_zero():
    result = apply(doc(5.0), DUE + timedelta(days=3), DUE, POLICY)
    assert result["score"] == 0 and result["late"]["penalty"] == 5.0  # what was actually deducted


def test_without_a_policy_lateness_is_recorded_but_costs_nothing():
    result = apply(doc(80.0), DUE + timedelta(hours=5), DUE, None)
    assert result["score"] == 80.0 and result["late"]["seconds_late"] == 5 * 3600
    assert result["late"]["submitted_at"].endswith("+00:00")
    assert result["late"]["due"] == "2026-05-01T23:59:00.000+00:00"
