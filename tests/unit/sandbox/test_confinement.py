"""What a worker may not do to itself or the machine
(grader.sandbox.seccomp.worker_seccomp_program): have the kernel SIGKILL it by any route (a student
about to fail would make the grade a grader fault: withheld from every export), or make namespaces
and mounts of its own (an uncapped tmpfs holds memory no limit counts); and how a worker's death by
SIGKILL is told: the machine's only on the kernel's word (its out-of-memory killer's count)."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest

from grader.errors import GraderFault, StudentError
from grader.sandbox import inflight
from grader.sandbox.client import Worker
from grader.sandbox.policy import available_levels
from grader.sandbox.seccomp import worker_seccomp_program
from grader.sandbox.zygote import Zygote

LEVELS = available_levels()

pytestmark = pytest.mark.skipif(
    worker_seccomp_program() is None, reason="no libseccomp here: no filter"
)

# Each route returns what happened; the worker, alive, answers. Without the filter each one SIGKILLs
# the worker
# (or, for the namespace, mounts a tmpfs of its own).
ROUTES = r"""
import ctypes, errno, os, signal, time

libc = ctypes.CDLL(None, use_errno=True)


def _err():
    return errno.errorcode.get(ctypes.get_errno(), str(ctypes.get_errno()))


def f_setsig():
    import fcntl
    r, w = os.pipe()
    try:
        fcntl.fcntl(r, fcntl.F_SETOWN, os.getpid())
        fcntl.fcntl(r, 10, signal.SIGKILL)                   # F_SETSIG
        fcntl.fcntl(r, fcntl.F_SETFL, fcntl.fcntl(r, fcntl.F_GETFL) | os.O_ASYNC)
        os.write(w, b"x")
        time.sleep(0.2)
    except OSError as exc:
        return errno.errorcode[exc.errno]
    return "alive"


class SigEvent(ctypes.Structure):
    _fields_ = [("value", ctypes.c_void_p), ("signo", ctypes.c_int), ("notify", ctypes.c_int),
                ("pad", ctypes.c_int * 12)]


class ITimerSpec(ctypes.Structure):
    _fields_ = [("interval", ctypes.c_long * 2), ("value", ctypes.c_long * 2)]


def timer():
    event, timer_id = SigEvent(None, signal.SIGKILL, 0), ctypes.c_void_p()
    if libc.timer_create(1, ctypes.byref(event), ctypes.byref(timer_id)) != 0:   # CLOCK_MONOTONIC, SIGEV_SIGNAL
        return _err()
    spec = ITimerSpec((0, 0), (0, 10_000_000))
    libc.timer_settime(timer_id, 0, ctypes.byref(spec), None)
    time.sleep(0.2)
    return "alive"


def clone_exit_signal():
    pid = libc.syscall(56, signal.SIGKILL, 0, 0, 0, 0)      # SYS_clone, the child's exit signal SIGKILL
    if pid == 0:
        os._exit(0)
    if pid < 0:
        return _err()
    time.sleep(0.2)
    return "alive"


def tiocsig():
    import fcntl, struct
    master, slave = os.openpty()
    try:
        fcntl.ioctl(master, 0x40045436, struct.pack("i", signal.SIGKILL))   # TIOCSIG
    except OSError as exc:
        return errno.errorcode[exc.errno]
    return "alive"


def namespace():
    CLONE_NEWUSER, CLONE_NEWNS = 0x10000000, 0x20000
    found = []
    if libc.unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0:
        found.append("unshare " + _err())
    if libc.mount(b"none", b"/tmp", b"tmpfs", 0, None) != 0:
        found.append("mount " + _err())
    try:
        os.memfd_create("x")
        found.append("memfd ok")
    except OSError as exc:
        found.append("memfd " + errno.errorcode[exc.errno])
    pid = libc.syscall(56, CLONE_NEWUSER | signal.SIGCHLD, 0, 0, 0, 0)
    if pid == 0:
        os._exit(0)
    found.append("clone " + (_err() if pid < 0 else "made"))
    return ", ".join(found)


def threads_and_forks():
    import threading
    out = []
    t = threading.Thread(target=out.append, args=("thread",))
    t.start()
    t.join()
    pid = os.fork()
    if pid == 0:
        os._exit(7)
    return out + [os.waitpid(pid, 0)[1] >> 8]
"""


@pytest.mark.parametrize("route", ["f_setsig", "timer", "clone_exit_signal", "tiocsig"])
def test_a_worker_cannot_have_the_kernel_sigkill_it(make_forked_worker, submission, route):
    with make_forked_worker(submission({"mod.py": ROUTES})) as worker:
        assert worker.call("mod", route, [], {}, timeout=2).value in ("EPERM", "ENOSYS")


def test_a_worker_makes_no_namespace_no_mount_and_no_memory_file(make_forked_worker, submission):
    with make_forked_worker(submission({"mod.py": ROUTES})) as worker:
        assert (
            worker.call("mod", "namespace", [], {}, timeout=2).value
            == "unshare EPERM, mount EPERM, memfd EPERM, clone EPERM"
        )


def test_threads_and_forks_still_work(make_forked_worker, submission):
    """clone3 answers ENOSYS: the C library falls back to clone for a thread; fork is clone."""
    with make_forked_worker(submission({"mod.py": ROUTES})) as worker:
        assert worker.call("mod", "threads_and_forks", [], {}, timeout=2).value == ["thread", 7]


NAP = "import time\n\ndef nap(seconds):\n    time.sleep(seconds)\n    return 1\n"


@pytest.fixture(params=LEVELS)
def zygote(request):
    with Zygote(request.param) as z:
        yield z


def _killed_from_outside(worker: Worker, zygote) -> None:
    from grader.sandbox.zygote import _children

    def kill_it():
        deadline = time.monotonic() + 10  # (a wait bound only: the kill comes well before)
        while time.monotonic() < deadline and not _children(zygote.host_pid):
            time.sleep(0.01)
        time.sleep(0.3)  # into nap()
        os.kill(_children(zygote.host_pid)[0], signal.SIGKILL)

    threading.Thread(target=kill_it, daemon=True).start()
    worker.call("mod", "nap", [3.0], {}, timeout=2)


def test_a_sigkill_the_kernel_counts_as_out_of_memory_is_a_grader_fault(
    submission, limits, zygote, monkeypatch
):
    counts = iter(range(100))  # the count rose while the worker ran
    monkeypatch.setattr(inflight, "oom_kills", lambda: next(counts))
    with Worker(submission({"mod.py": NAP}), limits, zygote.level, zygote) as worker:
        with pytest.raises(GraderFault, match="out-of-memory"):
            _killed_from_outside(worker, zygote)
        assert worker.fault


def test_any_other_sigkill_is_the_submissions_crash(submission, limits, zygote, monkeypatch):
    """With every route its own code has closed, a SIGKILL the kernel does not count as
    out-of-memory is not the grader's word either: the student's crash (a grader fault would
    withhold the grade from every export)."""
    monkeypatch.setattr(inflight, "oom_kills", lambda: 7)
    with Worker(submission({"mod.py": NAP}), limits, zygote.level, zygote) as worker:
        with pytest.raises(StudentError) as err:
            _killed_from_outside(worker, zygote)
        assert err.value.kind == "crashed" and not worker.fault


SLEEPS = "import time\n\ndef nap(seconds):\n    time.sleep(seconds)\n    return 1\n"


def test_a_submission_that_sleeps_holds_its_grader_no_longer_than_its_wall_clock_budgets(
    submission, zygote
):
    """Every CPU limit is blind to sleep: a correct function that sleeps before each answer used
    none, and held its grader for as long as it liked (130 calls x 20 s). A problem's calls, and a
    submission's, have wall-clock budgets: past them the call is cut and the next is not run."""
    from grader.course.limits import Limits
    from grader.sandbox.proxy import Student

    limits = Limits(
        call_timeout=2, problem_budget=5, submission_budget=20, problem_wall=3, submission_wall=8
    )
    with Worker(submission({"mod.py": SLEEPS}), limits, zygote.level, zygote) as worker:
        student = Student(worker, {"nap": "mod"}, limits)
        student.charge_to("p")
        started = time.monotonic()
        assert student.nap(2.0) == 1  # within the call's backstop and the problem's 3 s
        with pytest.raises(StudentError, match="ran out of the problem's wall-clock time"):
            student.nap(2.0)  # cut when the problem's 3 s are up
        with pytest.raises(
            StudentError, match="not run: the problem's 3 s of wall-clock time ran out"
        ):
            student.nap(0.1)
        student.charge_to("q")
        assert student.nap(2.0) == 1  # another problem has its own
        student.charge_to("r")
        with pytest.raises(StudentError, match="ran out of the submission's wall-clock time"):
            student.nap(4.0)  # the submission's 8 s are up first
        # quiet: about 7 s; a busy machine only slows the grader's side (the sleeps are the
        # student's)
        assert time.monotonic() - started < 8 + 60
