"""grade new assignment|problem: a skeleton that grade validate accepts at once and grade
autograde and grade check grade; nothing written over a file; course.json's other text kept."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[3]


def grade(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    # timeout: a backstop against a hang, not a measurement
    return subprocess.run(
        [sys.executable, "-m", "grader", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.fixture(scope="module")
def skeleton(tmp_path_factory) -> Path:
    """An empty folder after grade new assignment and grade new problem."""
    root = tmp_path_factory.mktemp("course")
    made = grade(root, "new", "assignment", "softmax-temperature", "--problem", "softmax")
    assert made.returncode == 0, made.stderr
    added = grade(root, "new", "problem", "temperature", "-a", "softmax-temperature")
    assert added.returncode == 0, added.stderr
    return root


def test_grade_validate_accepts_the_skeleton_at_once(skeleton):
    valid = grade(skeleton, "validate")
    assert valid.returncode == 0, valid.stdout + valid.stderr
    assert "course is valid" in valid.stdout
    for problem in ("softmax", "temperature"):
        assert f"{problem}: property tests 1 of 10 points (10%)" in valid.stdout


def test_grade_autograde_grades_the_example_class_and_names_its_mistake(skeleton):
    done = grade(skeleton, "autograde", "examples/softmax-temperature", "--out", "scores")
    assert done.returncode == 0, done.stderr
    scores = {p.stem: json.loads(p.read_text()) for p in (skeleton / "scores").glob("*.json")}
    assert {name: doc["score"] for name, doc in scores.items()} == {
        "ada_correct": 20,
        "alan_axis0": 2,
        "grace_blank": 0,
    }
    diagnosed = {t.get("diagnosis") for t in scores["alan_axis0"]["tests"]}
    assert {"softmax.axis0"} <= diagnosed  # temperature's mistake is not in the catalogue


def test_grade_check_runs_the_public_suite_on_a_submission(skeleton):
    check = grade(skeleton, "check", "softmax", "--path", "examples/softmax-temperature/alan_axis0")
    assert check.returncode == 1
    assert "diagnosis: this matches each column's mean subtracted" in check.stdout


def test_nothing_is_written_over_a_file_and_nothing_at_all_then(tmp_path):
    (tmp_path / "solutions" / "a").mkdir(parents=True)
    (tmp_path / "solutions" / "a" / "a.py").write_text("mine")
    refused = grade(tmp_path, "new", "assignment", "a")
    assert refused.returncode == 2
    assert refused.stderr.strip().splitlines() == [
        f"Error: {tmp_path / 'solutions' / 'a' / 'a.py'}: already exists: grade new writes over "
        "nothing (nothing was written)"
    ]
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["a", "a.py", "solutions"]
    assert (tmp_path / "solutions" / "a" / "a.py").read_text() == "mine"


def test_a_name_already_in_course_json_is_refused_in_one_line(skeleton):
    again = grade(skeleton, "new", "assignment", "softmax-temperature")
    assert again.returncode == 2 and len(again.stderr.strip().splitlines()) == 1
    assert "assignment 'softmax-temperature' is already there" in again.stderr
    twice = grade(skeleton, "new", "problem", "softmax", "-a", "softmax-temperature")
    assert twice.returncode == 2 and "already has a problem or module 'softmax'" in twice.stderr


def test_course_json_keeps_its_other_text_byte_for_byte(tmp_path):
    original = (PROJECT / "course.json").read_text()
    (tmp_path / "course.json").write_text(original)
    made = grade(tmp_path, "new", "assignment", "positional", "--problem", "sinusoid")
    assert made.returncode == 0, made.stderr
    after = (tmp_path / "course.json").read_text()
    last = original.rindex("}", 0, original.rindex("]"))  # the last assignment's closing brace
    assert after.startswith(original[: last + 1] + ",\n")
    assert after.endswith(original[last + 1 :])
    assert [a["assignment"] for a in json.loads(after)["assignments"]] == [
        "the-block",
        "the-modern-block",
        "positional",
    ]


def test_a_new_problem_is_one_line_added_to_its_assignment(tmp_path):
    for folder in ("exercises", "solutions", "tests"):
        shutil.copytree(
            PROJECT / folder / "the-modern-block",
            tmp_path / folder / "the-modern-block",
            ignore=shutil.ignore_patterns("__pycache__", "checks"),
        )
    text = (PROJECT / "course.json").read_text()
    (tmp_path / "course.json").write_text(text)
    done = grade(tmp_path, "new", "problem", "rope", "-a", "the-modern-block")
    assert done.returncode == 0, done.stderr
    after = (tmp_path / "course.json").read_text()
    last = text.index("\n", text.index('"name": "model_params"'))  # the assignment's last problem
    line = after[last + 2 :].split("\n", 1)[0]
    assert after == text[:last] + ",\n" + line + text[last:]
    assert json.loads(line.strip()) == {
        "name": "rope",
        "module": "rope",
        "functions": ["rope"],
        "points": 10,
        "public": "tests/the-modern-block/public/test_rope.py",
        "hidden": "tests/the-modern-block/hidden/test_rope.py",
    }
    assert (tmp_path / "tests/the-modern-block/hidden/test_rope.py").is_file()
    assert (tmp_path / "examples/the-modern-block/alan_axis0/rope.py").is_file()
    assert "add them to solutions/the-modern-block/mistakes.py" in done.stdout


def test_the_templates_ship_with_the_package():
    from grader.commands.new import TEMPLATES

    globs = [g for g in _package_data() if g.startswith("templates")]
    assert globs and all(p.suffix == ".tmpl" for p in TEMPLATES.iterdir() if p.is_file())


def _package_data() -> list[str]:
    import tomllib

    return tomllib.loads((PROJECT / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-data"
    ]["*"]


def test_grade_validate_says_why_a_hidden_test_fails_the_reference(tmp_path):
    """The author's hidden suite: its failure on the reference is said in full (a student never
    sees it), as a public test's is."""
    assert grade(tmp_path, "new", "assignment", "a").returncode == 0
    hidden = tmp_path / "tests" / "a" / "hidden" / "test_a.py"
    hidden.write_text(
        hidden.read_text().replace(
            'reference.a(x), what="a of a 4×6', 'reference.a(x)[:2], what="a of a 4×6'
        )
    )
    valid = grade(tmp_path, "validate")
    assert valid.returncode == 1
    said = "test_a_larger_input: a of a 4×6 input: wrong shape: expected (2, 6)\nyours: shape (4,"
    assert said in valid.stderr


@pytest.mark.parametrize("folder", ["exercises", "solutions"])
def test_a_module_that_does_not_compile_fails_validate_and_release_in_one_line(tmp_path, folder):
    """A stub (or solution) with a syntax error: validate says so (file:line) and fails; release
    refuses in one line and writes nothing.

    Without the defence (release.py `syntax_errors`), validate says the course is valid and release
    writes the release, then dies in solution_cell.weave with a traceback."""
    assert grade(tmp_path, "new", "assignment", "softmax").returncode == 0
    module = tmp_path / folder / "softmax" / "softmax.py"
    lines = len(module.read_text().splitlines())
    module.write_text(module.read_text() + "def helper(:\n")
    what = {"exercises": "stub", "solutions": "solution"}[folder]
    said = f"{folder}/softmax/softmax.py:{lines + 1}: the {what} does not compile"
    valid = grade(tmp_path, "validate", "-a", "softmax")
    assert valid.returncode == 1 and "course is NOT valid" in valid.stdout, valid.stdout
    assert said in valid.stderr, valid.stderr
    refused = grade(tmp_path, "release", "-a", "softmax", "--out", "X", "--nbgrader-dir", "nb")
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1 and said in refused.stderr
    assert not (tmp_path / "X").exists() and not (tmp_path / "nb").exists()


def test_grade_release_says_which_test_and_call_the_reference_cannot_make(tmp_path):
    """Feedback data: a diagnose= call the reference raises on is one line, not a traceback."""
    assert grade(tmp_path, "new", "assignment", "a").returncode == 0
    assert grade(tmp_path, "release", "--out", "release", "--nbgrader-dir", "nb").returncode == 0
    public = tmp_path / "tests" / "a" / "public" / "test_a.py"
    suite = public.read_text()
    public.write_text(suite.replace("diagnose=mistakes.a(X)", "diagnose=mistakes.a(X, 7)"))
    refused = grade(tmp_path, "release", "--out", "release", "--nbgrader-dir", "nb")
    assert refused.returncode == 2
    assert refused.stderr.strip().splitlines() == [
        "Error: tests/a/public/test_a.py::test_two_rows: diagnose=mistakes.a(a (2, 3) float64 "
        "array, 7) asks about a call the reference cannot make: a() raised TypeError: a() takes 1 "
        "positional argument but 2 were given (give it the arguments of the student's call)"
    ]


def test_grade_release_says_which_known_mistakes_no_public_test_can_name(tmp_path):
    """A mistake whose output is the reference's on every public test's inputs (nll without T, on
    T = 1): the author is told, not left to find grade check silent."""
    assert grade(tmp_path, "new", "assignment", "a").returncode == 0
    catalogue = tmp_path / "solutions" / "a" / "mistakes.py"
    catalogue.write_text(catalogue.read_text().replace("axis=0", "axis=-1"))  # now the reference
    done = grade(tmp_path, "release", "--out", "release", "--nbgrader-dir", "nb")
    assert done.returncode == 0, done.stderr
    assert (
        "no public test's inputs tell a.axis0 from the reference (the same output there): "
        "grade check can never name them" in done.stdout
    )


@pytest.mark.parametrize(
    "name, said",
    [
        ("random", "would hide Python's or the grader's own"),
        ("numpy", "would hide"),
        ("2d", "must be a Python name"),
        ("class", "must be a Python name"),
    ],
)
def test_a_problem_named_as_a_module_it_would_hide_is_refused_in_one_line(tmp_path, name, said):
    refused = grade(tmp_path, "new", "assignment", "a", "--problem", name)
    assert refused.returncode == 2 and said in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1 and not any(tmp_path.iterdir())
