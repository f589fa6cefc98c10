"""`grade autograde --executor dask`: the same score files as a local run, from a LocalCluster on
loopback."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import GOOD

distributed = pytest.importorskip(
    "distributed", reason="install the 'dask' extra: pip install -e '.[dask]'"
)

CLASS = {
    "good": GOOD,
    "wrong": {"mathy.py": "def double(x):\n    return x\ndef twice(n):\n    return n\n"},
    "exits": {
        "mathy.py": "import os\ndef double(x):\n    os._exit(0)\ndef twice(n):\n    return 2 * n\n"
    },
    "nested": {
        "mathy.py": "from helpers.core import double, twice\n",
        "helpers/__init__.py": "",
        "helpers/core.py": GOOD["mathy.py"],
    },
}
TIMING = ("graded_at", "execution_time", "signature")  # the signature covers the timings too


def grade(*args):
    # timeout: a backstop against a hang, not a measurement (quiet: under 4 s a call; 150x margin)
    return subprocess.run(
        [sys.executable, "-m", "grader", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_dask_gives_the_same_score_files_as_a_local_run(mini_course, submission, tmp_path):
    for name, files in CLASS.items():
        folder = submission(files, name=name)
    subs = folder.parent
    local = grade(
        "autograde", subs, "--out", tmp_path / "local", "--course", mini_course, "--jobs", 1
    )
    assert local.returncode == 0, local.stderr
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
    ) as cluster:
        remote = grade(
            "autograde",
            subs,
            "--out",
            tmp_path / "dask",
            "--course",
            mini_course,
            "--executor",
            "dask",
            "--scheduler",
            cluster.scheduler_address,
        )
    assert remote.returncode == 0, remote.stderr
    for path in sorted((tmp_path / "local").glob("*.json")):
        a = json.loads(path.read_text())
        b = json.loads((tmp_path / "dask" / path.name).read_text())
        for key in TIMING:
            a.pop(key), b.pop(key)
        assert a == b, path.name
    assert json.loads((tmp_path / "dask" / "nested.json").read_text())["score"] == 4


def test_dask_needs_a_scheduler(mini_course, submission, tmp_path):
    folder = submission(GOOD, name="one")
    r = grade(
        "autograde",
        folder.parent,
        "--out",
        tmp_path / "o",
        "--course",
        mini_course,
        "--executor",
        "dask",
    )
    assert r.returncode == 2 and "--scheduler" in r.stderr


def _warm_state():
    from grader.grading import warm

    return [(g.key[1], g.graded) for g in warm._current]


def test_a_dask_worker_keeps_one_warm_grader_for_all_its_tasks(mini_course, submission, tmp_path):
    """40 submissions in chunks of 16 (three tasks) on one worker process: one grader answers them
    all; an edited course gets a grader of its own."""
    for i in range(40):
        folder = submission(GOOD, name=f"s{i:02d}")
    with (
        distributed.LocalCluster(
            n_workers=1,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        first = grade(
            "autograde",
            folder.parent,
            "--out",
            tmp_path / "a",
            "--course",
            mini_course,
            "--executor",
            "dask",
            "--scheduler",
            cluster.scheduler_address,
        )
        assert first.returncode == 0, first.stderr
        assert list(client.run(_warm_state).values()) == [[("mini", 40)]]
        suite = mini_course.parent / "tests" / "public" / "test_mathy.py"
        suite.write_text(suite.read_text() + "\n# edited\n")
        again = grade(
            "autograde",
            folder.parent,
            "--out",
            tmp_path / "b",
            "--course",
            mini_course,
            "--executor",
            "dask",
            "--scheduler",
            cluster.scheduler_address,
        )
        assert again.returncode == 0, again.stderr
        assert list(client.run(_warm_state).values()) == [[("mini", 40)]]  # a new grader, 40 again
    for path in (tmp_path / "b").glob("*.json"):
        assert json.loads(path.read_text())["score"] == 4
