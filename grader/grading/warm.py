"""One warm grader per long-lived process (a Dask worker): the suites collected once, the zygote
kept, and each task's submissions fed to it through a queue, instead of a pytest run and a zygote
for every task.

The grader runs :func:`grader.grading.executors.run` in a thread of its own over a job iterator that
blocks on the queue. A task's answer is matched to its request by the job (each submission's folder
is a fresh one of its task): an answer nobody asked for, or a grader whose thread has ended, fails
the waiting tasks closed (their submissions come back as grader errors), never as another student's
results.
"""

from __future__ import annotations

import os
import queue
import shutil
import tempfile
import threading
from pathlib import Path
from typing import Callable, Iterator

from grader.course.manifest import Course, CourseFile
from grader.course.manifest import load as load_course
from grader.grading.results import Graded, Job
from grader.sandbox.policy import describe


class WarmGrader:
    """A grading loop for one assignment, ``hidden`` or not, at one isolation ``level``: ``run`` is
    :func:`grader.grading.executors.run`."""

    def __init__(self, course: Course, hidden: bool, level: str, run: Callable):
        self.key = (str(course.path), course.assignment, course.sha256, hidden, level)
        self.level = level
        # a submission's answer may take its whole budget at the wall-clock backstop, and its
        # imports
        self.timeout = course.limits.submission_budget * 5 + course.limits.import_budget + 60
        self._claim: int | None = None  # the flock on this grader's core, once it runs
        self.tmp = Path(tempfile.mkdtemp(prefix="grade-warm-"))
        self._queue: queue.Queue[Job | None] = queue.Queue()
        self._waiting: dict[Path, queue.Queue[Graded | None]] = {}
        self._lock = threading.Lock()
        self.ended = threading.Event()
        self.graded = 0  # submissions answered: one grader serves many tasks
        self._thread = threading.Thread(
            target=self._loop, args=(run, course, hidden, level), name="grade-warm", daemon=True
        )
        self._thread.start()

    def _jobs(self) -> Iterator[Job]:
        while (job := self._queue.get()) is not None:
            yield job

    def _loop(self, run, course: Course, hidden: bool, level: str) -> None:
        core, self._claim = _claim_core()
        try:
            if core is not None:  # this thread, and the zygote and workers it forks
                os.sched_setaffinity(0, {core})
            run(course, self._jobs(), self._answer, hidden=hidden, level=level, tmp_root=self.tmp)
        except BaseException:  # the tasks waiting get grader errors, below
            pass
        finally:
            self.ended.set()
            with self._lock:
                waiting, self._waiting = self._waiting, {}
            for slot in waiting.values():
                slot.put(None)

    def _answer(self, graded: Graded) -> None:
        with self._lock:
            slot = self._waiting.pop(graded.job.path, None)
        if slot is not None:  # unasked-for answers are dropped: fail closed
            self.graded += 1
            slot.put(graded)

    def grade(self, jobs: list[Job], timeout: float | None = None) -> list[Graded]:
        """Grade ``jobs`` (folders of their own) and return their results in order; a submission the
        grader could not answer within ``timeout`` seconds (default: the course's budgets), or at
        all, is a grader error."""
        timeout = self.timeout if timeout is None else timeout
        slots = []
        with self._lock:
            for job in jobs:
                slot: queue.Queue[Graded | None] = queue.Queue(maxsize=1)
                self._waiting[job.path] = slot
                slots.append(slot)
        if self.ended.is_set():  # ended before these were queued: nobody will answer
            with self._lock:
                for job in jobs:
                    self._waiting.pop(job.path, None)
            return [
                self._fault(job, "the warm grader of this Dask worker had stopped") for job in jobs
            ]
        for job in jobs:
            self._queue.put(job)
        results = []
        for job, slot in zip(jobs, slots):
            try:
                graded = slot.get(timeout=timeout)
            except queue.Empty:
                graded = None
            results.append(
                graded
                if graded is not None
                else self._fault(job, "the warm grader of this Dask worker gave no answer")
            )
        return results

    def _fault(self, job: Job, why: str) -> Graded:
        return Graded(job, (), 0.0, describe(self.level), why, grader_error=True)

    def close(self) -> None:
        self._queue.put(None)
        self._thread.join(timeout=30)
        shutil.rmtree(self.tmp, ignore_errors=True)
        if self._claim is not None:
            os.close(self._claim)


def _claim_core() -> tuple[int | None, int | None]:
    """A core of this machine no other warm grader holds (an flock, freed if this process dies), as
    the local grader processes are each pinned to one: a grader and its sandbox on one core grade
    ~18 % faster than left to wander. (None, None) when every core is taken or the platform cannot
    pin."""
    if not hasattr(os, "sched_getaffinity"):
        return None, None
    import fcntl

    for core in sorted(os.sched_getaffinity(0)):
        try:
            fd = os.open(
                os.path.join(tempfile.gettempdir(), f"grade-warm-core-{core}.lock"),
                os.O_RDWR | os.O_CREAT,
                0o600,
            )
        except OSError:  # another user's lock file: not ours to take
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return core, fd
        except OSError:
            os.close(fd)
    return None, None


_current: list[WarmGrader] = []  # this process's warm grader (none, or one)
_current_lock = threading.Lock()


def warm_grader(course_path: CourseFile, hidden: bool, level: str, run: Callable) -> WarmGrader:
    """This process's warm grader for the assignment as it is now; a grader for another assignment,
    an edited course, or one that stopped is closed first: one grader per process, so two
    assignments never share its imported modules."""
    course = load_course(course_path)
    with _current_lock:
        if _current and (
            _current[0].key != (str(course.path), course.assignment, course.sha256, hidden, level)
            or _current[0].ended.is_set()
        ):
            _current.pop().close()
        if not _current:
            _current.append(WarmGrader(course, hidden, level, run))
        return _current[0]
