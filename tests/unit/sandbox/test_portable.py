"""The student's path on every system: `grade check` (the stubs, the reference, a worker that
crashes, one that hangs, one that prints a lot), `grade pack` and `grade check --path` of the
hand-in, `--path` of a zip with CRLF line ends, and `grade trace`, each in three lanes that must
give the same grade:

- ``real``: ``python -m grader`` on the system running the tests (the CI workflow runs this file on
  Ubuntu, Windows and macOS: .github/workflows/student-path.yml);
- ``windows`` ("as on Windows") and ``macos`` ("as on macOS"), on Linux only: `grade` started
  through tests/unit/sandbox/simulated_os.py, which takes away, in the grader's process and in every
  worker it starts, what that system lacks. As on Windows: the modules ``resource``, ``fcntl``,
  ``termios``, ``pwd`` and ``grp``; ``os.fork``, ``os.setsid``, ``os.killpg`` (and the other
  process-group, wait, pread and scheduling calls Windows lacks); ``signal.SIGKILL`` and the other
  POSIX-only signals; ``socket.AF_UNIX`` and passing descriptors (``socket.socketpair`` becomes two
  TCP sockets on 127.0.0.1, as on Windows); ``select.poll`` and ``epoll``; /proc (hidden from all
  but psutil, which stands in for the process tables Windows gives it); any start method of
  ``multiprocessing`` but "spawn"; and files from ``os.open`` without ``os.O_BINARY`` are in the C
  runtime's text mode (LF written as CR LF, CR LF read as LF). As on macOS: ``sys.platform`` is
  "darwin"; /proc hidden the same way; ``select.epoll``, ``os.sched_setaffinity`` and the other
  Linux-only calls listed there; "spawn" as the default start method. simulated_os.py's docstring
  lists every name.

A simulation is not the OS: Windows' and macOS's own kernels, C libraries, consoles and crash codes
are not here (a segfault still reads as SIGSEGV, not 0xC0000005: tests/unit/sandbox/test_sandbox.py
reads those codes), and what Python's C code does underneath stays Linux's. What the lanes show is
that no facility the student path reaches for is missing there, and that the grade does not depend
on one.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import socket
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest
from conftest import PROJECT, students_copy

pytestmark = pytest.mark.portable

SIMULATED = Path(__file__).resolve().with_name("simulated_os.py")
ON_LINUX = sys.platform.startswith("linux")
LANES = [
    pytest.param("real"),
    pytest.param(
        "windows", marks=pytest.mark.skipif(not ON_LINUX, reason="simulated on Linux only")
    ),
    pytest.param("macos", marks=pytest.mark.skipif(not ON_LINUX, reason="simulated on Linux only")),
]
REFERENCE = PROJECT / "solutions" / "the-block"
# The release's limits, lowered so that a hang is cut within seconds: the reference's calls take
# milliseconds of CPU, 100x under the call's second.
LIMITS = {"call_timeout": 1, "problem_budget": 2}
# The characters a loud function prints per call: 3x the output kept (64 KiB), and all its calls
# together under the worker's 16 MiB file-size limit.
LOUD = 200 << 10
_REAL: dict[str, tuple] = {}  # scenario -> the real lane's grade


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> Path:
    """A student's release of the-block (`grade release`), its limits lowered (LIMITS)."""
    root = students_copy(tmp_path_factory.mktemp("portable") / "release")
    course = json.loads((root / "course.json").read_text(encoding="utf-8"))
    course["limits"].update(LIMITS)
    (root / "course.json").write_text(json.dumps(course, indent=2), encoding="utf-8")
    return root


def grade(lane: str, *args, cwd: Path) -> subprocess.CompletedProcess:
    """`grade ARGS` in ``cwd``, in ``lane``; its exit status and output."""
    start = (
        [sys.executable, "-m", "grader"]
        if lane == "real"
        else [sys.executable, str(SIMULATED), lane]
    )
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    # timeout: a backstop against a hang, not a measurement (quiet: under 10 s a run)
    return subprocess.run(
        [*start, *map(str, args)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="replace",
        timeout=600,
    )


def student(
    release: Path,
    tmp_path: Path,
    lane: str,
    appended: dict[str, str] | None = None,
    stubs: bool = False,
) -> Path:
    """A copy of the release whose exercises/ hold the reference (or the stubs), with
    ``appended[module]`` added at the end of that module (a function defined again there replaces
    the reference's)."""
    folder = shutil.copytree(release, tmp_path / lane)
    if not stubs:
        for module in (folder / "exercises").glob("*.py"):
            shutil.copy(REFERENCE / module.name, module)
    for module, source in (appended or {}).items():
        path = folder / "exercises" / f"{module}.py"
        path.write_text(path.read_text(encoding="utf-8") + "\n\n" + source, encoding="utf-8")
    return folder


def grade_of(doc: dict) -> tuple:
    """What must not depend on the system: the points, and each test's status and points."""
    return (
        doc["score"],
        doc["max_score"],
        sorted((t["problem"], t["name"], t["status"], t["score"]) for t in doc["tests"]),
    )


def checked(lane: str, folder: Path, *args) -> tuple[subprocess.CompletedProcess, tuple]:
    out = folder / "score.json"
    proc = grade(lane, "check", *args, "--json", out, cwd=folder)
    assert out.is_file(), proc.stdout + proc.stderr
    return proc, grade_of(json.loads(out.read_text(encoding="utf-8")))


def same_as_real(scenario: str, lane: str, got: tuple, real) -> None:
    """``got`` is the real lane's grade of ``scenario`` (``real()`` makes the real run, once a
    session)."""
    if lane == "real":
        _REAL[scenario] = got
        return
    if scenario not in _REAL:
        _REAL[scenario] = real()
    assert got == _REAL[scenario], f"{lane}: {scenario}: not the grade a real run gives"


def check_scenario(release: Path, tmp_path: Path, lane: str, scenario: str, **kwargs) -> tuple:
    """`grade check` on a student folder (see :func:`student`) in ``lane``: its exit status, output
    and grade, the grade checked against the real run's."""
    proc, got = checked(lane, student(release, tmp_path, lane, **kwargs))
    same_as_real(
        scenario,
        lane,
        got,
        lambda: checked("real", student(release, tmp_path, "real-run", **kwargs))[1],
    )
    return proc.returncode, proc.stdout + proc.stderr, got


@pytest.mark.parametrize("lane", LANES)
def test_check_on_the_stubs_fails_at_zero(release, tmp_path, lane):
    code, output, (score, max_score, tests) = check_scenario(
        release, tmp_path, lane, "stubs", stubs=True
    )
    assert code == 1, output
    assert score == 0 and max_score > 0 and "not implemented yet" in output


@pytest.mark.parametrize("lane", LANES)
def test_check_on_the_reference_passes_at_full_public_points(release, tmp_path, lane):
    code, output, (score, max_score, tests) = check_scenario(release, tmp_path, lane, "reference")
    assert code == 0, output
    assert score == max_score == 33 and all(status == "passed" for _, _, status, _ in tests)
    assert "Traceback" not in output


@pytest.mark.parametrize("lane", LANES)
def test_a_worker_that_dies_is_the_students_crash(release, tmp_path, lane):
    """gelu() ends its process (os._exit), softmax() reads address 0 (a segfault; 0xC0000005 on
    Windows): their tests fail as the student's crash, the rest is graded, and no grader error is
    said. (faulthandler reads it: Windows' ctypes would catch that access violation as OSError.)"""
    appended = {
        "gelu": "def gelu(x):\n    import os\n    os._exit(3)\n",
        "attention": "def softmax(s, axis=-1):\n    import faulthandler\n"
        "    faulthandler._read_null()\n",
    }
    code, output, (score, max_score, tests) = check_scenario(
        release, tmp_path, lane, "crash", appended=appended
    )
    assert code == 1, output
    assert "do not call sys.exit or os._exit" in output and "crashed with" in output, output
    statuses = {problem: {s for p, _, s, _ in tests if p == problem} for problem, *_ in tests}
    assert statuses["layernorm"] == {"passed"} and statuses["params"] == {"passed"}
    assert "passed" not in statuses["gelu"] and 0 < score < max_score
    assert (
        "Traceback" not in output
        and "error in the test itself" not in output
        and "grader" not in output.lower()
    )


@pytest.mark.skipif(not hasattr(select, "poll"), reason="a forked worker's socket: Linux only")
def test_a_reply_sent_before_the_worker_died_is_read_before_its_end():
    """The worker answered a call sent ahead and died in the next, requests still queued for it:
    the answer is read, then the end (the death is the running call's, not the one answered)."""
    from grader.sandbox.channel import SocketChannel
    from grader.sandbox.child import protocol as wire

    ours, theirs = socket.socketpair()
    channel = SocketChannel(ours)
    channel.send(b"\0" * (8 << 20), timeout=1)  # more than a socket holds: the rest stays queued
    theirs.sendall(wire.framed(wire.encode({"id": "answered"})))
    theirs.close()
    deadline = time.monotonic() + 60  # a backstop: both messages are there already
    assert channel.next_message(deadline) == ("ok", {"id": "answered"})
    assert channel.next_message(deadline) == ("eof", None)
    channel.close()


def test_a_worker_log_still_held_when_the_worker_closes_is_no_error(
    submission, limits, monkeypatch
):
    """Windows: a venv's python.exe is a launcher; killing it ends the interpreter a moment later,
    which may still hold the worker's log, and deleting an open file fails there (PermissionError,
    made here): the check ends as usual, the log's folder goes with ignore_errors."""
    from grader.sandbox.client import Worker
    from grader.sandbox.policy import PROCESS

    unlink = Path.unlink

    def held(path, missing_ok=False):
        if path.suffix == ".log":
            raise PermissionError(32, "The process cannot access the file", str(path))
        return unlink(path, missing_ok=missing_ok)

    with Worker(submission({"mod.py": "def f():\n    return 1\n"}), limits, PROCESS) as worker:
        assert worker.call("mod", "f", [], {}, timeout=2).value == 1
        monkeypatch.setattr(Path, "unlink", held)


SPIN = """import sys, time
end = time.process_time() + 0.5
while time.process_time() < end:
    pass
sys.stdin.read()
"""


def test_the_clock_without_proc_counts_what_the_worker_runs_in_a_child():
    """Windows' venv python.exe is a launcher, the interpreter its child: the clock psutil reads
    (macOS, Windows) counts the worker's descendants. Here the child spins for 0.5 s of CPU."""
    import psutil

    from grader.sandbox.clock import _PortableClock

    launcher = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"import subprocess, sys; subprocess.run([sys.executable, '-c', {SPIN!r}])",
        ],
        stdin=subprocess.PIPE,
    )
    try:
        clock = _PortableClock(psutil.Process(launcher.pid))
        deadline = time.monotonic() + 60  # a backstop: quiet, 0.6 s
        while clock() < 0.45 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert clock() >= 0.45
    finally:
        launcher.stdin.close()
        launcher.wait(timeout=60)


@pytest.mark.parametrize("lane", LANES)
def test_a_hang_is_cut_and_the_rest_is_graded(release, tmp_path, lane):
    """count_params() spins for ever: cut at its CPU limit (1 s here), its problem fails, the rest
    passes. The limit is CPU time on every system (psutil reads it where there is no /proc): a slow
    laptop's worker start, slow in wall-clock time, is not cut for it."""
    appended = {"params": "def count_params(*args, **kwargs):\n    while True:\n        pass\n"}
    code, output, (score, max_score, tests) = check_scenario(
        release, tmp_path, lane, "hang", appended=appended
    )
    assert code == 1, output
    assert "timed out after 1 s of CPU time in count_params" in output, output
    assert {s for p, _, s, _ in tests if p == "params"} != {"passed"}
    assert all(s == "passed" for p, _, s, _ in tests if p != "params") and score == max_score - 5


@pytest.mark.parametrize("lane", LANES)
def test_a_loud_submission_is_graded_and_its_output_capped(release, tmp_path, lane):
    appended = {
        "gelu": f"_gelu = gelu\n\n\ndef gelu(x):\n    print('gelu says ' * {LOUD // 10})\n"
        "    return _gelu(x)\n"
    }
    code, output, (score, max_score, tests) = check_scenario(
        release, tmp_path, lane, "loud", appended=appended
    )
    assert code == 0, output[-3000:]
    assert score == max_score and len(output) < LOUD


@pytest.mark.parametrize("lane", LANES)
def test_pack_then_check_the_hand_in(release, tmp_path, lane):
    folder = student(release, tmp_path, lane)
    packed = grade(lane, "pack", cwd=folder)
    assert packed.returncode == 0, packed.stdout + packed.stderr
    assert "will be graded from" in packed.stdout
    proc, got = checked(lane, folder, "--path", "hand-in.zip")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert got[0] == got[1] == 33


def crlf_zip(folder: Path) -> Path:
    """The reference's modules with Windows line ends (CR LF), each opening with a backslash line
    continuation (which a CR CR LF end breaks: a SyntaxError), zipped."""
    path = folder / "crlf.zip"
    with zipfile.ZipFile(path, "w") as zf:
        for module in sorted(REFERENCE.glob("*.py")):
            text = "LINES = 1 + \\\n    1\n" + module.read_text(encoding="utf-8")
            zf.writestr(module.name, text.replace("\n", "\r\n").encode("utf-8"))
    return path


@pytest.mark.parametrize("lane", LANES)
def test_a_crlf_zip_is_graded_as_written(release, tmp_path, lane):
    folder = student(release, tmp_path, lane, stubs=True)
    proc, got = checked(lane, folder, "--path", crlf_zip(folder))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert got[0] == got[1] == 33


@pytest.mark.parametrize("lane", LANES)
def test_trace_of_the_reference_matches_every_step(release, tmp_path, lane):
    traced = grade(lane, "trace", cwd=student(release, tmp_path, lane))
    assert traced.returncode == 0, traced.stdout + traced.stderr
    assert "Traceback" not in traced.stdout + traced.stderr


PROBE = """
import importlib, os, signal, socket, select, sys, multiprocessing
facts = {"platform": sys.platform, "fork": hasattr(os, "fork"), "killpg": hasattr(os, "killpg"),
         "setsid": hasattr(os, "setsid"), "SIGKILL": hasattr(signal, "SIGKILL"),
         "AF_UNIX": hasattr(socket, "AF_UNIX"), "poll": hasattr(select, "poll"),
         "proc": os.path.exists("/proc/self/stat"), "O_BINARY": hasattr(os, "O_BINARY")}
for name in ("resource", "fcntl"):
    try:
        importlib.import_module(name)
        facts[name] = True
    except ImportError:
        facts[name] = False
if "--grader" in sys.argv:
    facts["start_methods"] = multiprocessing.get_all_start_methods()
    facts["start_method"] = multiprocessing.get_start_method()
    try:
        multiprocessing.get_context("fork")
        facts["fork_context"] = True
    except ValueError:
        facts["fork_context"] = False
    a, b = socket.socketpair()
    a.sendall(b"x")
    facts["socketpair"] = b.recv(1) == b"x"
print(repr(facts))
"""


@pytest.mark.skipif(not ON_LINUX, reason="simulated on Linux only")
@pytest.mark.parametrize("lane", ["windows", "macos"])
def test_each_lane_takes_away_what_its_system_lacks_in_the_grader_and_its_workers(tmp_path, lane):
    """The simulation itself: the grader's process, and a process it starts as it starts its workers
    (``sys.executable -I -B SCRIPT``), both lack what the lane's system lacks."""
    script = tmp_path / "probe.py"
    script.write_text(PROBE, encoding="utf-8")
    runner = (
        f"import sys; sys.path.insert(0, {str(SIMULATED.parent)!r}); import simulated_os; "
        f"simulated_os.apply({lane!r}); import subprocess; sys.argv = ['probe', '--grader']; "
        f"exec(open({str(script)!r}).read()); "
        f"print(subprocess.run([sys.executable, '-I', '-B', {str(script)!r}], capture_output=True, "
        f"text=True).stdout, end='')"
    )
    proc = subprocess.run(
        [sys.executable, "-c", runner], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    grader, worker = (eval(line) for line in proc.stdout.splitlines())
    windows = lane == "windows"
    for facts in (grader, worker):
        assert facts["proc"] is False
        assert facts["platform"] == ("linux" if windows else "darwin")
        for name in ("fork", "killpg", "setsid", "SIGKILL", "AF_UNIX", "poll", "resource", "fcntl"):
            assert facts[name] is not windows, (name, facts)
        assert facts["O_BINARY"] is windows
    assert grader["start_method"] == "spawn" and grader["socketpair"]
    assert (
        grader["fork_context"] is not windows and ("fork" in grader["start_methods"]) is not windows
    )
