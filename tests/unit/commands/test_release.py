"""`grade release`: what students get holds no solution and no hidden test, and works with `grade
check`; the nbgrader source notebook carries the solutions and tests nbgrader needs, worth the
course's points."""

from __future__ import annotations

import ast
import json
import os
import shlex
import shutil
import stat
import subprocess
import sys
import textwrap
import zipfile
from pathlib import PurePosixPath

import nbformat
import pytest
from conftest import PROJECT, THE_BLOCK, course_copy

# Every subprocess's `timeout=` here is a backstop against a hang, not a measurement: the slowest
# call takes 15 s on a quiet machine (pip installing the release into a fresh venv), 40x under its
# 600 or 900 s.
from mutants import MUTANTS, faulty
from test_cli import grade

from grader.course.manifest import load
from grader.grading.signature import load_key


@pytest.fixture(scope="module")
def released(tmp_path_factory):
    root = tmp_path_factory.mktemp("release")
    load_key(
        PROJECT / "course.json", create=True
    )  # the instructor's key is there, as after any autograde
    result = grade(
        "release",
        "--out",
        root / "release",
        "--nbgrader-dir",
        root / "nbgrader",
        "--course",
        PROJECT / "course.json",
        "-a",
        THE_BLOCK,
    )
    assert result.exit_code == 0, result.output
    return root


def json_strings(value) -> list[str]:
    """Every string in a JSON value, keys too, decoded (a solution line in a JSON file is
    escaped)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in [k, *json_strings(v)]]
    if isinstance(value, list):
        return [s for v in value for s in json_strings(v)]
    return []


def release_texts(folder) -> dict[str, str]:
    """Every file's text; a JSON file's (the feedback data: mistakes.json, trace.json ...) with its
    decoded strings after it."""
    texts = {}
    for p in folder.rglob("*"):
        if p.is_file():
            text = p.read_text(encoding="utf-8", errors="replace")
            if p.suffix == ".json":
                text += "\n" + "\n".join(json_strings(json.loads(text)))
            texts[str(p.relative_to(folder))] = text
    return texts


def public_material() -> str:
    """What students may see anyway: the stubs and the public suites, as the instructor has them."""
    files = list((PROJECT / "exercises" / "the-block").glob("*.py")) + list(
        (PROJECT / "tests" / "the-block" / "public").glob("*.py")
    )
    return "\n".join(p.read_text() for p in files)


def solution_bodies() -> dict[str, list[str]]:
    """Every function of the reference (helpers and nested ones too) -> its body's distinctive
    lines."""
    bodies = {}
    public = {line.strip() for line in public_material().splitlines()}
    modules = set(load(PROJECT / "course.json", THE_BLOCK).modules)
    for path in sorted(
        p for p in (PROJECT / "solutions" / "the-block").glob("*.py") if p.stem in modules
    ):
        source = path.read_text()
        lines = source.splitlines()
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.FunctionDef):
                body = node.body[1:] if ast.get_docstring(node) else node.body
                text = lines[body[0].lineno - 1 : node.end_lineno]
                bodies[f"{path.name}:{node.name}"] = [
                    line.strip()
                    for line in text
                    if len(line.strip()) > 12 and line.strip() not in public
                ]
    return bodies


def hidden_texts() -> list[str]:
    """Every hidden test's name and docstring, and the hidden suites' module docstrings."""
    texts = []
    for path in (PROJECT / "tests" / "the-block" / "hidden").glob("test_*.py"):
        tree = ast.parse(path.read_text())
        texts += (ast.get_docstring(tree) or "").splitlines()[:1]
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
                texts += [node.name, *(ast.get_docstring(node) or "").splitlines()[:1]]
    return texts


def test_the_release_has_stubs_public_suites_a_student_course_and_readme(released):
    release = released / "release"
    for stub in (PROJECT / "exercises" / "the-block").glob("*.py"):
        assert (release / "exercises" / stub.name).read_text() == stub.read_text()
    for suite in (PROJECT / "tests" / "the-block" / "public").glob("*.py"):
        assert (release / "tests" / "public" / suite.name).read_text() == suite.read_text()
    assert (release / "tests" / "public" / "toy.py").is_file()
    assert not (release / "solutions").exists() and not (release / "tests" / "hidden").exists()
    manifest = json.loads((release / "course.json").read_text())
    assert "solutions" not in manifest and "lms" not in manifest
    assert all("hidden" not in p for p in manifest["problems"])
    student_course = load(release / "course.json")
    assert student_course.solutions is None
    assert student_course.problem_names == load(PROJECT / "course.json", "the-block").problem_names
    readme = (release / "README.md").read_text()
    assert "grade check" in readme and "pip install ." in readme


def test_no_solution_body_and_no_hidden_test_is_in_the_release(released):
    texts = release_texts(released / "release")
    feedback = json.loads((released / "release" / "course.json").read_text())["feedback"]
    assert {"mistakes_data", "trace", "trace_data"} <= set(feedback)  # searched too
    assert "mistakes" not in feedback and not (released / "release" / "solutions").exists()
    assert all(texts[str(PurePosixPath(path))] for path in feedback.values())
    everything = "\n".join(texts.values())
    bodies = solution_bodies()
    assert len(bodies) >= 10 and all(bodies.values())  # the search has something to find
    for function, lines in bodies.items():
        for line in lines:
            assert line not in everything, f"{function}: {line!r} is in the release"
    for text in hidden_texts():
        assert text not in everything, f"hidden {text!r} is in the release"


def test_the_grader_key_is_not_in_the_release(released):
    key = load_key(PROJECT / "course.json")
    for folder in (released / "release", released / "nbgrader"):
        for path in folder.rglob("*"):
            assert path.name != ".grade-key", path
            assert path.suffix != ".csv", (
                path
            )  # nor the instructor's overrides (course.json names one)
            if path.name == "course.json":
                assert "overrides" not in json.loads(path.read_text()), path
            if path.is_file():
                data = path.read_bytes()
                assert key not in data and key.hex().encode() not in data, path


def test_grade_check_works_in_the_release(released, tmp_path):
    release = tmp_path / "release"
    shutil.copytree(released / "release", release)
    stubs = grade("check", cwd=release)
    assert stubs.exit_code == 1 and "not implemented yet" in stubs.output
    for reference in (PROJECT / "solutions" / "the-block").glob("*.py"):
        shutil.copy(reference, release / "exercises" / reference.name)
    solved = grade("check", cwd=release)
    assert solved.exit_code == 0, solved.output


def test_a_checks_worker_holds_nothing_of_the_grader(released, tmp_path):
    """grade check in a release forks its worker from the grader's process (Linux): the student's
    code must find there what autograde's worker holds, none of the grader's own modules, and import
    what it may."""
    release = tmp_path / "release"
    shutil.copytree(released / "release", release)
    for reference in (PROJECT / "solutions" / "the-block").glob("*.py"):
        shutil.copy(reference, release / "exercises" / reference.name)
    gelu = release / "exercises" / "gelu.py"
    gelu.write_text(
        "import sys\n"
        "GRADERS = {'grader', 'pytest', '_pytest', 'pluggy', 'click', 'rich', 'jsonschema'}\n"
        "SEEN = [n for n in sys.modules if n.partition('.')[0] in GRADERS]\n"
        "try:\n    import pytest\nexcept ImportError:\n    pass\nelse:\n    SEEN.append('import')\n"
        + gelu.read_text().replace("    return ", "    if SEEN:\n        return x\n    return ", 1)
    )
    solved = grade("check", "gelu", cwd=release)
    assert solved.exit_code == 0, solved.output


def test_grade_check_in_the_release_allows_what_the_standard_library_imports(released, tmp_path):
    """A correct layernorm.py that checks itself with numpy.testing (which imports sysconfig and
    its `_sysconfigdata_*` module) gets full marks; one that imports requests is refused.

    Without the defence (child/student.py `_stdlib_folders`): "importing layernorm.py failed:
    _sysconfigdata__linux_x86_64-linux-gnu is not available in this course", layernorm 0/20."""
    release = tmp_path / "release"
    shutil.copytree(released / "release", release)
    layernorm = release / "exercises" / "layernorm.py"
    reference = (PROJECT / "solutions" / "the-block" / "layernorm.py").read_text()
    layernorm.write_text(
        reference + "\nnp.testing.assert_allclose("
        "layernorm(np.array([[1.0, 2.0, 3.0]])).mean(), 0.0, atol=1e-7)\n"
    )
    checked = grade("check", "layernorm", "--json", tmp_path / "me.json", cwd=release)
    assert checked.exit_code == 0, checked.output
    doc = json.loads((tmp_path / "me.json").read_text())
    assert doc["score"] == doc["max_score"] > 0, doc
    layernorm.write_text("import requests\n" + reference)
    refused = grade("check", "layernorm", cwd=release)
    assert refused.exit_code == 1, refused.output
    assert "requests is not available in this course" in refused.output, refused.output


def test_grade_trace_works_in_the_release(released, tmp_path):
    """From the release alone (no solutions): a layernorm and an mlp fault each named at its own
    step, and --case random, which sees a forgotten W_o the toy cannot."""
    release = tmp_path / "release"
    shutil.copytree(released / "release", release)
    mine = faulty(
        tmp_path,
        "me",
        {
            "layernorm": MUTANTS["layernorm.ddof1"][1],
            "block": MUTANTS["mlp.no_gelu"][1],
            "attention": [("np.concatenate(out, axis=-1) @ W_o", "np.concatenate(out, axis=-1)")],
        },
    )
    for module in mine.glob("*.py"):
        shutil.copy(module, release / "exercises" / module.name)
    toy = grade("trace", cwd=release)
    text = " ".join(toy.output.split())
    assert toy.exit_code == 1, toy.output
    assert "✗ layernorm() differs at steps 2 and 6; its input was the reference's" in text
    assert "✗ mlp() differs at step 8; its input was the reference's" in text
    assert "✓ attention()" in text and "this example cannot check W_o" in text
    random = grade("trace", "--case", "random", cwd=release)
    assert random.exit_code == 1, random.output
    assert "✗ attention() differs at step 5; its input was the reference's" in " ".join(
        random.output.split()
    )


def test_a_rerun_replaces_the_release_but_never_a_folder_it_did_not_write(released, tmp_path):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me")
    result = grade(
        "release",
        "--out",
        mine,
        "--nbgrader-dir",
        tmp_path / "nb",
        "--course",
        PROJECT / "course.json",
        "-a",
        THE_BLOCK,
    )
    assert result.exit_code == 2 and "was not written by grade release" in result.output
    assert (mine / "notes.txt").read_text() == "keep me"
    again = tmp_path / "again"
    for _ in range(2):
        result = grade(
            "release",
            "--out",
            again,
            "--nbgrader-dir",
            tmp_path / "nb",
            "--course",
            PROJECT / "course.json",
            "-a",
            THE_BLOCK,
        )
        assert result.exit_code == 0, result.output


@pytest.mark.skipif(os.name != "posix", reason="POSIX modes")
def test_the_release_is_readable_by_all_who_can_read_its_parent_whatever_the_umask(tmp_path):
    """Copied with `cp -r` to a lab server's shared folder, a release written under umask 077 (and
    mkdtemp's 0700) left other students with pip's "Directory ... is not installable"."""
    old = os.umask(0o077)
    try:
        result = grade(
            "release",
            "--out",
            tmp_path / "release",
            "--nbgrader-dir",
            tmp_path / "nb",
            "--course",
            PROJECT / "course.json",
            "-a",
            THE_BLOCK,
        )
    finally:
        os.umask(old)
    assert result.exit_code == 0, result.output
    paths = [tmp_path / "release", *(tmp_path / "release").rglob("*")]
    assert {stat.S_IMODE(p.stat().st_mode) for p in paths if p.is_dir()} == {0o755}
    assert {stat.S_IMODE(p.stat().st_mode) for p in paths if p.is_file()} == {0o644}


def source_notebook(released):
    return nbformat.read(
        released / "nbgrader" / "source" / "the-block" / "the-block.ipynb", as_version=4
    )


def test_the_source_notebook_has_text_solution_and_locked_test_cells_worth_the_course_points(
    released,
):
    nb = source_notebook(released)
    nbformat.validate(nb)
    course = load(PROJECT / "course.json", "the-block")
    meta = {c.metadata["nbgrader"]["grade_id"]: c for c in nb.cells if "nbgrader" in c.metadata}
    assert len(meta) == 2 * len(course.problems)
    for problem in course.problems:
        solution, tests = meta[f"{problem.name}_solution"], meta[f"{problem.name}_tests"]
        assert (
            solution.metadata["nbgrader"].items()
            >= {"solution": True, "grade": False, "locked": False}.items()
        )
        assert (
            tests.metadata["nbgrader"].items()
            >= {
                "grade": True,
                "solution": False,
                "locked": True,
                "points": problem.points,
                "schema_version": 3,
            }.items()
        )
        assert solution.source.count("### BEGIN SOLUTION") == len(problem.functions)
        assert solution.source.count("### END SOLUTION") == len(problem.functions)
        public, _, rest = tests.source.partition("### BEGIN HIDDEN TESTS")
        hidden, _, after = rest.partition("### END HIDDEN TESTS")
        assert str(PROJECT / "course.json") in hidden and str(PROJECT) not in public + after
        assert f"points({problem.name!r}, hidden_tests)" in after
        text = nb.cells[nb.cells.index(solution) - 1]
        assert text.cell_type == "markdown" and problem.name in text.source
    assert sum(c.metadata["nbgrader"].get("points", 0) for c in meta.values()) == course.max_score


def test_the_source_notebooks_code_is_the_reference(released, tmp_path):
    """Its solution cells, read back as a submission, score full marks: the weaving lost nothing."""
    subs = tmp_path / "subs"
    subs.mkdir()
    shutil.copy(
        released / "nbgrader" / "source" / "the-block" / "the-block.ipynb", subs / "reference.ipynb"
    )
    result = grade(
        "autograde", subs, "--out", tmp_path / "out", "--course", course_copy(), "-a", THE_BLOCK
    )
    assert result.exit_code == 0, result.output
    doc = json.loads((tmp_path / "out" / "reference.json").read_text())
    assert doc["score"] == doc["max_score"] == load(PROJECT / "course.json", THE_BLOCK).max_score, (
        textwrap.shorten(str(doc.get("submission_notes")), 300)
    )


def readme_block(readme: str, heading: str, language: str = "sh") -> list[str]:
    """The commands of the first ```language block under ``heading``, without comments."""
    section = readme[readme.index(heading) :]
    block = section[section.index(f"```{language}\n") + len(language) + 4 :]
    return [
        line.split("#")[0].strip()
        for line in block[: block.index("```")].splitlines()
        if line.strip()
    ]


def as_a_student(line: str) -> str:
    """A student's ddof=1 LayerNorm: the reference's variance line as a student writes it."""
    return (
        "    var = np.var(x, axis=-1, keepdims=True, ddof=1)  # unbiased\n"
        if "x.var(" in line
        else line
    )


def test_the_readme_says_how_to_hand_in_and_its_commands_work_in_the_release(released, tmp_path):
    """The README's hand-in commands, run in the release as a student would (the stubs filled with
    the reference)."""
    release = shutil.copytree(released / "release", tmp_path / "release")
    readme = (release / "README.md").read_text()
    commands = readme_block(readme, "## Hand in")
    assert commands == [".venv/bin/grade pack", ".venv/bin/grade check --path hand-in.zip"]
    assert ".venv\\Scripts\\grade" in readme[readme.index("## Hand in") :]
    for reference in (PROJECT / "solutions" / "the-block").glob("*.py"):
        if (release / "exercises" / reference.name).exists():
            shutil.copy(reference, release / "exercises" / reference.name)
    for command in commands:
        proc = subprocess.run(
            [sys.executable, "-m", "grader", *shlex.split(command)[1:]],
            cwd=release,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert proc.returncode == 0, f"{command}: {proc.stdout[-2000:]}{proc.stderr[-2000:]}"
    assert sorted(zipfile.ZipFile(release / "hand-in.zip").namelist()) == sorted(
        {f"{p.module}.py" for p in load(PROJECT / "course.json", "the-block").problems}
    )


@pytest.mark.slow
def test_a_student_in_a_fresh_venv_made_as_the_readme_says_gets_the_diagnosis_and_the_trace(
    released, tmp_path
):
    """From where the student stands: the release alone, a new venv as its README says (pip installs
    the grader from the release, its dependencies from the package index), the student's code in
    exercises/."""
    release = shutil.copytree(released / "release", tmp_path / "release")
    env = {
        k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")
    }
    setup = readme_block((release / "README.md").read_text(), "## Set up")
    assert setup == ["python3 -m venv .venv", ".venv/bin/pip install ."]
    for command in setup:
        proc = subprocess.run(
            shlex.split(command), cwd=release, env=env, capture_output=True, text=True, timeout=900
        )
        assert proc.returncode == 0, f"{command}: {proc.stdout[-2000:]}{proc.stderr[-2000:]}"
    grade_exe = release / ".venv" / "bin" / "grade"
    installed = subprocess.run(
        [release / ".venv" / "bin" / "python", "-c", "import grader; print(grader.__file__)"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert str(release / ".venv") in installed  # the release's grader, not this checkout's
    for reference in (PROJECT / "solutions" / "the-block").glob("*.py"):
        shutil.copy(reference, release / "exercises" / reference.name)
    layernorm = release / "exercises" / "layernorm.py"
    lines = layernorm.read_text().splitlines(keepends=True)
    layernorm.write_text("".join(as_a_student(line) for line in lines))
    assert "ddof=1" in layernorm.read_text()
    checked = subprocess.run(
        [grade_exe, "check"], cwd=release, env=env, capture_output=True, text=True, timeout=600
    )
    assert checked.returncode == 1, checked.stdout + checked.stderr
    assert "diagnosis: this matches LayerNorm with the sample variance (ddof=1" in checked.stdout, (
        checked.stdout
    )
    assert "grade check ran the public tests only" in " ".join(checked.stdout.split())
    page = subprocess.run(
        [grade_exe, "check", "--html", tmp_path / "page.html"],
        cwd=release,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )  # the templates ship with the grader
    assert page.returncode == 1, page.stdout + page.stderr
    assert 'id="score">Score: <strong>' in (tmp_path / "page.html").read_text()
    assert "sample variance (ddof=1" in (tmp_path / "page.html").read_text()
    traced = subprocess.run(
        [grade_exe, "trace"], cwd=release, env=env, capture_output=True, text=True, timeout=600
    )
    assert traced.returncode == 1, traced.stdout + traced.stderr
    summary = " ".join(traced.stdout.split())
    assert (
        "layernorm() differs at steps 2 and 6; its input was the reference's, so look at "
        "layernorm()" in summary
    )
    assert "Your own chain first differs at step 2, LayerNorm(x)" in summary
