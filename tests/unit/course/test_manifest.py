"""course.json: a bad field gets a one-line error naming the file and the field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import MINI_HIDDEN, MINI_PUBLIC, grade, make_course, write_tree

from grader.course.manifest import load
from grader.errors import GradeError


@pytest.mark.parametrize(
    "change, field",
    [
        (lambda c: c["problems"][0].update(points="ten"), "problems[0].points"),
        (lambda c: c["problems"][0].update(points=-1), "problems[0].points"),
        (lambda c: c["problems"][0].pop("module"), "problems[0].module"),
        (lambda c: c["problems"][0].update(functions=["not valid"]), "problems[0].functions"),
        (lambda c: c["problems"][0].update(public="tests/public/nope.py"), "problems[0].public"),
        (lambda c: c.pop("assignment"), "assignment"),
        (lambda c: c["limits"].update(call_timeout="fast"), "limits.call_timeout"),
        (lambda c: c["limits"].update(bogus=1), "limits.bogus"),
        (lambda c: c.update(problems=[]), "problems"),
        (lambda c: c.update(due="2026-05-01T23:59:00"), "due"),  # no time zone
        (lambda c: c.update(due="next friday"), "due"),
        (lambda c: c.update(late_policy={"percent_per_day": 10}), "late_policy"),  # no due date
        (
            lambda c: c.update(due="2026-05-01T23:59:00Z", late_policy={"per_day": 10}),
            "late_policy.per_day",
        ),
        (
            lambda c: c.update(due="2026-05-01T23:59:00Z", late_policy={"max_percent": 10}),
            "late_policy.percent_per_day",
        ),
        (
            lambda c: c.update(due="2026-05-01T23:59:00Z", late_policy={"percent_per_day": -5}),
            "late_policy.percent_per_day",
        ),
        (lambda c: c.update(lms={"canvas_assignment_id": "abc"}), "lms.canvas_assignment_id"),
        (lambda c: c.update(lms={"blackboard_column_id": "66 4"}), "lms.blackboard_column_id"),
        (lambda c: c.update(lms={"moodle": "1"}), "lms.moodle"),
        (lambda c: c.update(limts=c.pop("limits")), "limts"),  # a typo is never ignored
        (lambda c: c["problems"][0].update(point=3), "problems[0].point"),
        (lambda c: c.update(feedback={"trace_date": "x.json"}), "feedback.trace_date"),
    ],
)
def test_bad_fields_are_named(mini_course, change, field):
    data = json.loads(mini_course.read_text())
    change(data)
    mini_course.write_text(json.dumps(data))
    with pytest.raises(GradeError) as err:
        load(mini_course)
    message = str(err.value)
    assert str(mini_course) in message and f"'{field}'" in message and "\n" not in message


def test_an_unknown_key_is_named_with_the_closest_known_one(mini_course):
    data = json.loads(mini_course.read_text())
    data["limts"] = data.pop("limits")
    mini_course.write_text(json.dumps(data))
    with pytest.raises(
        GradeError, match=r"field 'limts': unknown field \(did you mean 'limits'\? known: "
    ):
        load(mini_course)


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
    data.update(
        due="2026-05-01T23:59:00+02:00",
        late_policy={"percent_per_day": 10, "grace_minutes": 15},
        lms={"canvas_assignment_id": 48213, "blackboard_column_id": "_664617_1"},
    )
    mini_course.write_text(json.dumps(data))
    course = load(mini_course)
    assert course.due.isoformat() == "2026-05-01T23:59:00+02:00"
    assert (
        course.late_policy.percent_per_day,
        course.late_policy.max_percent,
        course.late_policy.grace_minutes,
    ) == (10, 100, 15)
    assert (
        course.lms.canvas_assignment_id == "48213"
        and course.lms.blackboard_column_id == "_664617_1"
    )


def two_assignments(mini_course: Path) -> Path:
    """The mini course as a course of two assignments, "mini" and "mini-2" (6 points, its own call
    timeout), with course-wide limits and LMS ids."""
    one = json.loads(mini_course.read_text())
    limits = one.pop("limits")
    second = {
        **json.loads(json.dumps(one)),
        "assignment": "mini-2",
        "limits": {"call_timeout": 7},
        "lms": {"canvas_assignment_id": "22"},
    }
    second["problems"][0]["points"] = 6
    data = {
        "course": "A course",
        "limits": limits,
        "lms": {"blackboard_column_id": "_66_1"},
        "assignments": [one, second],
    }
    mini_course.write_text(json.dumps(data))
    return mini_course


def test_a_course_of_assignments_loads_each_with_the_course_wide_settings_under_its_own(
    mini_course,
):
    path = two_assignments(mini_course)
    first, second = load(path, "mini"), load(path, "mini-2")
    assert (first.assignment, first.max_score, first.limits.call_timeout) == ("mini", 4, 2)
    assert (second.assignment, second.max_score, second.limits.call_timeout) == ("mini-2", 6, 7)
    assert second.limits.problem_budget == 5  # the course's, not overridden
    assert (second.lms.canvas_assignment_id, second.lms.blackboard_column_id) == ("22", "_66_1")
    assert first.sha256 != second.sha256


def test_with_several_assignments_the_one_to_load_must_be_named(mini_course):
    path = two_assignments(mini_course)
    with pytest.raises(
        GradeError, match="holds 2 assignments: pass --assignment with one of mini, mini-2$"
    ):
        load(path)
    with pytest.raises(
        GradeError, match=r"no assignment named 'mini-3' \(did you mean 'mini-2'\?\)"
    ):
        load(path, "mini-3")
    single = make_course(mini_course.parent.parent / "single")
    assert load(single, "mini").assignment == "mini"
    with pytest.raises(GradeError, match="no assignment named 'other'"):
        load(single, "other")


def test_a_bad_field_of_one_assignment_is_named_with_its_place(mini_course):
    path = two_assignments(mini_course)
    data = json.loads(path.read_text())
    data["assignments"][1]["problems"][0]["points"] = "six"
    path.write_text(json.dumps(data))
    assert load(path, "mini").max_score == 4  # the other assignment loads
    with pytest.raises(
        GradeError, match=r"field 'assignments\[1\].problems\[0\].points': must be a number"
    ):
        load(path, "mini-2")


def test_every_command_takes_the_assignment(mini_course):
    path = two_assignments(mini_course)
    for command in (["validate"], ["trace"], ["check"], ["release", "--out", "x"]):
        code, output = grade(*command, "--course", path)
        assert (
            code == 2
            and "holds 2 assignments: pass --assignment with one of mini, mini-2" in output
        ), command
    code, output = grade("validate", "--course", path, "-a", "mini")
    assert code == 0 and "mini: validation" in output, output
    code, output = grade(
        "check", "--course", path, "--assignment", "mini-2", "--path", path.parent / "solutions"
    )
    assert code == 0 and "of 6" in output, output  # mini-2's points, not mini's


def tripling(root: Path) -> Path:
    """A second assignment with the same names as the mini course (module mathy, package `public`),
    where double means 3x: its reference, its suites and its submissions disagree with the mini
    course's."""
    path = make_course(
        root, public=MINI_PUBLIC.replace("* 2", "* 3"), hidden=MINI_HIDDEN.replace("x * 2", "x * 3")
    )
    write_tree(
        root / "solutions",
        {"mathy.py": "def double(x):\n    return 3 * x\n\ndef twice(n):\n    return 2 * n\n"},
    )
    return path


def test_one_process_grades_two_assignments_each_with_its_own_reference_and_suites(
    mini_course, tmp_path
):
    """A long-lived process (a Dask worker) grading assignment A, then B: B's reference is B's, and
    B's suites (also the package `public`, also module mathy) are B's, and then A's are A's
    again."""
    import numpy as np

    from grader.course.modules import import_course_module
    from grader.grading import executors
    from grader.grading.reference import load_reference
    from grader.grading.results import Job

    first, second = load(mini_course), load(tripling(tmp_path / "second"))
    assert load_reference(first).double(1) == 2
    assert load_reference(second).double(1) == 3
    assert load_reference(first).double(np.ones(1))[0] == 2
    assert import_course_module(second.problems[0].public).__file__ == str(
        second.problems[0].public
    )
    doubler = write_tree(
        tmp_path / "subs" / "doubler", {"mathy.py": "def double(x):\n    return 2 * x\n"}
    )
    tripler = write_tree(
        tmp_path / "subs" / "tripler", {"mathy.py": "def double(x):\n    return 3 * x\n"}
    )
    scores = {}
    for course in (first, second, first):
        for job in (doubler, tripler):
            executors.run(
                course,
                [Job(job.name, job)],
                lambda g: scores.setdefault((course.assignment, course.root.name), []).append(
                    (
                        g.job.student,
                        [r.status for r in g.results if r.name.startswith("test_double")],
                    )
                ),
                hidden=True,
                warm=False,
            )
    want_a = [("doubler", ["passed", "passed"]), ("tripler", ["failed", "failed"])] * 2
    want_b = [("doubler", ["failed", "failed"]), ("tripler", ["passed", "passed"])]
    assert scores == {("mini", "course"): want_a, ("mini", "second"): want_b}


SIXTH_PUBLIC = '''
import numpy as np
import pytest
from grader.feedback.compare import assert_close

@pytest.mark.points(2)
def test_relu_of_a_small_vector(student):
    """relu of [-1, 0, 2]"""
    got = student.relu(np.array([-1.0, 0.0, 2.0]))
    assert_close(got, [0.0, 0.0, 2.0], what="relu of [-1, 0, 2]")
'''
SIXTH_HIDDEN = '''
import numpy as np
import pytest
from grader.feedback.compare import assert_close

@pytest.mark.points(3)
def test_relu_of_random_rows(student, reference):
    """relu of random rows"""
    x = np.random.default_rng(6).normal(size=(4, 8))
    assert_close(student.relu(x), reference.relu(x), what="relu of random rows")
'''


def test_a_sixth_exercise_needs_no_grader_code(tmp_path):
    """An instructor adds a sixth problem to a copy of the project's the-block (a stub, a solution,
    two suites and its line in course.json): validate, release, check in the release and autograde
    all take it, with no grader code changed."""
    import shutil

    from conftest import PROJECT, THE_BLOCK

    from grader.course.manifest import settings

    course = tmp_path / "course"
    for folder in ("exercises", "solutions", "tests"):
        shutil.copytree(
            PROJECT / folder / THE_BLOCK,
            course / folder / THE_BLOCK,
            ignore=shutil.ignore_patterns("__pycache__", "checks"),
        )
    # the overrides file course.json names: a header alone (the project's own is the README
    # walkthrough's to append to, so what it holds is the user's, not this test's)
    write_tree(
        course,
        {
            settings(PROJECT / "course.json", THE_BLOCK)[0][
                "overrides"
            ]: "student,kind,problem,points,due,reason,by\n"
        },
    )
    write_tree(
        course / "exercises" / THE_BLOCK,
        {
            "relu.py": '"""ReLU: max(x, 0) elementwise."""\n\n\ndef relu(x):\n'
            "    raise NotImplementedError\n"
        },
    )
    write_tree(
        course / "solutions" / THE_BLOCK,
        {"relu.py": "import numpy as np\n\n\ndef relu(x):\n    return np.maximum(x, 0)\n"},
    )
    write_tree(
        course / "tests" / THE_BLOCK,
        {"public/test_relu.py": SIXTH_PUBLIC, "hidden/test_relu.py": SIXTH_HIDDEN},
    )
    manifest = {
        "course": "a copy",
        "assignments": [settings(PROJECT / "course.json", THE_BLOCK)[0]],
    }
    manifest["assignments"][0]["problems"].append(
        {
            "name": "relu",
            "module": "relu",
            "functions": ["relu"],
            "points": 5,
            "public": f"tests/{THE_BLOCK}/public/test_relu.py",
            "hidden": f"tests/{THE_BLOCK}/hidden/test_relu.py",
        }
    )
    (course / "course.json").write_text(json.dumps(manifest))

    code, output = grade("validate", cwd=course)
    assert code == 0 and "course is valid" in output, output
    assert "relu" in output and "105/105" in output
    code, output = grade(
        "release", "--out", tmp_path / "release", "--nbgrader-dir", tmp_path / "nb", cwd=course
    )
    assert code == 0, output
    mine = shutil.copytree(
        course / "solutions" / THE_BLOCK,
        tmp_path / "mine",
        ignore=shutil.ignore_patterns("mistakes.py"),
    )
    code, output = grade("check", "--path", mine, cwd=tmp_path / "release")
    assert code == 0 and "relu" in output, output
    subs = tmp_path / "subs"
    shutil.copytree(mine, subs / "ada")
    code, output = grade("autograde", subs, "--out", tmp_path / "scores", "--quiet", cwd=course)
    assert code == 0, output
    doc = json.loads((tmp_path / "scores" / "ada.json").read_text())
    assert (
        doc["score"] == doc["max_score"] == 105
        and [p["name"] for p in doc["problems"]][-1] == "relu"
    )


def test_a_feedback_module_that_does_not_exist_is_a_one_line_error(mini_course):
    data = json.loads(mini_course.read_text())
    data["feedback"] = {"mistakes": "solutions/mistake.py"}
    mini_course.write_text(json.dumps(data))
    with pytest.raises(
        GradeError, match=r"field 'feedback.mistakes': file solutions/mistake.py does not exist"
    ):
        load(mini_course)


def test_an_out_folder_of_another_assignment_is_refused_and_left_as_it_is(
    mini_course, tmp_path, submission
):
    """Two assignments into one --out would overwrite each other's score files student by
    student."""
    out = tmp_path / "scores"
    out.mkdir()
    theirs = out / "ada.json"
    theirs.write_text(json.dumps({"student": "ada", "assignment": "the-modern-block", "score": 88}))
    folder = submission({"mathy.py": "def double(x):\n    return 2 * x\n"}, name="ada")
    code, output = grade("autograde", folder.parent, "--out", out, "--course", mini_course)
    assert (
        code == 2 and "holds 'the-modern-block''s score files (ada.json), not 'mini''s" in output
    ), output
    assert json.loads(theirs.read_text())["score"] == 88
