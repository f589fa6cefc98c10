"""`grade gradescope-zip`: setup.sh and run_autograder at the zip's root, and run_autograder grades a submission
with the hidden suites inside Gradescope's /autograder layout (here a temporary folder standing in for it)."""
from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import zipfile

import pytest
from conftest import PROJECT
from test_cli import grade

from grader.signature import load_key


@pytest.fixture(scope="module")
def autograder(tmp_path_factory):
    root = tmp_path_factory.mktemp("gradescope")
    load_key(PROJECT / "course.json", create=True)       # the instructor's key is there, as after any autograde
    result = grade("gradescope-zip", "--out", root / "autograder.zip", "--course", PROJECT / "course.json")
    assert result.exit_code == 0, result.output
    return root / "autograder.zip"


def test_the_zip_has_setup_and_run_autograder_at_its_root(autograder):
    with zipfile.ZipFile(autograder) as zf:
        infos = {i.filename: i for i in zf.infolist()}
    for script in ("setup.sh", "run_autograder"):
        assert script in infos                                            # at the root, not in a folder
        assert (infos[script].external_attr >> 16) & stat.S_IXUSR
    assert "course/course.json" in infos and "course/tests/hidden/test_gelu.py" in infos
    assert "course/solutions/gelu.py" in infos and "grader/runner.py" in infos and "requirements.txt" in infos
    assert not [n for n in infos if "__pycache__" in n]


def test_the_grader_key_is_not_in_the_zip(autograder):
    key = load_key(PROJECT / "course.json")
    with zipfile.ZipFile(autograder) as zf:
        assert not [n for n in zf.namelist() if n.endswith(".grade-key")]
        for name in zf.namelist():
            data = zf.read(name)
            assert key not in data and key.hex().encode() not in data, name


def run_autograder(autograder, root, submission_files: dict):
    """Unpack the zip as Gradescope does and run run_autograder with this environment's Python."""
    with zipfile.ZipFile(autograder) as zf:
        zf.extractall(root / "source")
    for script in ("setup.sh", "run_autograder"):
        os.chmod(root / "source" / script, 0o755)
        assert subprocess.run(["bash", "-n", str(root / "source" / script)]).returncode == 0
    (root / "submission").mkdir()
    for name, source in submission_files.items():
        shutil.copy(source, root / "submission" / name)
    env = {**os.environ, "AUTOGRADER_ROOT": str(root), "GRADE_PYTHON": sys.executable}
    env.pop("PYTHONPATH", None)
    proc = subprocess.run([str(root / "source" / "run_autograder")], env=env, capture_output=True, text=True,
                          timeout=300)
    return proc, root / "results" / "results.json"


def test_run_autograder_grades_with_the_hidden_suites_in_the_autograder_layout(autograder, tmp_path):
    grace = PROJECT / "examples" / "submissions" / "grace_partial"
    proc, results_path = run_autograder(autograder, tmp_path / "autograder",
                                        {p.name: p for p in grace.glob("*.py")})
    assert results_path.is_file(), proc.stdout + proc.stderr
    results = json.loads(results_path.read_text())
    expected = grade("autograde", grace.parent, "--out", tmp_path / "scores")   # the same code, graded here
    assert expected.exit_code == 0
    assert results["score"] == json.loads((tmp_path / "scores" / "grace_partial.json").read_text())["score"] == 35
    hidden = [t for t in results["tests"] if t["visibility"] == "after_published"]
    assert hidden and all(t["status"] in ("passed", "failed") for t in results["tests"])


def test_run_autograder_always_leaves_a_results_json(autograder, tmp_path):
    root = tmp_path / "autograder"
    with zipfile.ZipFile(autograder) as zf:
        zf.extractall(root / "source")
    (root / "source" / "course" / "course.json").write_text("{broken")
    (root / "submission").mkdir()
    env = {**os.environ, "AUTOGRADER_ROOT": str(root), "GRADE_PYTHON": sys.executable}
    subprocess.run(["bash", str(root / "source" / "run_autograder")], env=env, capture_output=True, timeout=300)
    results = json.loads((root / "results" / "results.json").read_text())
    assert results["score"] == 0 and "could not grade" in results["output"]
