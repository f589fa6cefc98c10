"""`grade autograde` on what instructors download: notebooks, zips, single .py files, an nbgrader
course.

The same code must get the same points whatever it arrives in, and a score file says what was
missing.
"""

from __future__ import annotations

import json
import zipfile

import nbformat
import pytest
from conftest import EXAMPLES, MODULES, PROJECT, THE_BLOCK, course_copy, notebook_code
from test_cli import grade


def notebook_of(student: str, *, drop: str = "", duplicate: str = "") -> nbformat.NotebookNode:
    """The student's modules as a notebook, one code cell per module (with chatter cells
    between)."""
    nb = nbformat.v4.new_notebook()
    nb.cells.append(nbformat.v4.new_markdown_cell("# My transformer block"))
    nb.cells.append(
        nbformat.v4.new_code_cell(
            "%matplotlib inline\n!pip install numpy\nimport matplotlib.pyplot as plt"
        )
    )
    for module in MODULES:
        if module == drop:
            continue
        code = notebook_code(student, module)
        nb.cells.append(nbformat.v4.new_code_cell(code))
        if module == duplicate:
            nb.cells.append(nbformat.v4.new_code_cell(code))
        nb.cells.append(nbformat.v4.new_code_cell("plt.plot([1, 2])\nprint('checked')"))
    return nb


def scores(out) -> dict:
    return {p.stem: json.loads(p.read_text()) for p in out.glob("*.json")}


def per_problem(doc: dict) -> dict:
    return {p["name"]: p["score"] for p in doc["problems"]}


@pytest.fixture(scope="module")
def reference_scores(tmp_path_factory):
    """The examples graded from their folders of modules."""
    out = tmp_path_factory.mktemp("folders")
    result = grade("autograde", EXAMPLES, "--out", out, "--course", course_copy(), "-a", THE_BLOCK)
    assert result.exit_code == 0, result.output
    return scores(out)


def test_notebook_zip_and_py_get_the_points_of_the_same_code_in_folders(tmp_path, reference_scores):
    subs = tmp_path / "subs"
    subs.mkdir()
    nbformat.write(notebook_of("ada_correct"), subs / "ada_correct.ipynb")
    with zipfile.ZipFile(subs / "grace_partial.zip", "w") as zf:  # an LMS download: a zipped folder
        for module in MODULES:
            zf.write(EXAMPLES / "grace_partial" / f"{module}.py", f"grace/{module}.py")
    (subs / "kathy_erf_gelu.py").write_text(
        "\n\n".join(notebook_code("kathy_erf_gelu", m) for m in MODULES)
    )
    (subs / "readme.txt").write_text("not a submission")
    out = tmp_path / "out"
    result = grade("autograde", subs, "--out", out, "--course", course_copy(), "-a", THE_BLOCK)
    assert result.exit_code == 0, result.output
    assert "readme.txt: left out" in result.output
    got = scores(out)
    assert sorted(got) == ["ada_correct", "grace_partial", "kathy_erf_gelu"]
    for student, doc in got.items():
        assert per_problem(doc) == per_problem(reference_scores[student]), student
    assert "graded the code cells of ada_correct.ipynb" in got["ada_correct"]["submission_notes"]
    assert any(
        "left out 2 IPython magic or shell lines" in n
        for n in got["ada_correct"]["submission_notes"]
    )


def test_a_renamed_notebook_with_a_deleted_and_a_duplicated_cell_grades_what_is_there(tmp_path):
    folder = tmp_path / "subs" / "ada"
    folder.mkdir(parents=True)
    nb = notebook_of("ada_correct", drop="gelu", duplicate="layernorm")
    for cell in nb.cells:  # cleared outputs
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    nbformat.write(nb, folder / "Copy of the-block (1).ipynb")
    out = tmp_path / "out"
    result = grade(
        "autograde", tmp_path / "subs", "--out", out, "--course", course_copy(), "-a", THE_BLOCK
    )
    assert result.exit_code == 0, result.output
    doc = scores(out)["ada"]
    got = per_problem(doc)
    assert (
        got["gelu"] == 0
        and got["layernorm"] == 20
        and got["attention"] == 25
        and got["params"] == 15
    )
    notes = doc["submission_notes"]
    assert "no code defines gelu() (module gelu)" in notes
    assert any(n.startswith("layernorm() is defined 2 times") for n in notes)
    assert "no code defines gelu()" in result.output  # the instructor sees it too


@pytest.fixture
def late_course(mini_course):
    data = json.loads(mini_course.read_text())
    data.update(
        assignment="ps1",
        due="2026-03-01T23:59:00+00:00",  # nbgrader's assignment: the course's
        late_policy={"percent_per_day": 25, "grace_minutes": 10},
    )
    mini_course.write_text(json.dumps(data))
    return mini_course


def mini_notebook(*sources: str) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(s) for s in sources]
    return nb


def test_an_nbgrader_course_is_graded_with_its_timestamps_and_late_policy(tmp_path, late_course):
    course_dir = tmp_path / "nbgrader"
    good = [
        "import numpy as np",
        "def double(x):\n    return 2 * x",
        "def twice(n):\n    return 2 * n",
    ]
    layouts = {
        "alice": (
            "ps1.ipynb",
            good,
            "2026-03-03 10:00:00.000000 Europe/Lisbon",
        ),  # 2 started days late
        "bob": (
            "ps1-Copy1.ipynb",
            good[:2],
            "2026-03-01 23:05:00.000000 UTC",
        ),  # on time; renamed; no twice
        "carol": ("ps1.ipynb", good, None),  # no timestamp.txt
        "dave": ("ps1.ipynb", good, "next tuesday"),
    }
    for student, (name, cells, stamp) in layouts.items():
        folder = course_dir / "submitted" / student / "ps1"
        folder.mkdir(parents=True)
        nbformat.write(mini_notebook(*cells), folder / name)
        if stamp:
            (folder / "timestamp.txt").write_text(stamp + "\n")
    (course_dir / "submitted" / "erin" / "ps0").mkdir(parents=True)  # another assignment only
    out = tmp_path / "out"
    result = grade("autograde", "--nbgrader", course_dir, "--out", out, "--course", late_course)
    assert result.exit_code == 0, result.output
    got = scores(out)
    assert sorted(got) == ["alice", "bob", "carol", "dave"]
    alice = got["alice"]
    assert alice["late"]["days_late"] == 2 and alice["late"]["raw_score"] == 4
    assert alice["late"]["penalty"] == 2 and alice["score"] == 2  # 2 x 25 % of 4 points
    assert got["bob"]["late"]["days_late"] == 0 and got["bob"]["score"] == 3
    assert (
        "no ps1.ipynb (renamed?): graded ps1-Copy1.ipynb instead" in got["bob"]["submission_notes"]
    )
    assert "no code defines twice() (module mathy)" in got["bob"]["submission_notes"]
    # no usable time is never on time silently: flagged, and course.json's missing_timestamp
    # (default refuse)
    assert (
        got["carol"]["late"]["timestamp"] == "missing"
        and got["carol"]["late"]["counted_as"] == "refuse"
    )
    assert got["carol"]["score"] == 4 and "no timestamp.txt" in " ".join(
        got["carol"]["submission_notes"]
    )
    assert got["dave"]["late"]["timestamp"] == "unreadable" and any(
        "timestamp.txt: not a submission time" in n for n in got["dave"]["submission_notes"]
    )


def test_autograde_needs_one_source(mini_course, tmp_path):
    r = grade("autograde", "--out", tmp_path / "o", "--course", mini_course)
    assert r.exit_code == 2 and "give SUBMISSIONS, or --nbgrader" in r.output
    r = grade("autograde", "--nbgrader", tmp_path, "--out", tmp_path / "o", "--course", mini_course)
    assert r.exit_code == 2 and "not an nbgrader course" in r.output


def test_a_parser_breaking_file_costs_only_its_student(tmp_path):
    """Code nested 100,000 deep makes Python's parser fail (RecursionError or MemoryError): that
    student gets an error, and collecting the others goes on; a long file is read in linear time."""
    import time

    from grader.course.manifest import load
    from grader.intake.collect import from_path

    course = load(PROJECT / "course.json", "the-block")
    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "deep.py").write_text("x = a" + ".b" * 100_000 + "\n")
    (subs / "long.py").write_text(
        "\n".join(f"a{i} = 1" for i in range(20_000)) + "\ndef gelu(x):\n    return x\n"
    )
    started = time.monotonic()
    found, _ = from_path(course, subs, tmp_path / "work")
    assert time.monotonic() - started < 60  # quiet: 1.7 s; 35x margin, a busy machine
    by_name = {s.student: s for s in found}
    assert by_name["deep"].error and not by_name["long"].error
    assert (by_name["long"].folder / "gelu.py").is_file()


def test_a_timestamp_inside_a_student_zip_is_not_trusted(tmp_path):
    import zipfile

    from grader.course.manifest import load
    from grader.intake.collect import from_path

    course = load(PROJECT / "course.json", "the-block")
    subs = tmp_path / "subs"
    subs.mkdir()
    with zipfile.ZipFile(subs / "eve.zip", "w") as z:
        z.writestr("timestamp.txt", "2000-01-01 00:00:00 UTC")
        z.writestr("gelu.py", "def gelu(x):\n    return x\n")
    found, _ = from_path(course, subs, tmp_path / "work")
    assert found[0].submitted_at is None
