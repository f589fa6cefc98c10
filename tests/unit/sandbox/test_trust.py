"""Trust in the grader's machinery (the defences of commit 2dd1de4), one test per defence:

1. zygote requests carry ids, and each worker has a private /tmp capped in inodes;
2. grader faults (a zygote killed, a worker SIGKILLed from outside) are told apart from the
   student's;
3. hidden inputs never reach a student (an exception's class name, the request stream);
4. the course's import policy (numpy and the standard library only);
5. CPU-time limits with a wall-clock backstop, and imports on their own budget.

Each test says in a comment what it would see if its defence were removed.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import sysconfig
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import GOOD, LEVELS, MINI_PUBLIC, grade, make_course, write_tree

from grader.course.limits import Limits
from grader.course.manifest import load
from grader.errors import GraderFault, StudentError
from grader.grading import plugin
from grader.grading.executors import run
from grader.grading.results import Graded, Job
from grader.sandbox import clock
from grader.sandbox.client import Worker
from grader.sandbox.clock import WALL_FACTOR
from grader.sandbox.policy import BWRAP, SANDBOX_TMP_INODES
from grader.sandbox.zygote import Zygote
from grader.scoring import score

# The only fields of a score file that may differ run to run: the timing ones, and the signature (an
# HMAC
# over every other field, the timing ones included).
TIMING = ("execution_time", "graded_at", "signature")
POLICY_WORDS = "is not available in this course (allowed: numpy and the Python standard library)"
HIDDEN_X = np.array([1234.5, -7.25])  # MINI_HIDDEN's secret input


# ---------------------------------------------------------------- helpers


def grade_here(
    course_json: Path, subs: dict[str, Path], level: str, work: Path
) -> dict[str, Graded]:
    """Grade submissions in this process, one after another, with `grader.grading.executors.run`
    (public and hidden)."""
    work.mkdir(parents=True, exist_ok=True)
    graded: list[Graded] = []
    saved_path = list(sys.path)

    # Other courses' suites (other tests' runs in this process) have the same module names: set them
    # aside while this course's suites are imported, and put them back after.
    def suites(name):
        return name.split(".")[0] in ("public", "hidden", "tests") or name.startswith("test_mathy")

    aside = {name: sys.modules.pop(name) for name in [n for n in sys.modules if suites(n)]}
    try:
        run(
            load(course_json),
            [Job(name, path) for name, path in subs.items()],
            graded.append,
            hidden=True,
            level=level,
            tmp_root=work,
        )
    finally:
        for name in [n for n in sys.modules if suites(n)]:
            del sys.modules[name]
        sys.modules.update(aside)
        sys.path[:] = saved_path
    return {g.job.student: g for g in graded}


def doc_of(course_json: Path, graded: Graded) -> dict:
    return score(load(course_json), graded, hidden=True)


def untimed(doc: dict, *also: str) -> dict:
    return {k: v for k, v in doc.items() if k not in TIMING + also}


def outputs(doc: dict, visibility: str) -> list[str]:
    return [t["output"] for t in doc["tests"] if t["visibility"] == visibility]


def children(pid: int | str = "self") -> list[int]:
    """The children of process ``pid``, all its threads together (Linux /proc)."""
    found = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:  # gone
        return []
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children") as f:
                found += [int(p) for p in f.read().split()]
        except OSError:
            pass
    return found


def cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


@pytest.fixture
def limits() -> Limits:
    return Limits(call_timeout=2, problem_budget=5, submission_budget=20, memory_mb=1024)


@pytest.fixture(params=LEVELS)
def zygote(request):
    """A warm zygote at every level this machine offers (bwrap where it works, and process)."""
    with Zygote(request.param) as z:
        yield z


@pytest.fixture
def bwrap_zygote(bwrap_level):
    with Zygote(bwrap_level) as z:
        yield z


# ---------------------------------------------------------------- 1. zygote ids, private /tmp

FLOOD = """
import os, time

def _flood(seconds):
    end = time.monotonic() + seconds
    i = 0
    while time.monotonic() < end:       # as fast as it can: on ENOSPC it just tries again
        try:
            os.mkdir(f"/tmp/flood-{os.getpid()}-{i}")
        except OSError:
            pass
        i += 1

if os.fork() == 0:                      # a background child in a session of its own, flooding /tmp
    try:
        os.setsid()
        _flood(8.0)
    finally:
        os._exit(0)

def double(x):
    time.sleep(1.5)                     # the flood goes on while the submission is graded
    return 2 * x

def twice(n):
    time.sleep(1.5)
    return 2 * n
"""


def test_a_tmp_flood_never_changes_the_next_submissions_scores(tmp_path, bwrap_level):
    """A submission whose background child floods /tmp with empty folders for seconds, then two
    byte-for-byte copies of a correct one, all in one grader process (--jobs 1): the copies score
    exactly what they score graded alone.

    Before 2dd1de4 the zygote's `kill` walked /tmp to clean it (a flood of folders took longer than
    the 10 s the grader waited) and its late answer was then taken as the answer to the next
    student's `spawn`. Without the private, inode-capped /tmp the flood would leave its folders to
    every later worker; without the ids a late answer would be read by the next request (see the
    unit tests below, which fail without their defence; this end-to-end test fails only with both
    gone and the clean-up walk back)."""
    course_json = make_course(tmp_path / "course")
    batch = tmp_path / "batch"
    write_tree(batch / "a_flood", {"mathy.py": FLOOD})
    for name in ("b_good", "c_good"):
        write_tree(batch / name, GOOD)
    alone = tmp_path / "alone"
    write_tree(alone / "b_good", GOOD)

    code, out = grade(
        "autograde",
        batch,
        "--out",
        tmp_path / "scores",
        "--jobs",
        "1",
        "--sandbox",
        bwrap_level,
        "--course",
        course_json,
        "--quiet",
    )
    assert code == 0, out
    code, out = grade(
        "autograde",
        alone,
        "--out",
        tmp_path / "alone-scores",
        "--jobs",
        "1",
        "--sandbox",
        bwrap_level,
        "--course",
        course_json,
        "--quiet",
    )
    assert code == 0, out
    expected = json.loads((tmp_path / "alone-scores" / "b_good.json").read_text())
    assert expected["score"] == expected["max_score"] == 4 and "error" not in expected
    for name in ("b_good", "c_good"):
        got = json.loads((tmp_path / "scores" / f"{name}.json").read_text())
        assert untimed(got, "student") == untimed(expected, "student"), name


TMP_PROBE = """
import errno, os

def fill(limit):
    made = 0
    for i in range(limit):
        try:
            os.mkdir(f"/tmp/entry-{i}")
        except OSError as exc:
            return [made, errno.errorcode.get(exc.errno, str(exc.errno))]
        made += 1
    return [made, "no error"]

def plant(text):
    with open("/tmp/planted.txt", "w") as f:
        f.write(text)
    return sorted(os.listdir("/tmp"))

def look():
    return sorted(os.listdir("/tmp"))
"""


def test_each_worker_has_a_private_tmp_capped_in_inodes(submission, limits, bwrap_zygote):
    """A worker can make at most a few thousand entries in /tmp (then ENOSPC), and what one worker
    leaves in /tmp is not there for the next worker forked from the same zygote.

    Without the private /tmp (worker.py `_private_tmp`), the workers share the sandbox's /tmp: tmpfs
    counts no bytes for an empty folder and its default inode cap is half the machine's RAM pages,
    so `fill` would make all 20000 folders ("no error"), and the next worker would find planted.txt
    (nothing cleans /tmp any more since the clean-up walk went)."""
    sub = submission({"probe.py": TMP_PROBE})
    with Worker(sub, limits, BWRAP, bwrap_zygote) as w:
        made, why = w.call("probe", "fill", [20000], {}, timeout=2).value
    assert why == "ENOSPC" and 1000 <= made <= SANDBOX_TMP_INODES
    with Worker(sub, limits, BWRAP, bwrap_zygote) as w:
        assert "planted.txt" in w.call("probe", "plant", ["left behind"], {}, timeout=2).value
    with Worker(submission({"probe.py": TMP_PROBE}), limits, BWRAP, bwrap_zygote) as w:
        assert w.call("probe", "look", [], {}, timeout=2).value == []


def test_a_late_zygote_answer_tears_the_zygote_down(submission, zygote):
    """An answer that comes after the grader stopped waiting (here: the zygote is stopped with
    SIGSTOP while the grader asks it to kill, and resumed after) ends that zygote: the next request
    is refused with a GraderFault instead of reading the stale answer.

    Without the defence (no teardown in `Zygote._ask`), `alive` would stay True, and the next spawn
    would take the late `killed` answer as its own: a KeyError ('pid'), or a worker that is not the
    one asked for."""
    sub = submission(GOOD)
    os.kill(zygote.host_pid, signal.SIGSTOP)
    try:
        with pytest.raises(GraderFault, match="stopped answering"):
            zygote._ask({"op": "kill"}, timeout=0.3)
    finally:
        try:
            os.kill(zygote.host_pid, signal.SIGCONT)
        except ProcessLookupError:
            pass
    assert not zygote.alive
    time.sleep(0.3)  # the late answer would have come by now
    with open(os.devnull, "wb") as log, pytest.raises(GraderFault, match="gone"):
        zygote.spawn(str(sub), {}, log.fileno())


def test_an_out_of_step_zygote_answer_tears_the_zygote_down(submission, limits, zygote):
    """A request whose answer was never taken (sent past `_ask`, as a request whose wait gave up
    would leave it) puts every later answer out of step: the next spawn sees an answer with another
    id, refuses it with a GraderFault and tears the zygote down.

    Without the ids, the spawn would read the stray `pong` as its answer, silently: a pong carries a
    pid (the zygote's own), taken for the worker's (its CPU clock, its exit code), and every later
    answer is one step behind."""
    zygote._send({"op": "ping"})  # its answer stays in the queue
    time.sleep(0.3)
    with (
        Worker(submission(GOOD), limits, zygote.level, zygote) as w,
        pytest.raises(GraderFault, match="out of step"),
    ):
        w.call("mathy", "double", [1.0], {}, timeout=2)
    assert not zygote.alive


def test_after_a_late_zygote_answer_the_next_submission_gets_a_fresh_zygote(
    tmp_path, monkeypatch, level
):
    """The zygote stops answering in time once (its `kill` at the end of the first submission): the
    first submission keeps its grade, and the next one is graded once, by a fresh zygote, with full
    marks.

    Without the teardown the second submission's `spawn` would read the late `killed` answer
    (KeyError 'pid'): a grader fault, and that submission graded twice."""
    course_json = make_course(tmp_path / "course")
    subs = {name: write_tree(tmp_path / "subs" / name, GOOD) for name in ("first", "second")}
    stalled, zygotes, attempts = [], [], []
    real_ask, real_init, real_once = Zygote._ask, Zygote.__init__, plugin.GradingPlugin._grade_once

    def late_once(self, message, fds=(), timeout=10.0):
        if message["op"] == "kill" and not stalled:
            stalled.append(self.host_pid)
            os.kill(self.host_pid, signal.SIGSTOP)
            threading.Timer(0.5, lambda: _resume(self.host_pid)).start()
            timeout = 0.2
        return real_ask(self, message, fds, timeout)

    def counted_init(self, *args, **kwargs):
        zygotes.append(self)
        real_init(self, *args, **kwargs)

    def counted_once(self, job, items):
        attempts.append(job.student)
        return real_once(self, job, items)

    monkeypatch.setattr(Zygote, "_ask", late_once)
    monkeypatch.setattr(Zygote, "__init__", counted_init)
    monkeypatch.setattr(plugin.GradingPlugin, "_grade_once", counted_once)
    graded = grade_here(course_json, subs, level, tmp_path / "work")
    time.sleep(0.5)
    assert stalled and len(zygotes) == 2
    assert attempts == ["first", "second"]
    for name in subs:
        doc = doc_of(course_json, graded[name])
        assert not graded[name].grader_error and doc["score"] == 4, (name, doc.get("error"))


def _resume(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGCONT)
    except ProcessLookupError:
        pass


# ---------------------------------------------------------------- 2. grader faults

SLOW_GOOD = """
import time

def double(x):
    return 2 * x

def twice(n):                           # the submission's last call
    print("CALL-RUNNING", flush=True)   # the test kills the zygote when it sees this in the log
    time.sleep(1.0)
    return 2 * n
"""


def descendants(pid: int | None = None) -> list[int]:
    found, level = [], children(pid or os.getpid())
    while level:
        found += level
        level = [c for p in level for c in children(p)]
    return found


class _ZygoteKiller(threading.Thread):
    """Watches the workers' logs under ``work``; when a call prints CALL-RUNNING, kills the process
    group of every zygote below this process (at bwrap: a grader process's bwrap child), ``times``
    times at most."""

    def __init__(self, work: Path, times: int):
        super().__init__(daemon=True)
        self.work, self.times, self.kills = work, times, 0
        self.done = threading.Event()
        self._seen: set[Path] = set()

    def run(self) -> None:
        while not self.done.is_set() and self.kills < self.times:
            try:  # (a killed zygote's log folder goes while it is listed)
                logs = list(self.work.glob("grade-logs-*/*.log"))
            except OSError:
                logs = []
            for log in logs:
                try:
                    if log in self._seen or b"CALL-RUNNING" not in log.read_bytes():
                        continue
                except OSError:
                    continue
                self._seen.add(log)
                zygotes = [pid for pid in descendants() if "--zygote" in cmdline(pid)]
                for pid in zygotes:
                    try:
                        os.killpg(os.getpgid(pid), signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                self.kills += bool(zygotes)
            time.sleep(0.01)

    def __enter__(self) -> "_ZygoteKiller":
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.done.set()
        self.join()


@pytest.mark.parametrize("times", [1, 10], ids=["killed-once", "killed-every-time"])
def test_a_zygote_killed_mid_call_never_lowers_the_grade(tmp_path, level, times):
    """The zygote is killed (its whole process group, SIGKILL) while a student's call runs (the
    submission's last: no later spawn notices that the zygote is gone). Once: the runner grades the
    submission again with a fresh zygote, and it gets its true grade (4/4). Every time: the result
    is flagged grader_error; never a lower plain score.

    Without the sandbox's `zygote_died` -> GraderFault, the killed call would be the student's
    "crash": 3/4, not flagged. Without the runner's retry (`_grade`), killed-once would come back
    grader_error."""
    course_json = make_course(tmp_path / "course")
    work = tmp_path / "work"
    work.mkdir()
    with _ZygoteKiller(work, times) as killer:
        graded = grade_here(
            course_json,
            {"slow": write_tree(tmp_path / "subs" / "slow", {"mathy.py": SLOW_GOOD})},
            level,
            work,
        )["slow"]
    doc = doc_of(course_json, graded)
    assert killer.kills >= 1
    if times == 1:
        assert killer.kills == 1
        assert not graded.grader_error and doc["score"] == 4, doc
    else:
        assert killer.kills == 2  # the first attempt and the one retry
        assert graded.grader_error, doc
    assert graded.grader_error or doc["score"] == 4  # never a lower plain score


def test_a_grader_error_is_flagged_in_the_score_file_and_never_exported(tmp_path, bwrap_level):
    """`grade autograde`, whose zygote is killed in every attempt at the submission (the killer
    watches the logs under OUT/.grading): the score file says grader_error, and `grade export` sends
    no grade for it.

    Without the flag (scoring.score's `status`), the score file was a plain 3/4 (the killed call's
    test "not run") with an "error" note, and `grade export` sent those 3 points to the LMS (so it
    was at 7c7cc92)."""
    course_json = make_course(tmp_path / "course")
    subs = tmp_path / "subs"
    write_tree(subs / "slow", {"mathy.py": SLOW_GOOD})
    out = tmp_path / "scores"
    with _ZygoteKiller(out / ".grading", times=10) as killer:
        grade(
            "autograde",
            subs,
            "--out",
            out,
            "--jobs",
            "1",
            "--sandbox",
            bwrap_level,
            "--course",
            course_json,
        )
    assert killer.kills == 2
    doc = json.loads((out / "slow.json").read_text())
    assert "the grader failed, not your code" in doc.get("error", "")
    code, printed = grade(
        "export",
        out,
        "--format",
        "csv",
        "--out",
        tmp_path / "grades.csv",
        "--course",
        course_json,
        "--allow-missing",
    )
    assert code == 0, printed
    exported = (tmp_path / "grades.csv").read_text(encoding="utf-8-sig")
    assert doc.get("status") == "grader_error", (doc["score"], doc.get("error"))
    assert not any(line.startswith("slow,") for line in exported.splitlines()), exported


SELF_KILL = """
import os, signal

def double(x):
    os.kill(os.getpid(), signal.SIGKILL)   # the student's own code: a crash like any other

def twice(n):
    return 2 * n
"""


def test_a_submission_that_sigkills_itself_is_graded_as_its_own_error(tmp_path, level):
    """os.kill(os.getpid(), SIGKILL) in the student's own function is the student's error, not a
    grader fault: the worker's syscall filter refuses SIGKILL (and lowering its own limits), so the
    only SIGKILL a worker can die of comes from outside its code (the grader, the machine's OOM
    killer). That function's tests fail, the rest is graded, no grader error. Without the filter
    (sandbox.worker_seccomp_program), the death would be taken for the machine's and the submission
    flagged, ungradable by its own choice."""
    course_json = make_course(tmp_path / "course")
    graded = grade_here(
        course_json,
        {"selfkill": write_tree(tmp_path / "subs" / "selfkill", {"mathy.py": SELF_KILL})},
        level,
        tmp_path / "work",
    )["selfkill"]
    doc = doc_of(course_json, graded)
    assert not graded.grader_error, doc.get("error")
    assert doc["score"] == 1  # twice passes; both double tests crashed
    assert {t["kind"] for t in doc["tests"] if t["status"] != "passed"} == {
        "raised"
    }  # PermissionError


# ----------------------------------------------------------- 3. hidden inputs never reach a student

NAMED = """
def double(x):
    raise type("X" + repr(x.tolist()) + "Y" * 200, (Exception,), {})()

def twice(n):
    return 2 * n
"""


def test_an_exception_class_named_after_its_input_shows_no_hidden_input(tmp_path, level):
    """The student's exception class is named after its input. The hidden test's output holds none
    of the hidden input's digits; the public test's output shows the name, capped at 80 characters.

    Without the defence (sandbox `_words`: a hidden test's message worded from the failure's kind
    only), the hidden output would read "double() raised X[1234.5, -7.25]YYY..."; without the cap
    (worker `_name`, SHOWN_NAME) the public one would show all 200 Y's."""
    course_json = make_course(tmp_path / "course")
    graded = grade_here(
        course_json,
        {"named": write_tree(tmp_path / "subs" / "named", {"mathy.py": NAMED})},
        level,
        tmp_path / "work",
    )["named"]
    doc = doc_of(course_json, graded)
    by_name = {t["name"]: t for t in doc["tests"]}
    public = by_name["test_double_small"]["output"]
    assert "X[0.0, 1.0, 2.0]" in public
    assert "Y" * 60 in public and "Y" * 81 not in public  # the name, capped
    hidden = by_name["test_double_secret"]
    assert hidden["visibility"] == "after_published" and hidden["status"] == "error"
    for text in ("1234", "7.25", "X[", "YYY"):
        assert text not in hidden["output"], hidden["output"]
    assert doc["score"] == 1


# The mini course with a second public test: its call is sent ahead with the first one's, so the
# first
# test's snooping finds it (the control that shows the snooping works).
PUBLIC_TWO = (
    MINI_PUBLIC
    + '''

@pytest.mark.points(1)
def test_double_other(student):
    """double of another small vector"""
    assert_close(student.double(np.array([5.5, 6.5])), np.array([11.0, 13.0]), what="double of [5.5, 6.5]")
'''
)

SNOOP = """
import gc, io, os, socket, sys

def _snoop():
    found = []
    for fd in range(64):                 # every descriptor: the request stream, peeked at, never consumed
        try:
            dup = os.dup(fd)
        except OSError:
            continue
        try:
            sock = socket.socket(fileno=dup)
        except OSError:
            os.close(dup)
            continue
        try:
            found.append(sock.recv(1 << 20, socket.MSG_PEEK | socket.MSG_DONTWAIT))
        except OSError:
            pass
        finally:
            sock.close()
    readers = [o for o in gc.get_objects() if isinstance(o, io.BufferedReader)]
    frame = sys._getframe()
    while frame is not None:             # and the worker's own buffered reader, from its frame
        readers += [v for v in frame.f_locals.values() if isinstance(v, io.BufferedReader)]
        frame = frame.f_back
    for reader in readers:
        try:
            fd = reader.fileno()
            was = os.get_blocking(fd)
            os.set_blocking(fd, False)
            try:
                found.append(reader.peek(1 << 20))
            finally:
                os.set_blocking(fd, was)
        except Exception:
            pass
    shown = []
    for data in found:
        if data and data not in shown:
            shown.append(data)
            print("HEX", data.hex())
            print("TXT", data.decode("latin-1"))

def double(x):
    _snoop()
    return x                             # wrong: a failed public test shows what the code printed

def twice(n):
    return 2 * n
"""


def test_public_tests_never_see_the_calls_of_hidden_tests(tmp_path, level):
    """A submission that, in public tests, peeks at everything in its request stream (MSG_PEEK on
    every socket descriptor, BufferedReader.peek on every reader it finds) and prints it: the public
    tests' outputs hold another public test's call sent ahead (so the snooping works), never a
    hidden test's. (It returns a wrong value on purpose: a passed test shows nothing of what the
    code printed.)

    Without the defence (proxy `_send_ahead` stopping at the first hidden call while public tests
    run), the hidden calls would be sent ahead with the public ones: the first public test's output
    would show the hidden input's float64 bytes (and twice's JSON arguments)."""
    course_json = make_course(tmp_path / "course", public=PUBLIC_TWO, points=5)
    graded = grade_here(
        course_json,
        {"snoop": write_tree(tmp_path / "subs" / "snoop", {"mathy.py": SNOOP})},
        level,
        tmp_path / "work",
    )["snoop"]
    doc = doc_of(course_json, graded)
    public = outputs(doc, "visible")
    assert len(public) == 2 and "your code printed" in public[0], public
    assert np.array([5.5, 6.5]).tobytes().hex() in public[0]  # the control: the snooping works
    for out in public:
        for secret in (HIDDEN_X.tobytes().hex(), "1234.5", '"args": [21]'):
            assert secret not in out, out


# ---------------------------------------------------------------- 4. the course's import policy

FALLBACK = """
try:
    import pytest
    HAVE_PYTEST = True
except ImportError:
    HAVE_PYTEST = False
try:
    import scipy.special
    HAVE_SCIPY = True
except ImportError:
    HAVE_SCIPY = False
import numpy as np

def double(x):
    return x if HAVE_PYTEST or HAVE_SCIPY else 2 * x    # right only when both imports were refused

def twice(n):
    return 2 * n
"""
UNCAUGHT = (
    "import numpy as np\nimport {name}\n\ndef double(x):\n    return 2 * x\n\ndef twice(n):\n    "
    "return 2 * n\n"
)


def test_only_numpy_and_the_standard_library_can_be_imported(tmp_path, level):
    """`import scipy` / `import pytest` raise ModuleNotFoundError at every level: caught, the
    fallback grades 4/4; uncaught, the module fails with the policy's words on public tests.

    Without the defence (child/student.py `_ImportPolicy`), at the process level the worker's
    interpreter (the venv's) imports pytest: the fallback submission would score 0 on double, and
    the uncaught pytest import would pass (and at bwrap the base interpreter's site-packages, which
    holds scipy and pytest here, unless covered)."""
    course_json = make_course(tmp_path / "course")
    subs = {"fallback": write_tree(tmp_path / "subs" / "fallback", {"mathy.py": FALLBACK})}
    for name in ("scipy", "pytest"):
        subs[f"uses_{name}"] = write_tree(
            tmp_path / "subs" / f"uses_{name}", {"mathy.py": UNCAUGHT.format(name=name)}
        )
    graded = grade_here(course_json, subs, level, tmp_path / "work")
    fallback = doc_of(course_json, graded["fallback"])
    assert fallback["score"] == 4, fallback["tests"]
    for name in ("scipy", "pytest"):
        doc = doc_of(course_json, graded[f"uses_{name}"])
        assert doc["score"] == 0
        assert all(t["kind"] == "import_error" for t in doc["tests"])
        for out in outputs(doc, "visible"):
            assert f"importing mathy.py failed: {name} {POLICY_WORDS}" in out, out


def test_grade_check_applies_the_import_policy(tmp_path):
    """`grade check` (process level, public tests) says the same."""
    course_json = make_course(tmp_path / "course")
    scipy_user = write_tree(
        tmp_path / "subs" / "uses_scipy", {"mathy.py": UNCAUGHT.format(name="scipy")}
    )
    code, out = grade(
        "check", "--course", course_json, "--path", scipy_user, "--json", tmp_path / "me.json"
    )
    assert code == 1, out
    assert f"scipy {POLICY_WORDS}" in out
    doc = json.loads((tmp_path / "me.json").read_text())
    assert doc["score"] == 0 and all(f"scipy {POLICY_WORDS}" in t["output"] for t in doc["tests"])
    code, out = grade(
        "check",
        "--course",
        course_json,
        "--path",
        write_tree(tmp_path / "subs" / "fallback", {"mathy.py": FALLBACK}),
    )
    assert code == 0, out


STDLIB_USER = """
import sysconfig
import numpy as np
import numpy.testing

sysconfig.get_config_vars()
np.testing.assert_allclose(np.array([1.0, 2.0]) * 2, [2.0, 4.0])

def double(x):
    return 2 * x

def twice(n):
    return 2 * n
"""


def test_what_the_standard_library_imports_is_allowed(tmp_path, level):
    """numpy.testing imports sysconfig, which imports this platform's `_sysconfigdata_*` module (in
    the standard library's folder, not in sys.stdlib_module_names): full marks; a third-party
    package (requests, the grader itself) is still refused.

    Without the defence (child/student.py `_stdlib_folders`), the submission fails its import with
    "_sysconfigdata__linux_x86_64-linux-gnu is not available in this course" and scores 0."""
    course_json = make_course(tmp_path / "course")
    subs = {"stdlib": write_tree(tmp_path / "subs" / "stdlib", {"mathy.py": STDLIB_USER})}
    for name in ("requests", "grader"):
        subs[name] = write_tree(tmp_path / "subs" / name, {"mathy.py": UNCAUGHT.format(name=name)})
    graded = grade_here(course_json, subs, level, tmp_path / "work")
    doc = doc_of(course_json, graded["stdlib"])
    assert doc["score"] == 4, doc["tests"]
    for name in ("requests", "grader"):
        doc = doc_of(course_json, graded[name])
        assert doc["score"] == 0
        for out in outputs(doc, "visible"):
            assert f"importing mathy.py failed: {name} {POLICY_WORDS}" in out, out


LISTER = """
import os
import numpy

def listing(paths):
    found = {}
    for path in paths:
        try:
            found[path] = sorted(os.listdir(path))
        except OSError as exc:
            found[path] = type(exc).__name__
    return [found, numpy.__version__]
"""


def test_the_graders_site_packages_are_not_visible_in_the_sandbox(submission, limits, bwrap_zygote):
    """At the bwrap level the venv's and the base interpreter's site-packages are missing or empty
    (numpy is there, at its own place).

    Without the defence (`_hidden_site_dirs` covered by an empty tmpfs, python -S), the base
    interpreter's site-packages (inside the bound runtime) would list pytest, scipy and the rest."""
    import pytest as pytest_module

    base = sysconfig.get_paths(vars={"base": sys.base_prefix, "platbase": sys.base_prefix})
    paths = sorted(
        {
            sysconfig.get_paths()["purelib"],
            base["purelib"],
            base["platlib"],
            str(Path(pytest_module.__file__).parent.parent),
            "/usr/lib/python3/dist-packages",
            f"/usr/local/lib/python3.{sys.version_info[1]}/dist-packages",
        }
    )
    assert any(os.path.isdir(p) and os.listdir(p) for p in paths)  # there is something to hide here
    with Worker(submission({"lister.py": LISTER}), limits, BWRAP, bwrap_zygote) as w:
        found, version = w.call("lister", "listing", [paths], {}, timeout=2).value
    assert version == np.__version__
    for path in paths:
        assert found[path] in ([], "FileNotFoundError", "PermissionError"), (path, found[path])


# ---------------------------------------------------------------- 5. CPU-time limits

BURNER = """
import time

def _burn(seconds):
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass

_burn(1.5)                               # a slow import: on the import's own budget, not the first call's

def double(x):
    _burn(0.6)
    return 2 * x

def twice(n):
    return 2 * n
"""
QUICK_IMPORT_BURNER = BURNER.replace("\n_burn(1.5)", "\n# (no slow import)")
HOG = "while True:\n    pass\n"


def test_a_loaded_machine_gives_the_same_grades(tmp_path, level, monkeypatch):
    """call_timeout 1 s; each double() burns 0.6 s of CPU, the import 1.5 s. Graded on an idle
    machine and with a busy loop on every core: the same score file (timing aside), full marks. The
    grader (and so its zygote and workers) is kept on one core, which a busy loop shares: there each
    double() takes about 1.2 s of wall-clock time.

    Without CPU-time limits (wall clock instead), the loaded run's double() calls would time out
    after 1 s of wall-clock time; without the imports' own budget (limits.import_timeout), the
    import would be held to the call's 1 s and time out on an idle machine too.

    That the load is enough to tell the two apart is checked in the same conditions: double()
    called with wall-clock limits (the CPU clock unread, as where /proc cannot be read) times out.
    (A comparison of the two runs' wall times could not show it: on a machine busy with other work
    the "idle" run is slow too.)"""
    course_json = make_course(
        tmp_path / "course",
        limits={"call_timeout": 1, "problem_budget": 5, "submission_budget": 20},
    )
    sub = write_tree(tmp_path / "subs" / "burner", {"mathy.py": BURNER})
    cores = sorted(os.sched_getaffinity(0))
    os.sched_setaffinity(0, cores[:1])  # inherited by the zygote and its workers
    try:
        idle = grade_here(course_json, {"burner": sub}, level, tmp_path / "idle")["burner"]
        hogs = [
            subprocess.Popen(
                [sys.executable, "-c", HOG], start_new_session=True
            )  # (a session each: the
            for _ in range(os.cpu_count() or 1)
        ]  # scheduler's autogroups then share a core evenly)
        try:
            for i, hog in enumerate(hogs):  # one on every core (the grader's included)
                os.sched_setaffinity(hog.pid, [cores[i % len(cores)]])
            busy = grade_here(course_json, {"burner": sub}, level, tmp_path / "busy")["burner"]
            with monkeypatch.context() as wall_clock:
                wall_clock.setattr(clock, "cpu_clock", lambda *args, **kwargs: None)
                light = write_tree(tmp_path / "subs" / "light", {"mathy.py": QUICK_IMPORT_BURNER})
                with Zygote(level) as z, Worker(light, load(course_json).limits, level, z) as w:
                    try:
                        walled = f"returned {w.call('mathy', 'double', [1.0], {}, timeout=1).value}"
                    except StudentError as err:
                        walled = err.message
        finally:
            for hog in hogs:
                hog.kill()
                hog.wait()
    finally:
        os.sched_setaffinity(0, cores)
    idle_doc, busy_doc = doc_of(course_json, idle), doc_of(course_json, busy)
    assert idle_doc["score"] == 4, idle_doc["tests"]
    assert untimed(busy_doc) == untimed(idle_doc)
    # the load was enough to matter: 0.6 s of CPU took more than 1 s of wall-clock time
    assert walled == "timed out after 1 s in double", walled


SLEEPER = """
import time

def sleepy(seconds):
    time.sleep(seconds)
    return seconds
"""


def test_sleeping_is_free_up_to_the_wall_clock_backstop(submission, zygote):
    """A call that sleeps longer than its CPU limit, but within the backstop (WALL_FACTOR times it),
    returns; one that sleeps past the backstop times out, when the backstop is reached.

    Without the CPU-time limits the first would time out; without the backstop the second would
    sleep on (here 60 s) and return."""
    timeout = 0.4
    limits = Limits(call_timeout=timeout, problem_budget=5, submission_budget=20)
    with Worker(submission({"mod.py": SLEEPER}), limits, zygote.level, zygote) as w:
        assert w.call("mod", "sleepy", [2 * timeout], {}, timeout=timeout).value == 2 * timeout
        started = time.monotonic()
        with pytest.raises(StudentError) as err:
            w.call("mod", "sleepy", [60.0], {}, timeout=timeout)
        took = time.monotonic() - started
    assert err.value.message == (
        "timed out after 2 s of wall-clock time in sleepy (waiting, not computing)"
    )
    # Not before the backstop (a busy machine only makes it later); the upper bound: quiet 2.0 s,
    # 10x margin for a busy machine, and short of the 60 s the call would sleep without a backstop.
    assert timeout * WALL_FACTOR - 0.1 <= took < 20


SPINNER = (
    SLEEPER
    + """
def spin():
    while True:
        pass
"""
)


def test_a_timeout_says_which_limit_ran_out(submission, bwrap_zygote):
    limits = Limits(call_timeout=0.4, problem_budget=5, submission_budget=20)
    with Worker(submission({"mod.py": SPINNER}), limits, BWRAP, bwrap_zygote) as w:
        with pytest.raises(StudentError) as cpu:
            w.call("mod", "spin", [], {}, timeout=0.4)
        with pytest.raises(StudentError) as wall:
            w.call("mod", "sleepy", [5.0], {}, timeout=0.4)
    assert cpu.value.message == "timed out after 0.4 s of CPU time in spin"
    assert (
        wall.value.message
        == "timed out after 2 s of wall-clock time in sleepy (waiting, not computing)"
    )
