"""`--jobs N`: the grader processes. One that dies costs only its submission; one that cannot start stops
the batch with an error (never a loop of replacements). Linux forks them, so a test's monkeypatch of the
runner reaches them."""
from __future__ import annotations

import os
import sys

import pytest
from conftest import GOOD

from grader import runner
from grader.course import load
from grader.errors import GradeError

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="grader processes are forked on Linux")


@pytest.fixture
def jobs(submission):
    return [runner.Job(f"s{i}", submission(GOOD, name=f"s{i}")) for i in range(6)]


def test_a_grader_process_that_dies_costs_only_its_submission(mini_course, jobs, monkeypatch):
    real_run = runner.run

    def run(course, jobs_, on_result, **kwargs):
        def dying():
            for job in jobs_:
                if job.student == "s2":
                    os._exit(9)                          # e.g. killed by the kernel while grading s2
                yield job
        real_run(course, dying(), on_result, **kwargs)

    monkeypatch.setattr(runner, "run", run)
    graded = []
    runner.run_parallel(load(mini_course), jobs, graded.append, hidden=True, processes=2)
    by_student = {g.job.student: g for g in graded}
    assert sorted(by_student) == [f"s{i}" for i in range(6)]
    assert by_student["s2"].error == "the grader process died (exit code 9)"
    assert all(not g.error and all(r.status == "passed" for r in g.results)
               for name, g in by_student.items() if name != "s2")


def test_grader_processes_that_cannot_start_stop_the_batch(mini_course, jobs, monkeypatch):
    monkeypatch.setattr(runner, "load_course", lambda path: os._exit(3))
    with pytest.raises(GradeError, match="died before it was ready"):
        runner.run_parallel(load(mini_course), jobs, [].append, hidden=True, processes=2)
