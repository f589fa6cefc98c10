"""course.json: a bad field gets a one-line error naming the file and the field."""
from __future__ import annotations

import json

import pytest

from grader.course.manifest import load
from grader.errors import GradeError


def test_the_project_course_loads(course):
    assert course.problem_names == ["layernorm", "gelu", "attention", "block", "params"]
    assert course.max_score == 100
    assert course.functions["softmax"] == "attention" and course.functions["mlp"] == "block"
    assert len(course.sha256) == 64


@pytest.mark.parametrize("change, field", [
    (lambda c: c["problems"][0].update(points="ten"), "problems[0].points"),
    (lambda c: c["problems"][0].update(points=-1), "problems[0].points"),
    (lambda c: c["problems"][0].pop("module"), "problems[0].module"),
    (lambda c: c["problems"][0].update(functions=["not valid"]), "problems[0].functions"),
    (lambda c: c["problems"][0].update(public="tests/public/nope.py"), "problems[0].public"),
    (lambda c: c.pop("assignment"), "assignment"),
    (lambda c: c["limits"].update(call_timeout="fast"), "limits.call_timeout"),
    (lambda c: c["limits"].update(bogus=1), "limits.bogus"),
    (lambda c: c.update(problems=[]), "problems"),
    (lambda c: c.update(due="2026-05-01T23:59:00"), "due"),                       # no time zone
    (lambda c: c.update(due="next friday"), "due"),
    (lambda c: c.update(late_policy={"percent_per_day": 10}), "late_policy"),       # no due date
    (lambda c: c.update(due="2026-05-01T23:59:00Z", late_policy={"per_day": 10}), "late_policy.per_day"),
    (lambda c: c.update(due="2026-05-01T23:59:00Z", late_policy={"max_percent": 10}),
     "late_policy.percent_per_day"),
    (lambda c: c.update(due="2026-05-01T23:59:00Z", late_policy={"percent_per_day": -5}),
     "late_policy.percent_per_day"),
    (lambda c: c.update(lms={"canvas_assignment_id": "abc"}), "lms.canvas_assignment_id"),
    (lambda c: c.update(lms={"blackboard_column_id": "66 4"}), "lms.blackboard_column_id"),
    (lambda c: c.update(lms={"moodle": "1"}), "lms.moodle"),
])
def test_bad_fields_are_named(mini_course, change, field):
    data = json.loads(mini_course.read_text())
    change(data)
    mini_course.write_text(json.dumps(data))
    with pytest.raises(GradeError) as err:
        load(mini_course)
    message = str(err.value)
    assert str(mini_course) in message and f"'{field}'" in message and "\n" not in message


def test_not_json_and_missing_file(tmp_path):
    bad = tmp_path / "course.json"
    bad.write_text("{nope")
    with pytest.raises(GradeError, match="not valid JSON"):
        load(bad)
    with pytest.raises(GradeError, match="not found"):
        load(tmp_path / "missing.json")


def test_fingerprint_follows_the_suites(mini_course):
    before = load(mini_course).sha256
    hidden = mini_course.parent / "tests" / "hidden" / "test_mathy.py"
    hidden.write_text(hidden.read_text() + "\n# changed\n")
    assert load(mini_course).sha256 != before


def test_due_date_late_policy_and_lms_ids_are_read(mini_course):
    data = json.loads(mini_course.read_text())
    data.update(due="2026-05-01T23:59:00+02:00", late_policy={"percent_per_day": 10, "grace_minutes": 15},
                lms={"canvas_assignment_id": 48213, "blackboard_column_id": "_664617_1"})
    mini_course.write_text(json.dumps(data))
    course = load(mini_course)
    assert course.due.isoformat() == "2026-05-01T23:59:00+02:00"
    assert (course.late_policy.percent_per_day, course.late_policy.max_percent,
            course.late_policy.grace_minutes) == (10, 100, 15)
    assert course.lms.canvas_assignment_id == "48213" and course.lms.blackboard_column_id == "_664617_1"
