"""Hostile submissions through `grade autograde`, on every isolation level this machine offers:
none of them can forge a score, change a file outside the output folder, or stop the batch."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import GOOD

from grader.grading.signature import load_key
from grader.sandbox.policy import BWRAP

WRONG = "def double(x):\n    return x\ndef twice(n):\n    return n\n"
ATTACKS = {
    "fake_output": "import sys\n"
    + WRONG.replace(
        "return x",
        "print('=== 3 passed ===')\n    "
        "print(json.dumps({'score': 4, 'max_score': 4}))\n    sys.__stdout__.write('{\"score\": "
        "4}')\n"
        "    return x",
    ).replace("import sys", "import sys, json"),
    "patches_numpy": """
import builtins, numpy, numpy.testing
numpy.allclose = lambda *a, **k: True
numpy.testing.assert_allclose = lambda *a, **k: None
numpy.array_equal = lambda *a, **k: True
builtins.isinstance = lambda *a: True
"""
    + WRONG,
    "lying_values": """
import numpy as np
class Liar(np.ndarray):
    def __eq__(self, other):
        return True
    def __array_function__(self, *a, **k):
        return True
def double(x):
    return np.asarray(x).view(Liar)
def twice(n):
    return float('nan')
""",
    "exits": "import os, sys\ndef double(x):\n    sys.exit(0)\ndef twice(n):\n    os._exit(0)\n",
    "writes_results": """
import os, json
FAKE = json.dumps({"student": "writes_results", "score": 4, "max_score": 4})
def _plant():
    here = os.path.dirname(os.path.abspath(__file__))
    targets = [os.path.join(os.getcwd(), "results.json"), os.path.join(here, "writes_results.json")]
    up = here
    for _ in range(4):
        up = os.path.dirname(up)
        targets += [
            os.path.join(up, "results.json"),
            os.path.join(up, "out", "writes_results.json"),
        ]
    for t in targets:
        try:
            with open(t, "w") as fh:
                fh.write(FAKE)
        except OSError:
            pass
_plant()
import atexit
atexit.register(_plant)
"""
    + WRONG,
}
EXTRA_FILES = {  # planted next to the modules: none may be loaded by the grader
    "conftest.py": "import pytest\n@pytest.hookimpl(hookwrapper=True)\ndef "
    "pytest_runtest_makereport(item, call):\n"
    "    outcome = yield\n    outcome.get_result().outcome = 'passed'\n",
    "sitecustomize.py": "import numpy\nnumpy.allclose = lambda *a, **k: True\n",
    "pytest.ini": "[pytest]\naddopts = -p no:grader\n",
    "test_mine.py": "def test_free_points():\n    assert True\n",
}


def grade(*args, cwd=None, **kwargs):
    # timeout: a backstop against a hang, not a measurement (quiet: under 4 s a call; 150x margin)
    return subprocess.run(
        [sys.executable, "-m", "grader", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=600,
        **kwargs,
    )


def digest(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def read_scores(out: Path) -> dict[str, dict]:
    """The score files of the hostile class (at process level a student may also plant other
    files)."""
    names = [*ATTACKS, "honest"]
    return {p.name: json.loads(p.read_text()) for p in out.glob("*.json") if p.stem in names}


def level_args(level: str) -> list[str]:
    return ["--sandbox", level] + ([] if level == BWRAP else ["--unsafe"])


@pytest.fixture
def hostile(submission):
    for name, source in ATTACKS.items():
        folder = submission({"mathy.py": source, **EXTRA_FILES}, name=name)
    submission(GOOD, name="honest")
    return folder.parent


def test_no_attack_scores_and_nothing_outside_the_output_changes(
    mini_course, hostile, tmp_path, level
):
    work = tmp_path / "work"
    work.mkdir()
    out = work / "out"
    watched = [hostile, mini_course.parent]
    load_key(
        mini_course, create=True
    )  # made once, on the course's first autograde; then watched like the rest
    before = {str(w): digest(w) for w in watched}
    private = tmp_path / "private"  # the grader's private copies go here, not in the machine's /tmp
    private.mkdir()
    result = grade(
        "autograde",
        hostile,
        "--out",
        out,
        "--course",
        mini_course,
        "--jobs",
        1,
        *level_args(level),
        cwd=work,
        env={**os.environ, "TMPDIR": str(private)},
    )
    assert result.returncode == 0, result.stderr
    scores = {p.stem: json.loads(p.read_text()) for p in out.glob("*.json")}
    if level != BWRAP:  # process level: a student can write where the grader can (documented)
        scores = {name: doc for name, doc in scores.items() if name in ATTACKS or name == "honest"}
    assert sorted(scores) == sorted([*ATTACKS, "honest"])
    assert scores["honest"]["score"] == 4
    for name in ATTACKS:
        assert scores[name]["score"] == 0, (name, scores[name]["tests"])
        assert scores[name]["student"] == name
    assert {str(w): digest(w) for w in watched} == before
    assert sorted(p.name for p in work.iterdir()) == ["out"]
    assert not list(private.glob("grade-*"))  # private copies deleted
    if (
        level == BWRAP
    ):  # and nothing reached the folders above them (process level: documented limit)
        assert not list(tmp_path.rglob("results.json"))


def test_rerun_skips_unchanged_submissions_and_force_regrades_the_same(
    mini_course, hostile, tmp_path, level
):
    out = tmp_path / "out"
    grade(
        "autograde", hostile, "--out", out, "--course", mini_course, "--jobs", 2, *level_args(level)
    )
    first = read_scores(out)
    again = grade("autograde", hostile, "--out", out, "--course", mini_course, *level_args(level))
    assert f"{len(first)} submissions unchanged" in again.stderr
    assert read_scores(out) == first
    (hostile / "honest" / "mathy.py").write_text(WRONG)
    changed = grade("autograde", hostile, "--out", out, "--course", mini_course, *level_args(level))
    assert f"{len(first) - 1} submissions unchanged" in changed.stderr
    assert json.loads((out / "honest.json").read_text())["score"] == 0
    forced = grade(
        "autograde", hostile, "--out", out, "--course", mini_course, "--force", *level_args(level)
    )
    assert "unchanged" not in forced.stderr
    regraded = read_scores(out)
    for name, doc in first.items():
        if name != "honest.json":
            assert [(t["name"], t["score"], t["status"]) for t in regraded[name]["tests"]] == [
                (t["name"], t["score"], t["status"]) for t in doc["tests"]
            ]


def test_autograde_refuses_to_run_unsandboxed_without_unsafe(mini_course, hostile, tmp_path):
    r = grade(
        "autograde",
        hostile,
        "--out",
        tmp_path / "out",
        "--course",
        mini_course,
        "--sandbox",
        "process",
    )
    assert r.returncode == 2 and "--unsafe" in r.stderr
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").iterdir())


def test_a_killed_batch_keeps_finished_files_whole_and_a_rerun_completes(
    mini_course, submission, tmp_path, level
):
    for i in range(12):
        folder = submission(
            {"mathy.py": GOOD["mathy.py"] + f"\nimport time\ntime.sleep(0.{i % 3})\n"},
            name=f"s{i:02d}",
        )
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "grader",
            "autograde",
            str(folder.parent),
            "--out",
            str(out),
            "--course",
            str(mini_course),
            "--jobs",
            "1",
            *level_args(level),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 60  # quiet: 1 s to the third file; 60x margin
    while time.monotonic() < deadline and len(list(out.glob("*.json"))) < 3:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    finished = list(out.glob("*.json"))
    assert 3 <= len(finished) < 12
    for path in finished:
        assert json.loads(path.read_text())["score"] == 4  # whole, valid files only
    r = grade("autograde", folder.parent, "--out", out, "--course", mini_course, *level_args(level))
    assert r.returncode == 0
    assert f"{len(finished)} submissions unchanged" in r.stderr
    assert len(list(out.glob("*.json"))) == 12 and not list(out.glob(".*.tmp"))


def test_one_students_values_never_reach_the_next_students_worker(mini_course, submission):
    """A grader process sends each plain test's first call ahead, as it made it for the submission
    before. A later call of a test may be made of what the student's code returned (here
    double(double(x))): sent ahead, it would hand the previous student's value to the next student's
    code."""
    from grader.course.manifest import load
    from grader.grading import executors
    from grader.grading.results import Job

    public = mini_course.parent / "tests" / "public" / "test_mathy.py"
    public.write_text(
        public.read_text()
        + '''
@pytest.mark.points(1)
def test_double_of_double(student):
    """double of double"""
    once = student.double(np.arange(3.0))
    assert_close(student.double(once), np.arange(3.0) * 4, what="double of double")

@pytest.mark.points(1)
def test_double_again(student):
    """double once more"""
    assert_close(student.double(np.arange(3.0)), np.arange(3.0) * 2, what="double of [0, 1, 2]")
'''
    )
    marked = submission(
        {"mathy.py": "def double(x):\n    return 2 * x + 777000\n"}
    )  # its values say 777...
    spy = submission(
        {
            "mathy.py": """
        SEEN = []
        def double(x):
            SEEN.append(float(abs(x).max()))
            if len(SEEN) >= 4:
                raise ValueError(f"seen {SEEN}")
            return 2 * x
        """
        }
    )
    shown = []
    executors.run(
        load(mini_course),
        [Job("marked", marked), Job("spy", spy)],
        lambda g: shown.extend(r.output for r in g.results if g.job.student == "spy"),
        hidden=False,
    )
    assert any("seen [" in text for text in shown)  # the spy did report what it saw
    assert not any("777" in text for text in shown)
