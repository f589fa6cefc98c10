"""Issue 27, "a careless instructor loses nothing": every course.json value is checked (type and
range) where it is read, in one line naming the file and the field, before anything is graded or
written; and a course that cannot grade its own reference never replaces a graded score file."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from conftest import GOOD, grade, make_course, write_tree

from grader.course.manifest import load
from grader.errors import GradeError


def _limit(name, value):
    return lambda c: c["limits"].update({name: value})


# Each of these loaded before (memory_mb 1024.5 then made every submission a grader error; 0 cost
# the reference points), or is a value no grading can use (NaN, inf: json reads both).
BAD = [
    (_limit("memory_mb", 1024.5), "limits.memory_mb"),
    (_limit("memory_mb", 0), "limits.memory_mb"),
    (_limit("memory_mb", 16), "limits.memory_mb"),  # numpy alone needs more room
    (_limit("memory_mb", 10**12), "limits.memory_mb"),  # setrlimit refuses it: no limit
    (_limit("memory_mb", True), "limits.memory_mb"),
    (_limit("output_kb", 0), "limits.output_kb"),
    (_limit("output_kb", 2.5), "limits.output_kb"),
    (_limit("call_timeout", 0), "limits.call_timeout"),
    (_limit("call_timeout", math.nan), "limits.call_timeout"),
    (_limit("call_timeout", math.inf), "limits.call_timeout"),
    (_limit("call_timeout", 1e9), "limits.call_timeout"),
    (_limit("problem_budget", 0), "limits.problem_budget"),
    (_limit("submission_budget", 1e300), "limits.submission_budget"),
    (_limit("import_timeout", 0), "limits.import_timeout"),
    (_limit("import_budget", math.inf), "limits.import_budget"),
    (lambda c: c["problems"][0].update(points=math.inf), "problems[0].points"),
    (lambda c: c["problems"][0].update(points=0), "problems[0].points"),
    (lambda c: c["problems"][0].update(module="class"), "problems[0].module"),  # no `import class`
    (lambda c: c["problems"][0].update(functions=["lambda"]), "problems[0].functions"),
    (lambda c: c.update(imports=["import"]), "imports[0]"),
    (lambda c: c.update(solutions="no-such-folder"), "solutions"),
    (lambda c: c.update(title=5), "title"),
    (lambda c: c.update(exercises=["exercises"]), "exercises"),
    (
        lambda c: c.update(feedback={"trace_data": "tests/public/none.json"}, solutions=None),
        "feedback.trace_data",
    ),
    (
        lambda c: c.update(due="2026-05-01T23:59:00Z", late_policy={"percent_per_day": math.inf}),
        "late_policy.percent_per_day",
    ),
    (
        lambda c: c.update(due="2026-05-01T23:59:00Z", late_policy={"percent_per_day": 250}),
        "late_policy.percent_per_day",
    ),
    (
        lambda c: c.update(
            due="2026-05-01T23:59:00Z", late_policy={"percent_per_day": 10, "grace_minutes": 1e300}
        ),
        "late_policy.grace_minutes",
    ),
]


@pytest.mark.parametrize(
    "change, field", BAD, ids=[f"{field}-{i}" for i, (_, field) in enumerate(BAD)]
)
def test_a_value_of_the_wrong_type_or_out_of_range_is_named(mini_course, change, field):
    data = json.loads(mini_course.read_text())
    change(data)
    data = {k: v for k, v in data.items() if v is not None}
    mini_course.write_text(json.dumps(data))
    with pytest.raises(GradeError) as err:
        load(mini_course)
    message = str(err.value)
    assert str(mini_course) in message and f"'{field}'" in message and "\n" not in message, message


def test_a_course_wide_limit_is_named_where_it_is_written(mini_course):
    data = json.loads(mini_course.read_text())
    data = {"course": "c", "limits": {"memory_mb": 1024.5}, "assignments": [data]}
    mini_course.write_text(json.dumps(data))
    with pytest.raises(GradeError, match=r"field 'limits.memory_mb': must be a whole number"):
        load(mini_course)


def test_values_in_range_load_as_given(mini_course):
    data = json.loads(mini_course.read_text())
    data["limits"].update(memory_mb=2048.0, output_kb=8, call_timeout=0.5, import_timeout=3)
    mini_course.write_text(json.dumps(data))
    limits = load(mini_course).limits
    assert (limits.memory_mb, limits.output_kb) == (2048, 8)
    assert (limits.call_timeout, limits.import_timeout) == (0.5, 3)
    assert type(limits.memory_mb) is int and type(limits.output_kb) is int


def _graded_once(tmp_path: Path) -> tuple[Path, Path, Path, bytes]:
    """The mini course, one correct submission graded into --out: course.json, submissions, --out,
    the score file's bytes."""
    course = make_course(tmp_path / "course")
    subs = tmp_path / "subs"
    write_tree(subs / "ada", GOOD)
    out = tmp_path / "out"
    code, output = grade("autograde", "--course", course, subs, "--out", out, "--quiet")
    assert code == 0, output
    doc = json.loads((out / "ada.json").read_text())
    assert (doc["status"], doc["score"]) == ("graded", 4)
    return course, subs, out, (out / "ada.json").read_bytes()


@pytest.mark.parametrize("memory_mb", [1024.5, 0])
def test_a_bad_limit_stops_autograde_before_the_graded_file_is_touched(tmp_path, memory_mb):
    course, subs, out, before = _graded_once(tmp_path)
    data = json.loads(course.read_text())
    data["limits"]["memory_mb"] = memory_mb
    course.write_text(json.dumps(data))
    code, output = grade("autograde", "--course", course, subs, "--out", out, "--force", "--quiet")
    assert code == 2 and "'limits.memory_mb'" in output, output
    assert len(output.strip().splitlines()) == 1, output
    assert (out / "ada.json").read_bytes() == before


def _edit_suite(course: Path, old: str, new: str) -> None:
    hidden = course.parent / "tests" / "hidden" / "test_mathy.py"
    assert old in hidden.read_text()
    hidden.write_text(hidden.read_text().replace(old, new))


@pytest.mark.parametrize(
    "old, new, why",
    [
        # the suite itself raises: every submission a grader error (as memory_mb 1024.5 made them)
        ("assert student.twice(21) == 42", "assert student.twice(21) == undefined", "grader error"),
        # the suite expects a wrong value: every submission, the reference too, loses the point
        ("assert student.twice(21) == 42", "assert student.twice(21) == 43", "scores 3/4"),
    ],
)
def test_a_course_whose_reference_cannot_pass_never_replaces_a_graded_file(tmp_path, old, new, why):
    """The evidence that the course, not the student, is at fault: its own reference cannot pass.
    Checked before a graded score file would be replaced; nothing is then written."""
    course, subs, out, before = _graded_once(tmp_path)
    _edit_suite(course, old, new)
    code, output = grade("autograde", "--course", course, subs, "--out", out)
    assert code == 2, output
    line = next(line for line in output.splitlines() if "reference" in line)
    assert str(course) in line and why in line and "ada" in output, output
    assert (out / "ada.json").read_bytes() == before
    assert not (out / ".grading").exists()


def test_a_course_edit_the_reference_passes_regrades_as_before(tmp_path):
    course, subs, out, before = _graded_once(tmp_path)
    _edit_suite(
        course, "assert student.twice(21) == 42", "assert student.twice(21) == 42  # still right"
    )
    code, output = grade("autograde", "--course", course, subs, "--out", out, "--quiet")
    assert code == 0, output
    after = json.loads((out / "ada.json").read_text())
    assert after["score"] == 4 and after["course_sha256"] == load(course).sha256
    assert (out / "ada.json").read_bytes() != before
