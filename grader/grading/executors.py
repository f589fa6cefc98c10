"""Where the grading runs: one process (:func:`run`, pytest once, every submission in turn), a pool
of forked grader processes (:func:`run_parallel`), or Dask workers (:func:`run_dask`).
"""

from __future__ import annotations

import dataclasses
import os
import signal
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Callable, Iterable

import pytest

from grader.course.manifest import Course, CourseFile
from grader.course.manifest import load as load_course
from grader.course.modules import forget_other_courses
from grader.errors import GradeError
from grader.grading.callplan import suite_files
from grader.grading.plugin import PYTEST_INI, GradingPlugin
from grader.grading.results import Graded, Job
from grader.sandbox.client import Worker
from grader.sandbox.policy import PROCESS, describe


def _not_dumpable() -> None:
    """Linux: make this process non-dumpable, so no process of another uid (or in another sandbox)
    can ptrace it or read its memory through /proc (it holds the hidden tests and expected
    values)."""
    if sys.platform.startswith("linux"):
        import ctypes

        PR_SET_DUMPABLE = 4
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)


def run(
    course: Course,
    jobs: Iterable[Job],
    on_result: Callable[[Graded], None],
    *,
    hidden: bool,
    level: str = PROCESS,
    warm: bool = True,
    tmp_root: Path | None = None,
    first_worker: Worker | None = None,
    run_as: str | None = None,
    mistakes=None,
) -> None:
    """Grade ``jobs`` one after another in this process, calling ``on_result`` for each.

    :param hidden: run the hidden suites too (instructors), not only the public ones (students).
    :param level: the isolation level of the workers (see
        :func:`grader.sandbox.policy.available_levels`).
    :param warm: fork each submission's worker from a warm zygote (POSIX) instead of starting
        Python.
    :param tmp_root: where the private copies of submissions go (default: the system's temporary
        folder).
    :param first_worker: with ``warm=False``, the first job's worker, already started (``grade
        check`` starts it before importing this module: its interpreter imports numpy while pytest
        loads); closed here.
    :param run_as: at the ``process`` level, as root, the user the workers run as (no bubblewrap:
        Gradescope).
    :param mistakes: the suites' ``mistakes`` fixture (default: the course's catalogue,
        :meth:`grader.feedback.mistakes.Catalogue.for_course`).
    :raises GradeError: a suite failed to load, or its points disagree with course.json.
    """
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    # The instructor's course folder gets nothing written next to its suites; a student's check
    # keeps pytest's rewritten suites in the release's own tests/public/__pycache__ (faster reruns).
    sys.dont_write_bytecode = hidden
    _not_dumpable()
    plugin = GradingPlugin(
        course, jobs, on_result, hidden, level, warm, tmp_root, first_worker, run_as, mistakes
    )
    forget_other_courses(course)  # its `public` suites, never another assignment's
    args = [str(f) for f in suite_files(course, hidden)] + [
        "-c",
        str(PYTEST_INI),
        "--rootdir",
        str(course.root),
        "--noconftest",
    ]
    # pytest's plugins that a grading has no use for (the student's code runs in another process:
    # nothing
    # here to patch, warn, time out or debug): each costs a grade check time to load.
    # (unraisableexception:
    # its two gc.collect()s at the end were 40-80 ms of a grade check.)
    for name in (
        "cacheprovider",
        "terminal",
        "logging",
        "unraisableexception",
        "threadexception",
        "doctest",
        "junitxml",
        "pastebin",
        "stepwise",
        "setuponly",
        "setupplan",
        "debugging",
        "faulthandler",
        "freeze_support",
        "legacypath",
        "tmpdir",
        "monkeypatch",
        "recwarn",
        "subtests",
    ):
        args += ["-p", f"no:{name}"]
    plugin.start_early()
    try:
        code = pytest.main(args, plugins=[plugin])
    finally:
        plugin.close()
    if plugin.error is not None:
        raise plugin.error
    if not plugin.ran:
        raise GradeError(f"pytest could not run the suites (exit status {int(code)})")


def _serve(
    parent: int,
    course_path: CourseFile,
    hidden: bool,
    level: str,
    tmp_root: Path | None,
    core: int | None,
    jobs: list[Job],
    tasks,
    state,
    out,
    run_as: str | None = None,
    finish: Callable | None = None,
) -> None:
    """A grader process for :func:`run_parallel`: grade ``jobs[i]`` for each index ``i`` taken from
    ``tasks`` until it gives ``None``, sending ``("done", i, finish(graded))`` (or ``("fatal", -1,
    message)``) on ``out``, its own pipe to the parent (each send is whole before the next job is
    taken). ``state`` (shared memory: the parent reads it whatever happens to this process) is -2
    until the suites are loaded, then the index of the job taken last (-1 before the first).

    With ``core`` (Linux), this process and the workers it starts run on that CPU only: a call's
    round trip then wakes the other side on the same core, which costs the worker about 40% less CPU
    a call than a wake-up across cores (measured: 92 against 156 µs).

    It dies with ``parent`` (the process that forked it), however that one ends: SIGKILL included,
    when no ``finally`` of the parent runs; its sandboxes (bubblewrap's ``--die-with-parent``) die
    with it.
    """
    _die_with_parent(parent)
    # Forked from `grade`, whose SIGTERM handler raises KeyboardInterrupt: here SIGTERM kills, as a
    # kill from
    # outside should (the parent then flags the submission this process had taken).
    signal.signal(signal.SIGTERM, signal.SIG_DFL)

    def taken():
        state.value = -1
        for i in iter(tasks.get, None):
            state.value = i
            yield jobs[i]

    try:
        # Forked: another thread of the parent (the progress bar's) may have held the locks of its
        # sys.stdout and sys.stderr at the fork, for good in this copy: write through new ones.
        sys.stdout = open(1, "w", closefd=False, errors="replace")
        sys.stderr = open(2, "w", buffering=1, closefd=False, errors="replace")
        if core is not None:
            os.sched_setaffinity(0, {core})
        finish = finish or _itself
        run(
            load_course(course_path),
            taken(),
            lambda graded: out.send(("done", state.value, finish(graded))),
            hidden=hidden,
            level=level,
            tmp_root=tmp_root,
            run_as=run_as,
        )
    except BaseException as exc:
        out.send(("fatal", -1, f"{type(exc).__name__}: {exc}"))


def _itself(graded: Graded) -> Graded:
    return graded


def _die_with_parent(parent: int) -> None:
    """Linux: have the kernel SIGKILL this process when its parent dies (PR_SET_PDEATHSIG), then
    exit at once if that parent is already gone (it died between the fork and the prctl: no signal
    would ever come)."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    PR_SET_PDEATHSIG = 1
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:
        os._exit(1)


def run_parallel(
    course: Course,
    jobs: list[Job],
    on_result: Callable[[Any], None],
    *,
    hidden: bool,
    processes: int,
    level: str = PROCESS,
    tmp_root: Path | None = None,
    run_as: str | None = None,
    finish: Callable[[Graded], Any] | None = None,
) -> None:
    """Like :func:`run`, with ``processes`` grader processes taking jobs from one queue. A grader
    process that dies costs only the submission it was grading (graded as an error: each one tells
    the parent, through shared memory, which job it took) and is replaced.

    On Linux the grader processes are forked: they start with this process's imports (pytest,
    numpy), about 0.3 s sooner than spawned ones. Elsewhere they are spawned (macOS's system
    libraries are not safe to fork).

    :param finish: what becomes of a graded submission (its score file written, say), done in the
        grader process that graded it; ``on_result`` gets what it returns (default: the
        :class:`Graded` itself).
    :raises GradeError: a grader process failed, or died before it was ready (a replacement would
        too: the batch stops rather than start grader processes for ever).
    """
    finish = finish or _itself
    if processes <= 1 or len(jobs) <= 1:
        run(
            course,
            jobs,
            lambda graded: on_result(finish(graded)),
            hidden=hidden,
            level=level,
            tmp_root=tmp_root,
            run_as=run_as,
        )
        return
    import multiprocessing  # autograde's alone: not grade check's cost
    from multiprocessing import connection

    ctx = multiprocessing.get_context("fork" if sys.platform.startswith("linux") else "spawn")
    tasks = ctx.Queue()
    # interrupted (Ctrl-C) with jobs still queued: exit, do not wait to write them
    tasks.cancel_join_thread()
    graders: dict[int, SimpleNamespace] = {}  # pid -> its process, results pipe, shared state, core
    done: set[int] = set()  # indices of the jobs with a result
    free = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    if len(free) < min(processes, len(jobs)):
        free = []  # fewer cores than graders: let the kernel place them

    def start(core: int | None) -> None:
        state = ctx.RawValue("l", -2)
        ours, theirs = ctx.Pipe(duplex=False)
        proc = ctx.Process(
            target=_serve,
            args=(
                os.getpid(),
                CourseFile(course.path, course.assignment),
                hidden,
                level,
                tmp_root,
                core,
                jobs,
                tasks,
                state,
                theirs,
                run_as,
                finish,
            ),
            daemon=True,
        )
        proc.start()
        theirs.close()  # the grader's end: EOF here once it is gone
        graders[proc.pid] = SimpleNamespace(proc=proc, pipe=ours, state=state, core=core)

    def stop(message: str) -> None:
        raise GradeError(message)  # the finally below kills every grader process

    try:
        for i in range(min(processes, len(jobs))):
            start(free[i] if free else None)
        for i in range(len(jobs)):
            tasks.put(i)
        while len(done) < len(jobs):
            connection.wait(
                [g.pipe for g in graders.values()] + [g.proc.sentinel for g in graders.values()]
            )
            for pid, grader in list(graders.items()):
                try:
                    while grader.pipe.poll():
                        tag, i, payload = grader.pipe.recv()
                        if tag == "fatal":
                            stop(
                                payload.split(": ", 1)[1]
                                if payload.startswith("GradeError")
                                else payload
                            )
                        if i not in done:
                            done.add(i)
                            on_result(payload)
                except (EOFError, OSError):  # gone, or died in the middle of a message
                    grader.proc.join()
                if grader.proc.is_alive():
                    continue
                del graders[pid]
                grader.pipe.close()
                taken, code = grader.state.value, grader.proc.exitcode
                if taken == -2:
                    stop(
                        f"a grader process died before it was ready (exit code {code}); see the "
                        "messages above"
                    )
                if taken >= 0 and taken not in done:
                    done.add(taken)
                    on_result(
                        finish(
                            Graded(
                                jobs[taken],
                                (),
                                0.0,
                                describe(level),
                                f"the grader process died (exit code {code})",
                                grader_error=True,
                            )
                        )
                    )
                if len(done) < len(jobs):
                    start(grader.core)
        for _ in graders:
            tasks.put(None)
        for grader in graders.values():
            grader.proc.join(timeout=5)
    finally:
        # However this ends (done, a GradeError, Ctrl-C or SIGTERM as KeyboardInterrupt, a bug): no
        # grader
        # process outlives it, and with each one its sandboxes.
        for grader in graders.values():
            if grader.proc.exitcode is None:
                grader.proc.kill()
        for grader in graders.values():
            grader.proc.join()


def _files(folder: Path) -> dict[str, bytes]:
    """A submission's regular files by relative path (symlinks and caches left out), to ship to a
    worker."""
    return {
        str(p.relative_to(folder)): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.is_symlink() and "__pycache__" not in p.parts
    }


def _grade_chunk(
    course_path: CourseFile, hidden: bool, level: str, chunk: list[tuple[str, dict[str, bytes]]]
) -> list:
    """A Dask task: grade a few submissions, shipped as {relative path: bytes}, with this worker
    process's warm grader (:mod:`grader.grading.warm`: the suites collected and the zygote started
    once per process).

    Runs on a Dask worker, which needs this package, the course at ``course_path`` and the sandbox.
    """
    import shutil
    import tempfile

    from grader.grading.warm import warm_grader

    grader = warm_grader(course_path, hidden, level, run)
    task = Path(tempfile.mkdtemp(prefix="task-", dir=grader.tmp))
    try:
        jobs = []
        for student, files in chunk:
            folder = task / "submissions" / student
            for rel, data in files.items():
                target = (folder / rel).resolve()
                if folder.resolve() not in target.parents:
                    continue  # never write outside the folder
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
            folder.mkdir(parents=True, exist_ok=True)
            jobs.append(Job(student, folder))
        return grader.grade(jobs)
    finally:
        shutil.rmtree(task, ignore_errors=True)


def run_dask(
    course: Course,
    jobs: list[Job],
    on_result: Callable[[Graded], None],
    *,
    hidden: bool,
    level: str,
    scheduler: str,
    chunk: int = 16,
) -> None:
    """Like :func:`run_parallel`, on a Dask distributed cluster (``pip install
    'dask[distributed]'``).

    Submissions travel to the workers as bytes, ``chunk`` at a time; each Dask worker process keeps
    one warm grader (suites collected once, its zygote kept) that grades them in its own sandbox at
    ``level``. A chunk that fails is graded as grader errors.

    :param scheduler: the scheduler's address, e.g. ``tcp://10.0.0.5:8786``.
    """
    try:
        from distributed import Client, as_completed
    except ImportError:
        raise GradeError("--executor dask needs dask: pip install 'dask[distributed]'") from None
    by_student = {job.student: job for job in jobs}
    with Client(scheduler, timeout="30s") as client:
        futures = {}
        for i in range(0, len(jobs), chunk):
            part = jobs[i : i + chunk]
            future = client.submit(
                _grade_chunk,
                CourseFile(course.path, course.assignment),
                hidden,
                level,
                [(job.student, _files(job.path)) for job in part],
                pure=False,
            )
            futures[future] = part
        for future in as_completed(futures):
            try:
                graded_list = future.result()
            except Exception as exc:  # a worker died or raised: grade as errors
                for job in futures[future]:
                    on_result(
                        Graded(
                            job,
                            (),
                            0.0,
                            describe(level),
                            f"the Dask task failed: {exc}",
                            grader_error=True,
                        )
                    )
                continue
            for graded in graded_list:  # back to the submission's own folder
                on_result(dataclasses.replace(graded, job=by_student[graded.job.student]))
