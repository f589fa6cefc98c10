"""The real nbgrader on `grade release`'s source notebook: generate_assignment gives students stubs
and no hidden tests, and nbgrader autograde (the notebook) gives the same points as grade autograde
(the code).

About 20 s: nbgrader costs ~6 s per command plus ~3 s per notebook, so three students only.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from conftest import MAX_SCORE, MODULES, PROJECT, REFERENCE, THE_BLOCK, course_copy, notebook_code

# Every `timeout=` here (subprocesses, the notebook client's per cell) is a backstop against a hang,
# not a measurement: the slowest call takes 10 s on a quiet machine (nbgrader autograde), 60x under
# its 600 s.
from test_cli import grade
from test_release import hidden_texts, solution_bodies

pytestmark = pytest.mark.slow
ASSIGNMENT = "the-block"
STUDENTS = ["ada_correct", "grace_partial", "kathy_erf_gelu"]  # correct, partial, faulty


def nbgrader(course_dir: Path, *args: str) -> subprocess.CompletedProcess:
    """The real nbgrader command of this Python's environment (it calls alembic, so its bin goes on
    PATH)."""
    bin_dir = Path(sys.executable).parent
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    return subprocess.run(
        [str(bin_dir / "nbgrader"), *args],
        cwd=course_dir,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.fixture(scope="module")
def course_dir(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("nbgrader")
    result = grade(
        "release",
        "--out",
        root / "release",
        "--nbgrader-dir",
        root / "course",
        "--course",
        PROJECT / "course.json",
        "-a",
        THE_BLOCK,
    )
    assert result.exit_code == 0, result.output
    generated = nbgrader(root / "course", "generate_assignment", ASSIGNMENT, "--force")
    assert generated.returncode == 0, generated.stdout + generated.stderr
    return root / "course"


def released_notebook(course_dir: Path) -> nbformat.NotebookNode:
    return nbformat.read(course_dir / "release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", as_version=4)


def test_the_released_notebook_has_stubs_and_no_hidden_tests_or_solutions(course_dir):
    nb = released_notebook(course_dir)
    text = "\n".join(c.source for c in nb.cells)
    solutions = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("solution")]
    tests = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade")]
    assert len(solutions) == len(tests) == len(MODULES)
    for cell in solutions:
        assert "raise NotImplementedError()" in cell.source and "BEGIN SOLUTION" not in cell.source
    for cell in tests:
        assert "points(" in cell.source and cell.metadata["editable"] is False
    assert "HIDDEN TESTS" not in text and str(PROJECT) not in text
    for lines in solution_bodies().values():
        assert not [line for line in lines if line in text]
    assert not [t for t in hidden_texts() if t in text]
    released = {
        str(p.relative_to(course_dir / "release" / ASSIGNMENT))
        for p in (course_dir / "release" / ASSIGNMENT).rglob("*")
        if p.is_file()
    }
    public = {
        f"tests/public/{p.name}" for p in (PROJECT / "tests" / "the-block" / "public").glob("*.py")
    }
    # The feedback data the student course.json names (mistakes.json, trace.py and trace.json).
    feedback = set(
        json.loads((course_dir / "release" / ASSIGNMENT / "course.json").read_text())[
            "feedback"
        ].values()
    )
    assert feedback >= {"tests/public/mistakes.json", "tests/public/trace.json"}
    assert (
        released == {f"{ASSIGNMENT}.ipynb", "course.json"} | public | feedback
    )  # toy.py too, nothing hidden


def student_notebook(course_dir: Path, student: str) -> nbformat.NotebookNode:
    """The released notebook with the student's modules pasted into the solution cells."""
    nb = released_notebook(course_dir)
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id", "")
        if grade_id.endswith("_solution"):
            cell.source = notebook_code(student, grade_id.removesuffix("_solution"))
    return nb


def test_nbgrader_autograde_and_grade_autograde_give_the_same_points(course_dir, tmp_path):
    for student in STUDENTS:
        folder = course_dir / "submitted" / student / ASSIGNMENT
        folder.mkdir(parents=True)
        nbformat.write(student_notebook(course_dir, student), folder / f"{ASSIGNMENT}.ipynb")
    result = nbgrader(course_dir, "autograde", ASSIGNMENT)
    assert result.returncode == 0, result.stdout + result.stderr

    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course_dir / 'gradebook.db'}") as gradebook:
        by_nbgrader = {
            student: {
                g.name.removesuffix("_tests"): g.score
                for g in gradebook.find_submission_notebook(ASSIGNMENT, ASSIGNMENT, student).grades
            }
            for student in STUDENTS
        }

    code = tmp_path / "code"
    for student in STUDENTS:
        shutil.copytree(PROJECT / "examples" / "the-block" / student, code / student)
        for module in MODULES:  # a problem added since the example was written: the reference's
            if not (code / student / f"{module}.py").is_file():
                shutil.copy(REFERENCE / f"{module}.py", code / student)
    assert (
        grade(
            "autograde",
            "--course",
            course_copy(),
            "-a",
            THE_BLOCK,
            code,
            "--out",
            tmp_path / "from_code",
        ).exit_code
        == 0
    )
    assert (
        grade(
            "autograde",
            "--nbgrader",
            course_dir,
            "-a",
            ASSIGNMENT,
            "--out",
            tmp_path / "from_notebooks",
            "--course",
            course_copy(),
        ).exit_code
        == 0
    )
    for student in STUDENTS:
        for source in ("from_code", "from_notebooks"):
            doc = json.loads((tmp_path / source / f"{student}.json").read_text())
            assert {p["name"]: p["score"] for p in doc["problems"]} == by_nbgrader[student], (
                student,
                source,
            )
    totals = {student: sum(scores.values()) for student, scores in by_nbgrader.items()}
    assert totals["ada_correct"] == MAX_SCORE and 0 < totals["grace_partial"] < MAX_SCORE
    assert 0 < totals["kathy_erf_gelu"] < MAX_SCORE


def outputs_text(cell) -> str:
    """What a cell showed: its streams and the plain text of its displays (rich shows a table as
    one)."""
    return "\n".join(
        o.get("text", "") if o.output_type == "stream" else o.get("data", {}).get("text/plain", "")
        for o in cell.outputs
    )


def test_check_from_a_real_kernel_on_the_released_notebook(course_dir, tmp_path):
    """A student's released notebook, run cell by cell in a real kernel (nbclient): check() and
    %grade check grade the saved notebook with grade check's tests, diagnoses and verdict; code the
    kernel ran but the file lacks is named, never graded."""
    from nbclient import NotebookClient

    folder = shutil.copytree(course_dir / "release" / ASSIGNMENT, tmp_path / "student")
    nb = released_notebook(course_dir)
    first = nb.cells[0].source  # how to install the grader into this kernel
    assert "%pip install" in first and "from grader import check" in first and "as saved" in first
    problems = json.loads((folder / "course.json").read_text())["problems"]
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id", "")
        for p in problems:
            if grade_id == f"{p['name']}_solution":  # a correct notebook but for a ddof=1 layernorm
                cell.source = notebook_code(
                    "alan_ddof1" if p["name"] == "layernorm" else "ada_correct", p["module"]
                )
    v4 = nbformat.v4
    nb.cells += [
        v4.new_code_cell(
            "from grader import check\nresult = check()\nprint('verdict:', bool(result), result.ok)"
        ),
        v4.new_code_cell("%grade check gelu"),
        v4.new_code_cell(
            "print('gelu verdict:', bool(check('gelu', quiet=True)))\n"
            "get_ipython().run_cell('def gelu(x):\\n    return x', store_history=True)\n"
            "again = check('gelu', quiet=True)\nprint('again:', again.ok, again.notes)"
        ),
    ]
    nbformat.write(nb, folder / f"{ASSIGNMENT}.ipynb")
    NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(folder)}}
    ).execute()
    whole, magic, unsaved = (outputs_text(c) for c in nb.cells[-3:])
    assert "verdict: False False" in whole, whole
    assert "diagnosis: this matches LayerNorm with the sample variance (ddof=1" in whole
    assert "grade check ran the public tests only" in " ".join(whole.split())
    assert "layernorm" in whole and "✗ gelu" not in whole
    assert (
        "gelu" in magic
        and "5/5" in magic
        and "✗" not in magic
        and "of its 15 points" in " ".join(magic.split())
    )
    assert "gelu verdict: True" in unsaved  # what the saved file defines passes
    assert (
        "again: True" in unsaved
        and "gelu.py: what this kernel last ran differs from the saved" in unsaved
    )


def test_the_magic_without_a_notebook_after_its_flag_prints_the_usage(capsys):
    from grader.commands.jupyter import _grade_magic

    assert _grade_magic("check layernorm --notebook") is None
    assert capsys.readouterr().out.startswith("usage: %grade check")
