"""Stopping a batch leaves nothing running: SIGTERM is Ctrl-C (exit 130, whole score files kept), a
SIGKILL of `grade autograde` takes its grader processes and their sandboxes with it, and
`run_parallel` kills its grader processes however it ends. Processes are found by walking /proc
(descendants, seen while the batch runs) and by the test's own folder in their command line or
working directory (a marker no other process has)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import GOOD, LEVELS, write_tree

from grader.sandbox.policy import BWRAP, PROCESS

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="reads /proc; PR_SET_PDEATHSIG is Linux"
)

HANGS = {
    "mathy.py": "def double(x):\n    while True:\n        pass\n\ndef twice(n):\n    while True:\n "
    "       pass\n"
}


def _processes() -> dict[int, tuple[str, int, str, str]]:
    """pid -> (state, ppid, start time, command line and working directory) of every process we
    can see.

    A process may end between the listing of /proc and the reading of its files, or while they
    are read (FileNotFoundError, ProcessLookupError, or an empty or cut-short stat): it is gone,
    and left out."""
    table = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            fields = stat[stat.rindex(")") + 2 :].split()
            state, ppid, started = fields[0], int(fields[1]), fields[19]
            command = (
                Path(f"/proc/{entry}/cmdline")
                .read_bytes()
                .replace(b"\0", b" ")
                .decode(errors="replace")
            )
        except (OSError, ValueError, IndexError):  # gone while read
            continue
        try:
            command += " " + os.readlink(f"/proc/{entry}/cwd")
        except OSError:
            pass
        table[int(entry)] = (state, ppid, started, command)
    return table


def _descendants(root: int, table: dict) -> dict[int, tuple]:
    found, frontier = {}, [root]
    while frontier:
        parent = frontier.pop()
        for pid, info in table.items():
            if info[1] == parent and pid not in found:
                found[pid] = info
                frontier.append(pid)
    return found


def _left(seen: dict[int, tuple], marker: str) -> list[str]:
    """The processes of ``seen`` still alive (same pid and start time; a zombie is gone), and any
    other live process whose command line or folder holds ``marker``."""
    table = _processes()
    alive = {pid: info for pid, info in table.items() if info[0] != "Z"}
    left = [pid for pid, info in seen.items() if pid in alive and alive[pid][2] == info[2]]
    left += [pid for pid, info in alive.items() if marker in info[3] and pid != os.getpid()]
    return [f"{pid} {alive[pid][3][:160]}" for pid in sorted(set(left))]


def _poll_until_gone(seen: dict, marker: str, seconds: float = 10.0) -> list[str]:
    # seconds: a poll's give-up time (quiet: 0.1 s until all are gone; 90x margin, a busy machine)
    deadline = time.monotonic() + seconds
    while (left := _left(seen, marker)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


def _kill_left(seen: dict, marker: str) -> None:
    for line in _left(seen, marker):
        try:
            os.kill(int(line.split()[0]), signal.SIGKILL)
        except OSError:
            pass


@pytest.fixture
def hanging_batch(mini_course, tmp_path):
    """A long call_timeout, one good submission and three that loop for ever."""
    manifest = json.loads(mini_course.read_text())
    manifest["limits"] = {"call_timeout": 120, "problem_budget": 300, "submission_budget": 600}
    mini_course.write_text(json.dumps(manifest))
    subs = tmp_path / "subs"
    write_tree(subs / "a_good", GOOD)
    for i in range(3):
        write_tree(subs / f"hang{i}", HANGS)
    return subs


def _start_grading(
    mini_course, subs: Path, out: Path, level: str, log: Path
) -> tuple[subprocess.Popen, dict]:
    """`grade autograde --jobs 2` until the good submission is graded and two workers are running
    the loops; the process and every descendant seen meanwhile."""
    extra = ["--sandbox", "process", "--unsafe"] if level == PROCESS else ["--sandbox", "bwrap"]
    with open(log, "w") as f:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "grader",
                "autograde",
                str(subs),
                "--out",
                str(out),
                "--course",
                str(mini_course),
                "--jobs",
                "2",
                *extra,
            ],
            stdout=f,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    seen: dict[int, tuple] = {}
    deadline = time.monotonic() + 120  # quiet: 0.7 s; 170x margin, a busy machine
    while time.monotonic() < deadline and proc.poll() is None:
        found = _descendants(proc.pid, _processes())
        seen.update(found)
        looping = [info for info in found.values() if "worker.py" in info[3] and info[0] == "R"]
        if (out / "a_good.json").exists() and len(looping) >= 2:
            break
        time.sleep(0.1)
    else:
        proc.kill()
        pytest.fail(f"grading never reached the looping submissions: {log.read_text()}")
    seen.update(_descendants(proc.pid, _processes()))
    return proc, seen


@pytest.mark.parametrize("level", [lv for lv in (BWRAP, PROCESS) if lv in LEVELS])
def test_sigterm_stops_autograde_like_ctrl_c_and_leaves_no_process(
    mini_course, hanging_batch, tmp_path, level
):
    out, log = tmp_path / "scores", tmp_path / "log.txt"
    proc, seen = _start_grading(mini_course, hanging_batch, out, level, log)
    try:
        os.kill(proc.pid, signal.SIGTERM)
        code = proc.wait(timeout=60)  # quiet: 0.1 s (a call: 120 s to time out)
        assert code == 130, log.read_text()
        last = log.read_text().strip().splitlines()[-1]
        assert last.startswith("Interrupted: ") and "kept in" in last, log.read_text()
        assert _poll_until_gone(seen, str(tmp_path)) == []
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        _kill_left(seen, str(tmp_path))
    assert (
        json.loads((out / "a_good.json").read_text())["score"] == 4
    )  # written before: kept, whole
    assert not list(out.glob(".score-*.tmp")) and not (out / ".grading").exists()
    assert sorted(p.name for p in out.glob("*.json")) == ["a_good.json"]


@pytest.mark.parametrize("level", [lv for lv in (BWRAP, PROCESS) if lv in LEVELS])
def test_a_sigkilled_autograde_takes_its_grader_processes_and_sandboxes_with_it(
    mini_course, hanging_batch, tmp_path, level
):
    out, log = tmp_path / "scores", tmp_path / "log.txt"
    proc, seen = _start_grading(mini_course, hanging_batch, out, level, log)
    try:
        os.kill(proc.pid, signal.SIGKILL)  # no handler, no finally: only the kernel acts
        proc.wait(timeout=60)  # quiet: 0.01 s; a hang's backstop
        assert _poll_until_gone(seen, str(tmp_path)) == []
    finally:
        _kill_left(seen, str(tmp_path))


RUN_PARALLEL = """
import json, multiprocessing, os, sys
from pathlib import Path
from grader.grading import executors
from grader.grading.results import Job
from grader.course.manifest import load
course = load(sys.argv[1])
jobs = [Job(p.name, p) for p in sorted(Path(sys.argv[2]).iterdir())]

def on_result(graded):
    raise KeyboardInterrupt                              # e.g. Ctrl-C while a result is written

try:
    executors.run_parallel(course, jobs, on_result, hidden=True, processes=2, level="process",
                           tmp_root=Path(sys.argv[3]))
except KeyboardInterrupt:
    pass


def parent(pid):                     # None: it ended while /proc was read (listed, then gone)
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None

children = [int(e) for e in os.listdir("/proc") if e.isdigit() and parent(e) == os.getpid()]
print(json.dumps({"active": len(multiprocessing.active_children()), "children": children}))
"""


def test_run_parallel_kills_and_joins_its_grader_processes_however_it_ends(
    hanging_batch, mini_course, tmp_path
):
    (tmp_path / "work").mkdir()
    # timeout: a backstop against a hang, not a measurement (quiet: 0.5 s; 240x margin)
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            RUN_PARALLEL,
            str(mini_course),
            str(hanging_batch),
            str(tmp_path / "work"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.splitlines()[-1]) == {
        "active": 0,
        "children": [],
    }  # still running, none left
    assert _poll_until_gone({}, str(tmp_path)) == []


DEATH = """
import os, sys, time
from grader.grading import executors
from grader.grading.results import Job
mode = sys.argv[1]
if mode == "orphan":                  # the grader process's parent dies: it must die too
    r, w = os.pipe()
    middle = os.fork()
    if middle == 0:
        child = os.fork()
        if child == 0:
            quiet = os.open(os.devnull, os.O_WRONLY)         # hold no pipe of the test's open
            os.dup2(quiet, 1)
            os.dup2(quiet, 2)
            executors._die_with_parent(os.getppid())
            time.sleep(120)
            os._exit(0)
        os.write(w, str(child).encode())
        time.sleep(120)
        os._exit(0)
    child = int(os.read(r, 32))
    time.sleep(0.5)                   # let the child reach its prctl
    os.kill(middle, 9)
    os.waitpid(middle, 0)
    print(child)
else:                                 # the parent died before the prctl: exit at once
    pid = os.fork()
    if pid == 0:
        executors._die_with_parent(os.getppid() + 1000000)    # not the parent it has now
        os._exit(0)
    print(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
"""


def test_a_grader_process_dies_with_its_parent():
    # timeout: a backstop against a hang, not a measurement (quiet: 0.8 s; 75x margin); so below
    proc = subprocess.run(
        [sys.executable, "-c", DEATH, "orphan"], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    child, table = int(proc.stdout), _processes()
    seen = {child: table[child]} if child in table else {}
    try:
        assert _poll_until_gone(seen, "\0never\0") == []
    finally:
        _kill_left(seen, "\0never\0")


def test_a_grader_process_whose_parent_is_already_gone_exits_at_once():
    proc = subprocess.run(
        [sys.executable, "-c", DEATH, "race"], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "1"
