"""`--jobs N`: the grader processes. One that dies costs only its submission; one that cannot start
stops the batch with an error (never a loop of replacements). Linux forks them, so a patch of the
runner made before `run_parallel` reaches them: each test patches it in a fresh interpreter (this
one has imported other courses' suites, which a forked grader process would inherit)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
from conftest import GOOD

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="grader processes are forked on Linux"
)

PREAMBLE = """
import json, os, sys
from pathlib import Path
from grader.grading import executors
from grader.grading.results import Job
from grader.course.manifest import load
from grader.errors import GradeError
course, subs = load(sys.argv[1]), sorted(Path(sys.argv[2]).iterdir())
jobs = [Job(p.name, p) for p in subs]
"""


def _run(script: str, mini_course, submission) -> dict:
    for i in range(6):
        folder = submission(GOOD, name=f"s{i}")
    # timeout: a backstop against a hang, not a measurement (quiet: 1 s; 120x margin)
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            PREAMBLE + textwrap.dedent(script),
            str(mini_course),
            str(folder.parent),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_a_grader_process_that_dies_costs_only_its_submission(mini_course, submission):
    graded = _run(
        """
        real_run = executors.run
        def run(course, jobs_, on_result, **kwargs):
            def dying():
                for job in jobs_:
                    if job.student == "s2":
                        os._exit(9)  # e.g. killed by the kernel while grading s2
                    yield job
            real_run(course, dying(), on_result, **kwargs)
        executors.run = run
        graded = []
        executors.run_parallel(course, jobs, graded.append, hidden=True, processes=2)
        print(json.dumps({g.job.student: [g.error, [r.status for r in g.results]] for g in graded}))
    """,
        mini_course,
        submission,
    )
    assert sorted(graded) == [f"s{i}" for i in range(6)]
    assert graded.pop("s2")[0] == "the grader process died (exit code 9)"
    assert all(
        error == "" and statuses and set(statuses) == {"passed"}
        for error, statuses in graded.values()
    )


def test_grader_processes_that_cannot_start_stop_the_batch(mini_course, submission):
    outcome = _run(
        """
        executors.load_course = lambda path: os._exit(3)
        try:
            executors.run_parallel(course, jobs, [].append, hidden=True, processes=2)
            print(json.dumps("no error"))
        except GradeError as err:
            print(json.dumps(str(err)))
    """,
        mini_course,
        submission,
    )
    assert outcome.startswith("a grader process died before it was ready (exit code 3)")
