"""`grade gradescope-zip`: setup.sh and run_autograder at the zip's root, and run_autograder grades
a submission with the hidden suites inside Gradescope's /autograder layout (here a temporary folder
standing in for it)."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import pytest
from conftest import PROJECT, THE_BLOCK, course_copy
from test_cli import grade

# Every subprocess's `timeout=` here is a backstop against a hang, not a measurement: the slowest
# call takes 10 s on a quiet machine (pip installing the autograder's requirements), 30x under its
# 300 or 600 s.
from grader.course.manifest import load
from grader.grading.signature import load_key


@pytest.fixture(scope="module")
def autograder(tmp_path_factory):
    root = tmp_path_factory.mktemp("gradescope")
    load_key(
        PROJECT / "course.json", create=True
    )  # the instructor's key is there, as after any autograde
    result = grade(
        "gradescope-zip",
        "--out",
        root / "autograder.zip",
        "--course",
        PROJECT / "course.json",
        "-a",
        THE_BLOCK,
    )
    assert result.exit_code == 0, result.output
    return root / "autograder.zip"


def test_the_zip_has_setup_and_run_autograder_at_its_root(autograder):
    with zipfile.ZipFile(autograder) as zf:
        infos = {i.filename: i for i in zf.infolist()}
    for script in ("setup.sh", "run_autograder"):
        assert script in infos  # at the root, not in a folder
        assert (infos[script].external_attr >> 16) & stat.S_IXUSR
    assert "course/course.json" in infos and "course/tests/the-block/hidden/test_gelu.py" in infos
    assert (
        "course/solutions/the-block/gelu.py" in infos
        and "grader/grading/plugin.py" in infos
        and "requirements.txt" in infos
    )
    assert not [n for n in infos if "__pycache__" in n]


def test_the_instructors_overrides_are_not_in_the_zip(autograder):
    """course.json names the overrides CSV (instructors only): the zip has neither the file nor the
    field, and its course.json loads with the same fingerprint, since where the overrides live is no
    part of grading."""
    import json

    from grader.course.manifest import load

    assert (
        load(PROJECT / "course.json", THE_BLOCK).overrides is not None
    )  # there is one to leave out
    with zipfile.ZipFile(autograder) as zf:
        assert not [n for n in zf.namelist() if n.endswith(".csv")]
        shipped = json.loads(zf.read("course/course.json"))
    assert "overrides" not in shipped and shipped["assignment"] == THE_BLOCK


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
    proc = subprocess.run(
        [str(root / "source" / "run_autograder")],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    return proc, root / "results" / "results.json"


def test_run_autograder_grades_with_the_hidden_suites_in_the_autograder_layout(
    autograder, tmp_path
):
    grace = PROJECT / "examples" / "the-block" / "grace_partial"
    proc, results_path = run_autograder(
        autograder, tmp_path / "autograder", {p.name: p for p in grace.glob("*.py")}
    )
    assert results_path.is_file(), proc.stdout + proc.stderr
    results = json.loads(results_path.read_text())
    expected = grade(
        "autograde",
        "--course",
        course_copy(),
        "-a",
        THE_BLOCK,
        grace.parent,  # the same code,
        "--out",
        tmp_path / "scores",
    )  # graded here
    assert expected.exit_code == 0
    assert (
        results["score"]
        == json.loads((tmp_path / "scores" / "grace_partial.json").read_text())["score"]
        == 35
    )
    hidden = [t for t in results["tests"] if t["visibility"] == "after_published"]
    assert hidden and all(t["status"] in ("passed", "failed") for t in results["tests"])


def test_run_autograder_gives_the_reference_full_marks(autograder, tmp_path):
    """The zip carries the solutions the block's tests run beside: a correct block keeps its
    points."""
    reference = PROJECT / "solutions" / THE_BLOCK
    proc, results_path = run_autograder(
        autograder,
        tmp_path / "autograder",
        {p.name: p for p in reference.glob("*.py") if p.name != "mistakes.py"},
    )
    assert results_path.is_file(), proc.stdout + proc.stderr
    results = json.loads(results_path.read_text())
    assert results["score"] == load(PROJECT / "course.json", THE_BLOCK).max_score, [
        t["output"] for t in results["tests"] if t["status"] != "passed"
    ][:3]


def test_run_autograder_gives_no_score_when_the_grader_fails(autograder, tmp_path):
    """A grader fault is never a 0 in the gradebook: no results.json, a failed run (Gradescope then
    says the autograder failed, and the instructor reruns it)."""
    root = tmp_path / "autograder"
    with zipfile.ZipFile(autograder) as zf:
        zf.extractall(root / "source")
    (root / "source" / "course" / "course.json").write_text("{broken")
    (root / "submission").mkdir()
    env = {**os.environ, "AUTOGRADER_ROOT": str(root), "GRADE_PYTHON": sys.executable}
    proc = subprocess.run(
        ["bash", str(root / "source" / "run_autograder")],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode != 0 and "no score is given" in proc.stdout
    assert not (root / "results" / "results.json").exists()


STUDENT_ROOT = (
    "/var/tmp"  # world-traversable (pytest's own tmp folder is 0700): the student's user must
)
# reach the Python it runs and nothing else


@pytest.fixture(scope="module")
def gradescope_like(autograder):
    """A stand-in for Gradescope's image: the system's python3 with the grader's requirements
    installed as setup.sh installs them, readable by every user, and a user of its own for the
    student's code; root only (it adds a user, as setup.sh does)."""
    if (
        os.geteuid() != 0
        or not os.path.exists("/usr/bin/python3")
        or shutil.which("useradd") is None
    ):
        pytest.skip("needs root, /usr/bin/python3 and useradd, as Gradescope's image has")
    base = Path(tempfile.mkdtemp(prefix="grade-gradescope-", dir=STUDENT_ROOT))
    base.chmod(0o755)
    user = f"gs{os.getpid()}"
    try:
        with zipfile.ZipFile(autograder) as zf:
            requirements = zf.read("requirements.txt").decode()
        (base / "requirements.txt").write_text(requirements)
        made = subprocess.run(
            ["/usr/bin/python3", "-m", "venv", str(base / "venv")], capture_output=True
        )
        if made.returncode != 0:
            pytest.skip(f"the system's python3 cannot make a venv: {made.stderr.decode()[-200:]}")
        pip = subprocess.run(
            [
                str(base / "venv" / "bin" / "pip"),
                "install",
                "-q",
                "-r",
                str(base / "requirements.txt"),
            ],
            capture_output=True,
            timeout=600,
        )
        if pip.returncode != 0:
            pytest.skip(
                f"could not install the grader's requirements: {pip.stderr.decode()[-300:]}"
            )
        subprocess.run(
            ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", user],
            check=True,
        )
        yield base / "venv" / "bin" / "python", user
    finally:
        subprocess.run(["pkill", "-KILL", "-u", user], capture_output=True)
        subprocess.run(["userdel", user], capture_output=True)
        shutil.rmtree(base, ignore_errors=True)


# A submission (the stubs, so every function scores 0) whose gelu.py, when imported, leaves a
# setsid()
# grandchild behind that, for 20 s, rewrites every score file it can find to 100 and tries to read
# the
# hidden suites and the solutions.
FORGER = """
import glob, json, os, time

ROOT = {root!r}
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        seen = []
        for secret in (ROOT + "/source/course/solutions/the-block/gelu.py",
                       ROOT + "/source/course/tests/the-block/hidden/test_gelu.py"):
            try:
                seen.append(open(secret).read()[:20])
            except OSError:
                pass
        with open("/var/tmp/{canary}", "w") as f:
            f.write(json.dumps(seen))
        deadline = time.time() + 20
        while time.time() < deadline:
            found = glob.glob("/tmp/**/*.json", recursive=True)
            for path in found + glob.glob(ROOT + "/**/*.json", recursive=True):
                try:
                    doc = json.load(open(path))
                    doc["score"] = 100
                    json.dump(doc, open(path, "w"))
                except Exception:
                    pass
            time.sleep(0.02)
        os._exit(0)
    os._exit(0)


def gelu(x):
    raise NotImplementedError
"""


@pytest.mark.slow
def test_without_bubblewrap_student_code_runs_as_its_own_user_and_cannot_change_the_grade(
    autograder, gradescope_like
):
    python, user = gradescope_like
    root = Path(tempfile.mkdtemp(prefix="autograder-", dir=STUDENT_ROOT))
    canary = f"grade-canary-{os.getpid()}"
    try:
        with zipfile.ZipFile(autograder) as zf:
            zf.extractall(root / "source")
        for secret in (
            "solutions/the-block/gelu.py",
            "tests/the-block/hidden/test_gelu.py",
        ):  # what FORGER tries
            assert (root / "source" / "course" / secret).is_file()
        (root / "submission").mkdir()
        for stub in (PROJECT / "exercises" / "the-block").glob("*.py"):
            shutil.copy(stub, root / "submission" / stub.name)
        (root / "submission" / "gelu.py").write_text(FORGER.format(root=str(root), canary=canary))
        env = {
            **os.environ,
            "AUTOGRADER_ROOT": str(root),
            "GRADE_PYTHON": str(python),
            "GRADE_SANDBOX": "process",
            "GRADE_STUDENT_USER": user,
        }
        env.pop("PYTHONPATH", None)
        proc = subprocess.run(
            ["bash", str(root / "source" / "run_autograder")],
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        results = json.loads((root / "results" / "results.json").read_text())
        assert results["tests"] and results["score"] == 0, (
            proc.stdout + proc.stderr
        )  # graded, and not 100
        assert json.loads(Path("/var/tmp", canary).read_text()) == []  # it ran, and read no secret
        time.sleep(0.5)
        assert json.loads((root / "results" / "results.json").read_text())["score"] == 0
        alive = subprocess.run(
            ["ps", "-o", "stat=,pid=,cmd=", "-u", user], capture_output=True, text=True
        ).stdout
        assert [
            line for line in alive.splitlines() if not line.startswith("Z")
        ] == []  # killed (zombies wait
        # for init to reap them)
    finally:
        shutil.rmtree(root, ignore_errors=True)
        Path("/var/tmp", canary).unlink(missing_ok=True)
