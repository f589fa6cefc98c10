"""The warm grader a Dask worker keeps: each task gets its own submissions' results, or grader
errors."""

from __future__ import annotations

from pathlib import Path

from grader.course.manifest import load
from grader.grading.results import Graded, Job
from grader.grading.warm import WarmGrader


# grade(..., timeout=10): how long a task waits for its answers, a backstop against a hang (quiet:
# a few milliseconds; 1000x margin); timeout=1 is a wait meant to run out (no answer comes).
def _graded(job: Job) -> Graded:
    return Graded(job, (), 0.1, "process")


def test_each_task_gets_the_results_of_its_own_submissions(mini_course, tmp_path):
    def run(course, jobs, on_result, **kwargs):
        for job in jobs:
            on_result(_graded(job))

    grader = WarmGrader(load(mini_course), True, "process", run)
    try:
        first = grader.grade(
            [Job("a", tmp_path / "1" / "a"), Job("b", tmp_path / "1" / "b")], timeout=10
        )
        second = grader.grade([Job("a", tmp_path / "2" / "a")], timeout=10)
    finally:
        grader.close()
    assert [g.job.path for g in first] == [tmp_path / "1" / "a", tmp_path / "1" / "b"]
    assert [g.job.path for g in second] == [tmp_path / "2" / "a"] and not any(
        g.grader_error for g in first + second
    )


def test_an_answer_nobody_asked_for_is_dropped_and_the_task_gets_a_grader_error(
    mini_course, tmp_path
):
    def run(course, jobs, on_result, **kwargs):
        for job in jobs:
            on_result(
                _graded(Job(job.student, Path("/elsewhere") / job.student))
            )  # another's folder

    grader = WarmGrader(load(mini_course), True, "process", run)
    try:
        (result,) = grader.grade([Job("a", tmp_path / "a")], timeout=1)
    finally:
        grader.close()
    assert result.grader_error and result.job.path == tmp_path / "a" and "no answer" in result.error


def test_a_grader_that_stops_fails_its_waiting_and_later_tasks_closed(mini_course, tmp_path):
    def run(course, jobs, on_result, **kwargs):
        on_result(_graded(next(iter(jobs))))
        raise RuntimeError("pytest died")

    grader = WarmGrader(load(mini_course), True, "process", run)
    try:
        ok, lost = grader.grade([Job("a", tmp_path / "a"), Job("b", tmp_path / "b")], timeout=10)
        (later,) = grader.grade([Job("c", tmp_path / "c")], timeout=10)
    finally:
        grader.close()
    assert not ok.grader_error and lost.grader_error and later.grader_error
    assert grader.ended.is_set()


def test_two_warm_graders_on_one_machine_take_different_cores():
    import os

    import pytest

    from grader.grading.warm import _claim_core

    if not hasattr(os, "sched_getaffinity") or len(os.sched_getaffinity(0)) < 2:
        pytest.skip("needs two cores and sched_setaffinity")
    (first, a), (second, b) = _claim_core(), _claim_core()
    try:
        assert first is not None and second is not None and first != second
    finally:
        for fd in (a, b):
            os.close(fd)
    again, c = _claim_core()  # freed with its descriptor
    os.close(c)
    assert again == first
