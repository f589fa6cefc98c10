"""Parent side of the worker: start it on a private copy of a submission, call, time out, kill.

Student code runs only in the worker process (:mod:`grader.worker`). This module owns that process:
it applies limits, enforces the per-call wall-clock timeout from the parent, captures the student's
output (capped, never parsed), and restarts a fresh worker after a crash or a timeout.
"""
from __future__ import annotations

import builtins
import errno
import json
import os
import queue
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import deque
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from . import worker as wire
from .errors import GradeError, GraderFault, StudentError

WORKER_SCRIPT = Path(wire.__file__).resolve()
MAX_SUBMISSION_FILES = 200
MAX_SUBMISSION_BYTES = 5 << 20


@dataclass(frozen=True)
class Limits:
    """Resource limits for one submission's worker (all from course.json ``limits``).

    Times are CPU seconds of the student's worker (the same on a loaded machine as on an idle one), with
    a wall-clock backstop WALL_FACTOR times larger for code that sleeps or blocks.

    :param call_timeout: CPU seconds for one call.
    :param problem_budget: CPU seconds for all the calls of one problem.
    :param submission_budget: CPU seconds for all the calls of one submission.
    :param memory_mb: address-space limit of the worker, MiB.
    :param output_kb: student output kept per call, KiB.
    :param import_timeout: CPU seconds for importing one of the submission's modules (before its first
        call, on a budget of its own: neither the call's nor the problem's).
    :param import_budget: CPU seconds for all the imports of one submission (a worker restarted after a
        crash imports again).
    :param imports: the packages the student's code may import besides the standard library (course.json
        ``imports``); any other import raises ModuleNotFoundError.
    """

    call_timeout: float = 5.0
    problem_budget: float = 15.0
    submission_budget: float = 120.0
    memory_mb: int = 1024
    output_kb: int = 64
    import_timeout: float = 10.0
    import_budget: float = 30.0
    imports: tuple[str, ...] = ("numpy",)

    def worker_limits(self) -> dict:
        return {"memory_bytes": self.memory_mb << 20, "file_bytes": 16 << 20, "open_files": 64,
                "cpu_seconds": int(self.submission_budget + self.import_budget) + 10, "processes": 64,
                "imports": list(self.imports)}


@dataclass(frozen=True)
class Reply:
    """One call's outcome: the decoded value, the arguments after the call (if asked), output, seconds."""

    value: Any
    inputs: Any
    output: str
    seconds: float


@dataclass
class _Sent:
    """A request written to the worker and not answered yet."""

    ticket: str                  # the request's nonce: its reply must echo it
    function: str
    return_inputs: bool
    size: int                    # bytes on the wire
    limit: float = 0.0           # its CPU seconds when it is not the call awaited
    module: str = ""             # an import's module ("" for a call)
    sent: float = 0.0            # time.monotonic() when written
    answer: Any = None           # a call with stand-ins: answer(function, args, kwargs) gives their values


SLOW_CALL = 0.1          # a call that takes longer than this share of the call timeout ends sending ahead
WALL_FACTOR = 5          # a call may take this many times its CPU limit in wall-clock time (sleeping, blocked)
FAST_CALL = 0.002        # wall seconds: a reply this soon after the CPU clock's last reading is charged its
                         # wall time (see Worker._charge)
AHEAD_BYTES = 64 << 10           # request bytes a worker may hold unanswered: a write then never waits on a
                                 # worker that is itself waiting to write a reply (a socket buffers ~200 KiB)


class _Lost(Exception):
    """A call sent ahead of the one awaited timed out or broke the worker: that call must be sent again."""


BWRAP, PROCESS = "bwrap", "process"
DROP_UID = 65534                 # nobody: the worker's uid when the grader runs as root
SANDBOX_TMP_BYTES = 64 << 20     # each worker's private /tmp: bytes,
SANDBOX_TMP_INODES = 4096        # and files and folders (tmpfs counts no bytes for an empty folder)


SITE = "/worker/site"             # where the course's allowed packages appear in the sandbox


def _interpreter() -> str:
    """The base interpreter (not a venv's): the sandbox runs it with ``-S``, so no site-packages is on its path."""
    return getattr(sys, "_base_executable", None) or sys.executable


def _runtime_paths() -> list[Path]:
    """Folders the worker needs to see: the interpreter and its standard library."""
    paths = {Path(sys.base_prefix), Path(_interpreter()).resolve().parent.parent}
    return sorted(p for p in paths if not str(p).startswith("/usr/"))


def _hidden_site_dirs(bound: list[Path]) -> list[str]:
    """The base interpreter's site-packages folders inside what the sandbox binds: covered by an empty
    read-only folder, so nothing installed there (pytest, the grader's own libraries) can be imported."""
    import site
    import sysconfig

    found = {sysconfig.get_paths(vars={"base": sys.base_prefix, "platbase": sys.base_prefix})[key]
             for key in ("purelib", "platlib")}
    found |= set(getattr(site, "getsitepackages", lambda: [])()) | {site.getusersitepackages()}
    found |= {f"/usr/lib/python3/dist-packages", f"/usr/local/lib/python3.{sys.version_info[1]}/dist-packages"}
    roots = [Path("/usr")] + bound
    return sorted(d for d in found if os.path.isdir(d) and any(Path(d).is_relative_to(r) for r in roots))


@lru_cache(maxsize=8)
def allowed_packages(names: tuple[str, ...]) -> dict[str, Path]:
    """The files of the course's allowed packages, by the name they get under SITE: each package's folder
    (or single module) as this interpreter imports it, and its wheel's bundled libraries (``numpy.libs``)."""
    import importlib.util

    found: dict[str, Path] = {}
    for name in names:
        spec = importlib.util.find_spec(name)
        if spec is None or spec.origin in (None, "built-in", "frozen") and not spec.submodule_search_locations:
            continue                                     # not installed here: importing it fails as usual
        place = Path(next(iter(spec.submodule_search_locations))) if spec.submodule_search_locations \
            else Path(spec.origin)
        found[place.name] = place
        libs = place.with_name(f"{name}.libs")
        if libs.is_dir():
            found[libs.name] = libs
    return found


# Syscalls the sandbox refuses (EPERM): the kernel keyring (as root the sandbox shares the host's user
# keyring of `nobody`, which outlives every run), POSIX message queues (they outlive the workers in the
# sandbox's IPC namespace), and reading or tracing another process.
BLOCKED_SYSCALLS = ("add_key", "request_key", "keyctl", "mq_open", "mq_unlink", "ptrace", "process_vm_readv",
                    "process_vm_writev")


@lru_cache(maxsize=1)
def _seccomp_program() -> bytes:
    """The BPF program for bwrap's ``--seccomp``, written by libseccomp (``pyseccomp``).

    :raises Exception: libseccomp is missing or unusable (then the bwrap level is not offered).
    """
    import pyseccomp

    rules = pyseccomp.SyscallFilter(pyseccomp.ALLOW)
    for name in BLOCKED_SYSCALLS:
        rules.add_rule(pyseccomp.ERRNO(errno.EPERM), name)
    with tempfile.TemporaryFile() as bpf:
        rules.export_bpf(bpf)
        bpf.seek(0)
        return bpf.read()


@lru_cache(maxsize=1)
def worker_seccomp_program() -> bytes | None:
    """The filter every worker adds to its own process before any student code (Linux; None without
    libseccomp): no SIGKILL to any process, and no lowering of its own limits (past a lowered CPU limit the
    kernel SIGKILLs it). A worker's death by SIGKILL then always comes from outside its code: the grader's
    kill, or the machine's (its out-of-memory killer), which is the grader's fault, never the student's."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import pyseccomp
    except ImportError:
        return None
    rules = pyseccomp.SyscallFilter(pyseccomp.ALLOW)
    eperm = pyseccomp.ERRNO(errno.EPERM)
    for name, arg in (("kill", 1), ("tkill", 1), ("tgkill", 2), ("rt_sigqueueinfo", 1), ("rt_tgsigqueueinfo", 2),
                      ("pidfd_send_signal", 1)):
        rules.add_rule(eperm, name, pyseccomp.Arg(arg, pyseccomp.EQ, signal.SIGKILL))
    rules.add_rule(eperm, "setrlimit")
    rules.add_rule(eperm, "prlimit64", pyseccomp.Arg(2, pyseccomp.NE, 0))     # reading a limit stays allowed
    with tempfile.TemporaryFile() as bpf:
        rules.export_bpf(bpf)
        bpf.seek(0)
        return bpf.read()


def _seccomp_file():
    """A temporary file holding the seccomp program, at its start, for one bwrap to read (``--seccomp FD``)."""
    bpf = tempfile.TemporaryFile()
    bpf.write(_seccomp_program())
    bpf.seek(0)
    return bpf


def _bwrap_command(copy: Path, python: list[str], drop_uid: bool, seccomp_fd: int,
                   inside: str = "/submission", imports: tuple[str, ...] = ("numpy",)) -> list[str]:
    """The bubblewrap command line: a mount namespace holding only /usr, the Python runtime (its
    site-packages covered), the course's allowed packages (``imports``, at SITE), the worker script
    and ``copy`` (the submission's private copy, or the spool of private copies, at ``inside``), all
    read-only; new pid, net, ipc and uts namespaces; a size-capped /tmp (each worker mounts a private
    one of its own over it, hence CAP_SYS_ADMIN, which the worker drops before any student code); the
    seccomp program read from ``seccomp_fd`` (pass it to the child); killed with its parent."""
    cmd = ["bwrap", "--seccomp", str(seccomp_fd), "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
           "--die-with-parent", "--new-session", "--ro-bind", "/usr", "/usr",
           "--perms", "1777", "--size", str(SANDBOX_TMP_BYTES), "--tmpfs", "/tmp"]   # before a runtime in /tmp
    for name in ("bin", "lib", "lib64", "sbin"):
        if os.path.islink(f"/{name}"):
            cmd += ["--symlink", os.readlink(f"/{name}"), f"/{name}"]
    made: set[Path] = set()
    for path in _runtime_paths():
        for parent in reversed(path.parents[:-1]):   # bwrap would make missing parents 0700
            if parent not in made:
                cmd += ["--perms", "0755", "--dir", str(parent)]
                made.add(parent)
        cmd += ["--ro-bind", str(path), str(path)]
    for hidden in _hidden_site_dirs(_runtime_paths()):
        cmd += ["--tmpfs", hidden, "--remount-ro", hidden]
    cmd += ["--perms", "0755", "--dir", "/worker", "--perms", "0755", "--dir", SITE,
            "--ro-bind", str(WORKER_SCRIPT), "/worker/worker.py"]
    for name, place in allowed_packages(tuple(imports)).items():
        cmd += ["--ro-bind", str(place), f"{SITE}/{name}"]
    cmd += ["--ro-bind", str(copy), inside, "--chdir", inside, "--proc", "/proc", "--dev", "/dev",
            "--cap-add", "CAP_SYS_ADMIN"]
    if drop_uid:                  # root: keep only what the worker needs to drop to `nobody` itself
        cmd += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    else:                         # not root: a user namespace maps us in
        cmd += ["--unshare-user"]
    return cmd + python


@lru_cache(maxsize=1)
def _bwrap_works() -> bool:
    if os.name != "posix" or shutil.which("bwrap") is None:
        return False
    try:
        bpf = _seccomp_file()
    except Exception:                                    # no libseccomp (or pyseccomp): no bwrap level
        return False
    with bpf, tempfile.TemporaryDirectory(prefix="grade-probe-") as tmp:    # the zygote's ping checks numpy
        cmd = _bwrap_command(Path(tmp), [_interpreter(), "-I", "-S", "-c", "pass"], os.geteuid() == 0,
                             bpf.fileno())
        try:
            return subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                  timeout=30, pass_fds=(bpf.fileno(),)).returncode == 0
        except (OSError, subprocess.TimeoutExpired):
            return False


def available_levels() -> list[str]:
    """The isolation levels this machine offers, strongest first: ``bwrap`` (Linux with bubblewrap), ``process``."""
    return ([BWRAP] if _bwrap_works() else []) + [PROCESS]


def describe(level: str) -> str:
    """The ``sandbox`` field of a score file: what isolated the student's code."""
    if level == BWRAP:
        who = f"uid {DROP_UID}" if os.geteuid() == 0 else "user namespace"
        return f"bwrap (mount, pid, net, ipc, uts namespaces; {who}; rlimits)"
    return "process (rlimits)" if os.name == "posix" else "process"


def private_copy(submission: Path, into: Path) -> Path:
    """Copy the submission's regular files (no symlinks, capped in count and size) into ``into/submission``.

    :raises StudentError: ``too_large`` when the submission exceeds the caps.
    """
    target = into / "submission"
    target.mkdir()
    count = size = 0
    for root, dirs, files in os.walk(submission, followlinks=False):
        dirs[:] = [d for d in dirs if d not in ("__pycache__", ".git") and not os.path.islink(os.path.join(root, d))]
        rel = Path(root).relative_to(submission)
        (target / rel).mkdir(exist_ok=True)
        for name in files:
            src = Path(root) / name
            if src.is_symlink() or not src.is_file():
                continue
            count += 1
            size += src.stat().st_size
            if count > MAX_SUBMISSION_FILES or size > MAX_SUBMISSION_BYTES:
                raise StudentError("too_large", f"the submission has more than {MAX_SUBMISSION_FILES} files "
                                                f"or {MAX_SUBMISSION_BYTES >> 20} MiB")
            try:
                shutil.copyfile(src, target / rel / name)
            except OSError as err:
                raise StudentError("unreadable", f"could not read {rel / name}: {err.strerror}") from None
            (target / rel / name).chmod(0o644)           # readable by the sandbox's unprivileged user
        (target / rel).chmod(0o755)
    return target


def _worker_env(home: str, tmp: str) -> dict[str, str]:
    env = {"PATH": os.environ.get("PATH", ""), "HOME": home, "TMPDIR": tmp, "PYTHONHASHSEED": "0",
           "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "LANG": "C.UTF-8"}
    for key in ("SYSTEMROOT", "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):   # Windows needs SYSTEMROOT
        if key in os.environ:
            env[key] = os.environ[key]
    return env


class Zygote:
    """A warm, sandboxed parent of workers (POSIX): numpy imported, no student code ever loaded.

    It forks one fresh worker per submission (so a worker costs a fork, not an interpreter start) and
    kills all of them, and everything they started, on request. At the ``bwrap`` level it lives in its
    own sandbox whose only writable folder is a spool holding the private copy of the submission being
    graded; it grades one submission at a time. Use as a context manager.

    :param wait: wait until it has started (numpy imported); with False, :meth:`wait` does that later,
        so the grader can collect its suites meanwhile.
    :param run_as: at the ``process`` level, as root, the user the workers run as (see :func:`run_as_ids`).
    :raises GradeError: the sandbox could not start.
    """

    def __init__(self, level: str, tmp_root: Path | None = None, wait: bool = True,
                 imports: tuple[str, ...] = Limits.imports, run_as: str | None = None):
        import socket

        self.level = level
        self.imports = tuple(imports)
        self.run_as = run_as_ids(run_as, level)
        self.drop_uid = level == BWRAP and os.geteuid() == 0
        tmp_root = Path(tmp_root).resolve() if tmp_root else None      # bwrap and the cwd need absolute paths
        self.spool = Path(tempfile.mkdtemp(prefix="grade-spool-", dir=tmp_root))     # what the sandbox sees
        self.spool.chmod(0o755)
        self.logs = Path(tempfile.mkdtemp(prefix="grade-logs-", dir=tmp_root))       # what it does not
        self._log = self.logs / "zygote.log"
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        bpf = _seccomp_file() if level == BWRAP else None
        if level == BWRAP:
            self.inside = "/spool"
            cmd = _bwrap_command(self.spool, [_interpreter(), "-I", "-S", "-B", "/worker/worker.py", "--zygote",
                                              "pidns", "--site", SITE], self.drop_uid, bpf.fileno(), self.inside,
                                 self.imports)
        else:
            self.inside = str(self.spool)
            cmd = [sys.executable, "-I", "-B", str(WORKER_SCRIPT), "--zygote", "nopidns"]
        with open(self._log, "ab") as log:
            self._proc = subprocess.Popen(cmd, stdin=theirs, stdout=subprocess.DEVNULL, stderr=log,
                                          cwd=self.spool, env=_worker_env(self.inside, "/tmp" if level == BWRAP
                                                                          else tempfile.gettempdir()),
                                          start_new_session=True, pass_fds=(bpf.fileno(),) if bpf else ())
        if bpf:
            bpf.close()
        theirs.close()
        self._ctrl = ours
        self._answers: queue.Queue = queue.Queue()
        self._exits: dict[int, int] = {}
        self._exited = threading.Condition()
        self._asked = 0                                  # the id of the last request: its answer must echo it
        self._closed = False
        self.host_pid: int | None = None                 # the zygote's pid as this process sees it
        threading.Thread(target=self._listen, daemon=True).start()
        self._ready = False
        try:
            self._send({"op": "ping"})
        except OSError:
            pass                                         # wait() reports it
        if wait:
            self.wait()

    def _send(self, message: dict, fds: Sequence[int] = ()) -> int:
        import socket

        self._asked += 1
        socket.send_fds(self._ctrl, [json.dumps({**message, "id": self._asked}).encode()], list(fds))
        return self._asked

    def wait(self) -> None:
        """Wait until the zygote answers (numpy imported); at once after the first time.

        :raises GradeError: the sandbox could not start: the grader's problem, not the class's.
        """
        if self._ready:
            return
        try:
            answer = self._answers.get(timeout=60)
        except queue.Empty:
            answer = None
        if answer is None or answer.get("op") != "pong" or answer.get("id") != 1:
            why = self._log.read_text(errors="replace").strip().splitlines()[-3:] if self._log.exists() else []
            self.close()
            raise GradeError(f"the {self.level} sandbox could not start: {' / '.join(why) or 'no output'}")
        if self.level == BWRAP and not answer.get("private_tmp"):
            self.close()
            raise GradeError("the bwrap sandbox could not start: it cannot mount a private /tmp for each worker")
        self.host_pid = (_host_pid(self._proc.pid, answer.get("pid"), descendants=True) if self.level == BWRAP
                         else self._proc.pid)
        self._ready = True

    def __enter__(self) -> "Zygote":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def alive(self) -> bool:
        return not self._closed and self._proc.poll() is None

    def _listen(self) -> None:
        while True:
            try:
                data = self._ctrl.recv(1 << 16)
            except OSError:
                data = b""
            if not data:
                self._answers.put(None)
                return
            message = json.loads(data)
            if message["op"] == "exit":
                with self._exited:
                    self._exits[message["pid"]] = message["code"]
                    self._exited.notify_all()
            else:
                self._answers.put(message)

    def _ask(self, message: dict, fds: Sequence[int] = (), timeout: float = 10.0) -> dict:
        """Send a request and take its answer. An answer that is late, or is not this request's (say the
        answer to a clean-up that outlasted the previous wait), ends this zygote: every later answer
        would be out of step, so the next student's request must never read it.

        :raises GraderFault: no answer in time, or one out of step; the zygote and its whole sandbox are
            then torn down (:attr:`alive` is False), and the caller starts a fresh one.
        """
        if not self.alive:
            raise GraderFault(f"the sandbox's zygote is gone ({message['op']})")
        try:
            ident = self._send(message, fds)
            answer = self._answers.get(timeout=timeout)
        except (OSError, queue.Empty):
            ident, answer = -1, None
        if answer is None or answer.get("id") != ident:
            self.close()
            why = "stopped answering" if answer is None else "answered out of step"
            raise GraderFault(f"the sandbox's zygote {why} ({message['op']}); it was torn down")
        return answer

    def spawn(self, folder: str, limits: dict, log_fd: int) -> tuple[Any, int, int | None]:
        """Fork a worker for the submission at ``folder`` (a path inside the zygote's view).

        :returns: ``(socket, pid, host_pid)``: the grader's end of the worker's channel, the worker's pid
            in the zygote's pid namespace, and as this process sees it (None when it cannot be found).
        :raises GraderFault: the zygote is gone or out of step.
        """
        import socket

        self.wait()
        ours, theirs = socket.socketpair()
        try:
            pid = self._ask({"op": "spawn", "dir": folder, "limits": limits}, [theirs.fileno(), log_fd])["pid"]
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        host = _host_pid(self.host_pid, pid) if self.level == BWRAP and self.host_pid else pid
        return ours, pid, host

    def exit_code(self, pid: int, timeout: float) -> int | None:
        """The exit code of worker ``pid`` (negative: killed by that signal), or None if not known in time."""
        with self._exited:
            self._exited.wait_for(lambda: pid in self._exits, timeout=timeout)
            return self._exits.pop(pid, None)

    def kill(self) -> None:
        """Kill every worker and everything they started; wait until they are gone.

        :raises GraderFault: something survived, or the zygote is gone or out of step; the zygote is then
            closed, which ends its whole sandbox, and must be replaced.
        """
        if not self._ask({"op": "kill"}).get("clean"):
            self.close()
            raise GraderFault("a worker survived the kill; the sandbox was torn down")

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            os.killpg(self._proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self._proc.wait()
        self._ctrl.close()
        shutil.rmtree(self.spool, ignore_errors=True)
        shutil.rmtree(self.logs, ignore_errors=True)


def _ns_pid(host: int) -> int | None:
    """The pid process ``host`` has in its own (innermost) pid namespace, from /proc (Linux)."""
    try:
        with open(f"/proc/{host}/status") as status:
            for line in status:
                if line.startswith("NSpid:"):
                    return int(line.split()[-1])
    except (OSError, ValueError, IndexError):
        pass
    return None


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(p) for p in f.read().split()]
    except (OSError, ValueError):
        return []


def _host_pid(parent: int | None, inner: int | None, descendants: bool = False) -> int | None:
    """The pid, as this process sees it, of the child of ``parent`` (or with ``descendants``, of any
    process below it) whose pid in its own namespace is ``inner``; None when /proc cannot tell."""
    if parent is None or inner is None:
        return None
    level, seen = _children(parent), 0
    while level and seen < 64:
        for pid in level:
            if _ns_pid(pid) == inner:
                return pid
        seen += len(level)
        level = [c for pid in level for c in _children(pid)] if descendants else []
    return None


class _CpuClock:
    """CPU seconds (user + system, every thread, and the children it waited for) used by one process,
    read from ``/proc/<pid>/stat`` through a descriptor kept open (Linux). Unforgeable by the student's
    code, unlike anything the worker reports."""

    TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") and "SC_CLK_TCK" in os.sysconf_names else 100

    def __init__(self, pid: int):
        self._fd = os.open(f"/proc/{pid}/stat", os.O_RDONLY)
        self.last = self()

    def __call__(self) -> float:
        try:
            data = os.pread(self._fd, 1024, 0)
            fields = data.rsplit(b")", 1)[1].split()
            return sum(int(f) for f in fields[11:15]) / self.TICK    # utime, stime, cutime, cstime
        except (OSError, IndexError, ValueError):
            return self.last                             # gone: no more CPU

    def close(self) -> None:
        os.close(self._fd)


def cpu_clock(pid: int | None) -> "_CpuClock | None":
    """A :class:`_CpuClock` for ``pid``, or None where /proc cannot be read (then the worker's own count)."""
    if pid is None or not sys.platform.startswith("linux"):
        return None
    try:
        return _CpuClock(pid)
    except OSError:
        return None


class _Channel:
    """The grader's end of a forked worker's socket, as a buffered stream whose reads and writes give up
    at ``deadline`` (``time.monotonic()``) with :class:`TimeoutError`."""

    def __init__(self, sock):
        self.sock = sock
        self.deadline = 0.0
        self._buffer = memoryview(b"")

    def _arm(self) -> None:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError
        self.sock.settimeout(left)

    def read(self, n: int) -> bytes:
        if not self._buffer:                             # one recv usually holds a whole reply
            self._arm()
            self._buffer = memoryview(self.sock.recv(min(max(n, 1 << 16), 1 << 20)))
            if not self._buffer:
                return b""
        data, self._buffer = self._buffer[:n], self._buffer[n:]
        return data.tobytes()

    def write(self, data: bytes) -> None:
        self._arm()
        self.sock.sendall(data)

    def flush(self) -> None:
        pass


class Worker:
    """A sandboxed worker process for one submission, started lazily and restarted after a failure.

    :param zygote: fork the worker from this warm zygote (same level) instead of starting Python.
    :param tmp_root: where the private copy goes (default: the system's temporary folder).
    :param modules: the submission's modules, imported by every new worker before its first call, each on
        ``limits.import_timeout`` (not on any call's or problem's time).
    :param run_as: at the ``process`` level, as root, the user the worker runs as (see :func:`run_as_ids`);
        with a zygote, the zygote's.
    :param functions: the course's functions -> their modules: one of those modules that fails to import is,
        for the modules that import it, a placeholder whose functions raise (so the wiring tests, which stand
        them in, still judge block.py when layernorm.py does not import).

    Times are the worker's CPU seconds where this process can read them (Linux: ``/proc``), with a
    wall-clock backstop WALL_FACTOR times larger; elsewhere (a student's macOS or Windows laptop) the
    worker's own count, and wall-clock time for timeouts.

    Use as a context manager; :meth:`close` kills the worker and all it started, and deletes the copy.
    """

    def __init__(self, submission: Path, limits: Limits, level: str = PROCESS, zygote: Zygote | None = None,
                 tmp_root: Path | None = None, modules: Sequence[str] = (), run_as: str | None = None,
                 functions: Mapping[str, str] | None = None):
        if level not in (BWRAP, PROCESS):
            raise ValueError(f"unknown isolation level {level!r}")
        if zygote is not None and zygote.level != level:
            raise ValueError("the zygote's isolation level differs from the worker's")
        self.limits = limits
        self.level = level
        self._zygote = zygote
        self._modules = list(dict.fromkeys(modules))
        self._functions: dict[str, list[str]] = {}       # module -> its course functions
        for function, module in (functions or {}).items():
            self._functions.setdefault(module, []).append(function)
        self._drop_uid = level == BWRAP and os.geteuid() == 0
        self._run_as = zygote.run_as if zygote is not None else run_as_ids(run_as, level)
        tmp_root = Path(tmp_root).resolve() if tmp_root else None
        self._tmp = Path(tempfile.mkdtemp(prefix="grade-", dir=zygote.spool if zygote else tmp_root))
        if zygote is not None:
            self._tmp.chmod(0o755)
        try:
            self.root = private_copy(Path(submission), self._tmp)
            self._writable = self._tmp
            if self._run_as:                             # a folder of its own to write in: nothing else is
                self._tmp.chmod(0o755)
                self._writable = self._tmp / "tmp"
                self._writable.mkdir(mode=0o700)
                os.chown(self._writable, *self._run_as)
        except BaseException:
            shutil.rmtree(self._tmp, ignore_errors=True)
            raise
        self._logs = zygote.logs if zygote else Path(tempfile.mkdtemp(prefix="grade-logs-", dir=tmp_root))
        self._log_path: Path | None = None
        self._log = None                                 # the student's output, read back after each call
        self._starts = 0
        self._proc: subprocess.Popen | None = None       # without a zygote
        self._pid: int | None = None                     # with a zygote
        self._channel = None
        self._requests = None
        self._replies: queue.Queue = queue.Queue()
        self._clock: _CpuClock | None = None             # the running worker's CPU time
        self._sent: deque[_Sent] = deque()              # written, not answered yet, in order
        self._unanswered = 0                             # their bytes
        self._answers: dict[str, tuple] = {}            # ticket -> (reply, seconds, limit, what it printed)
        self._last = 0.0                                 # time.monotonic() of the last reply
        self._cpu_last = 0.0                             # the worker's CPU seconds at the clock's last reading,
        self._clock_read = 0.0                           # and its time.monotonic()
        self._log_end = 0                                # where the log ended after the last reply
        self.busy = 0.0                                  # seconds the worker spent on calls, all of them
        self._imported = 0.0                             # seconds spent importing, all workers together
        self._import_failed: dict[str, StudentError] = {}   # module -> why it cannot be imported (it
                                                         # timed out or killed the worker): never tried again
        self._ahead_ended = False                        # after a slow call, a kill: no more calls sent ahead
        self.fault = ""                                  # set when the grader's own machinery failed

    def __enter__(self) -> "Worker":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _fault(self, message: str) -> GraderFault:
        """Record a failure of the grader's machinery (the runner checks it after every test)."""
        self.fault = self.fault or message
        return GraderFault(message)

    def start(self) -> None:
        """Start the worker now (otherwise the first call does): cold, its interpreter imports numpy and
        then the submission's modules while the grader gets on with something else."""
        if not self._running:
            self._write([], b"")

    def _start(self) -> None:
        limits = self.limits.worker_limits()
        program = worker_seccomp_program()
        if program:
            limits["seccomp"] = program.hex()
        limits["drop_uid"], limits["drop_gid"] = (DROP_UID, DROP_UID) if self._drop_uid else self._run_as or (None, None)
        limits["modules"] = self._functions
        limits["failed_imports"] = {module: error.message for module, error in self._import_failed.items()}
        if self.level == BWRAP:
            limits.update(tmp_bytes=SANDBOX_TMP_BYTES, tmp_inodes=SANDBOX_TMP_INODES)
        self._close_log()                                # a new log for every worker: a fresh worker cannot
        self._starts += 1                                # read what the one before it printed (through fd 2)
        self._log_path = self._logs / f"{self._tmp.name}-{self._starts}.log"
        self._log_end, self._last = 0, time.monotonic()
        log = open(self._log_path, "ab")
        self._log = open(self._log_path, "rb")
        try:
            if self._zygote is not None:
                inside = f"{self._zygote.inside}/{self.root.relative_to(self._zygote.spool)}"
                limits["tmp"] = "/tmp" if self.level == BWRAP else str(self._writable)
                try:
                    sock, self._pid, host = self._zygote.spawn(inside, limits, log.fileno())
                except GraderFault as err:
                    raise self._fault(f"could not start a worker: {err}") from None
                self._channel = _Channel(sock)
                self._set_clock(host)
                return
            else:
                bpf = _seccomp_file() if self.level == BWRAP else None
                if self.level == BWRAP:
                    root, tmp = "/submission", "/tmp"
                    cmd = _bwrap_command(self.root, [_interpreter(), "-I", "-S", "-B", "/worker/worker.py", root,
                                                     json.dumps(limits), "--site", SITE], self._drop_uid,
                                         bpf.fileno(), imports=self.limits.imports)
                else:
                    root, tmp = str(self.root), str(self._writable)
                    cmd = [sys.executable, "-I", "-B", str(WORKER_SCRIPT), root, json.dumps(limits)]
                self._proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log,
                                              cwd=self.root, env=_worker_env(root, tmp),
                                              start_new_session=(os.name == "posix"),
                                              pass_fds=(bpf.fileno(),) if bpf else ())
                if bpf:
                    bpf.close()
                self._requests, replies = self._proc.stdin, self._proc.stdout
                # at the bwrap level the worker is bwrap's grandchild in another pid namespace: its own count
                self._set_clock(self._proc.pid if self.level == PROCESS else None)
        finally:
            log.close()
        self._replies = queue.Queue()
        threading.Thread(target=self._read, args=(replies, self._replies), daemon=True).start()

    def _set_clock(self, pid: int | None) -> None:
        if self._clock is not None:
            self._clock.close()
        self._clock = cpu_clock(pid)
        self._cpu_last = self._clock.last if self._clock else 0.0
        self._clock_read = time.monotonic()

    @staticmethod
    def _read(stream, replies: queue.Queue) -> None:
        while True:
            try:
                replies.put(("ok", wire.read_message(stream)))
            except EOFError:
                replies.put(("eof", None))
                return
            except Exception as exc:                     # a garbled or oversized frame
                replies.put(("garbled", f"{type(exc).__name__}: {exc}"))
                return

    @property
    def starts(self) -> int:
        """How many times a worker process was started (a restart kills the calls sent ahead)."""
        return self._starts

    @property
    def _running(self) -> bool:
        return self._proc is not None or self._pid is not None

    def _exit_code(self, timeout: float) -> int | None:
        """The worker's exit code after its channel closed (negative: the signal that killed it)."""
        if self._zygote is not None:
            return self._zygote.exit_code(self._pid, timeout)
        try:
            code = self._proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None
        if self.level == BWRAP and code > 128:
            code = -(code - 128)                         # bwrap reports a signal as 128 + its number
        return code

    def _kill(self) -> None:
        """Kill the worker and every process it started."""
        proc, self._proc, self._pid = self._proc, None, None
        self._ahead_ended = True
        self._sent.clear()                               # (answers already in stay: this submission's
        self._unanswered = 0                             # code gave them, e.g. before a slow call)
        if self._clock is not None:
            self._clock.close()
            self._clock = None
        if self._zygote is not None:
            try:
                self._zygote.kill()
            except GraderFault:
                pass                                     # torn down: the next spawn says so, if one comes
            streams = [self._channel.sock] if self._channel else []
            self._channel = None
        elif proc is not None:
            try:
                if os.name == "posix":
                    os.killpg(proc.pid, signal.SIGKILL)
                else:
                    proc.kill()
            except (ProcessLookupError, PermissionError):
                pass
            proc.wait()
            streams = [proc.stdin, proc.stdout]
        else:
            return
        for stream in streams[:1]:                       # the reader thread owns the other one
            try:
                stream.close()
            except (OSError, AttributeError):
                pass

    def _read_log(self, start: int, end: int) -> str:
        """What the student's code printed between two log positions (at most ``output_kb``)."""
        if end <= start:
            return ""
        try:
            self._log.seek(start)
            data = self._log.read(min(end - start, self.limits.output_kb << 10))
        except OSError:
            return ""
        return data.decode("utf-8", errors="replace").replace("\x00", "")

    @staticmethod
    def encode_call(function: str, args: Sequence, kwargs: Mapping, return_inputs: bool = False) -> list[bytes]:
        """A call as wire frames, without its ticket: byte for byte the same for the same call."""
        return wire.encode({"function": function, "args": list(args), "kwargs": dict(kwargs),
                            "return_inputs": return_inputs})

    def _request(self, module: str, function: str, return_inputs: bool, call: Sequence[bytes]) -> tuple[_Sent, bytes]:
        """An encoded call (:meth:`encode_call`) as a request with a fresh ticket, and its bytes."""
        ticket = secrets.token_hex(8)      # a reply must echo it: nothing answers a call in advance
        head = json.loads(call[0])
        head["body"]["$dict"].update(id=ticket, module=module)
        data = b"".join(wire._HEADER.pack(len(f)) + f for f in [json.dumps(head).encode(), *call[1:]])
        return _Sent(ticket, function, return_inputs, len(data), limit=self.limits.call_timeout), data

    def _imports(self) -> tuple[list[_Sent], bytes]:
        """The requests that import the submission's modules in a new worker, each on its own time limit."""
        sent, data = [], []
        for module in self._modules:
            if module in self._import_failed:
                continue
            left = self.limits.import_budget - self._imported
            if left <= 0:
                self._import_failed[module] = StudentError(
                    "import_error", f"importing {module}.py was not run: the submission's "
                                    f"{self.limits.import_budget:g} s import budget is used up (slow imports)")
                continue
            ticket = secrets.token_hex(8)
            frames = wire.encode({"import": module, "id": ticket})
            request = b"".join(wire._HEADER.pack(len(f)) + f for f in frames)
            sent.append(_Sent(ticket, f"import {module}", False, len(request),
                              limit=min(self.limits.import_timeout, left), module=module))
            data.append(request)
        return sent, b"".join(data)

    def _write(self, sent: list[_Sent], data: bytes) -> None:
        """Write requests to the worker (started if need be, its imports first).

        :raises TimeoutError: a forked worker did not take them in time. :raises OSError: it is gone.
        """
        if not self._running:
            self._start()
            imports, request = self._imports()
            sent, data = imports + sent, request + data
        if not data:
            return
        self._send_bytes(data)
        now = time.monotonic()
        for one in sent:
            one.sent = now
            self._sent.append(one)
            self._unanswered += one.size

    def _send_bytes(self, data: bytes) -> None:
        """Write to the worker's channel (a forked worker's socket, giving up after the wall-clock backstop;
        a spawned worker's pipe)."""
        if self._channel is not None:
            self._channel.deadline = time.monotonic() + self.limits.call_timeout * WALL_FACTOR
            self._channel.write(data)
        else:
            self._requests.write(data)
            self._requests.flush()

    def ahead(self, calls: list[tuple[str, str, bool, Sequence[bytes]]]) -> list[str]:
        """Send calls before they are made, ``(module, function, return_inputs, encode_call(...))`` each, for
        the worker to run back to back (a forked worker only): a call then costs each side one wake-up less.
        :meth:`call` with ``ticket=`` collects one. Sends the first calls that fit in AHEAD_BYTES with the
        requests not answered yet, in one write, and returns their tickets.
        """
        if self._zygote is None or self._ahead_ended:
            return []
        sent, data, size = [], [], self._unanswered
        for module, function, return_inputs, call in calls:
            if module in self._import_failed:
                break
            one, request = self._request(module, function, return_inputs, call)
            if size + one.size > AHEAD_BYTES:
                break
            sent.append(one)
            data.append(request)
            size += one.size
        if not sent:
            return []
        try:
            self._write(sent, b"".join(data))
        except (OSError, TimeoutError):                  # the worker is gone: the calls, made, will say
            self._kill()
            return []
        except GraderFault:                              # the zygote is gone: the calls, made, will say
            return []
        return [one.ticket for one in sent]

    def drop_ahead(self) -> None:
        """Kill the worker if calls sent ahead are still unanswered (running or waiting to run): they are not
        wanted any more, and would run for nothing. The next call starts a fresh worker."""
        if any(not one.module for one in self._sent):
            self._kill()

    def _next_message(self, deadline: float) -> tuple[str, Any]:
        """The next reply: ``("ok", reply)``, ``("eof", None)`` when the worker died, ``("garbled", why)``.

        :raises TimeoutError: none by ``deadline`` (``time.monotonic()``).
        """
        if self._channel is not None:                    # a forked worker: read its socket right here
            self._channel.deadline = deadline
            try:
                return "ok", wire.read_message(self._channel)
            except (EOFError, ConnectionError):
                return "eof", None
            except TimeoutError:
                raise
            except Exception as exc:                     # a garbled or oversized frame
                return "garbled", f"{type(exc).__name__}: {exc}"
        try:                                             # a spawned worker: its pipe is read by a thread
            return self._replies.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            raise TimeoutError from None

    def _cpu_since(self, mark: float, start: float) -> float:
        """The worker's CPU seconds since ``mark`` (wall-clock seconds since ``start`` where it cannot be read)."""
        return self._clock() - mark if self._clock is not None else time.monotonic() - start

    def _wait(self, start: float, mark: float, limit: float) -> tuple[str, Any] | str:
        """The next message, or ``"cpu"``/``"wall"`` when the oldest request ran out of CPU time (``limit``
        seconds since ``mark``) or of wall-clock time (WALL_FACTOR times that since ``start``). The CPU
        clock is read only after ``limit`` seconds of wall clock: before that it cannot have run out."""
        wall_end = start + limit * (WALL_FACTOR if self._clock is not None else 1)
        deadline = min(start + limit, wall_end)
        while True:
            try:
                return self._next_message(deadline)
            except TimeoutError:
                now = time.monotonic()
                used = self._cpu_since(mark, start)
                if used >= limit:
                    return "cpu"
                if now >= wall_end:
                    return "wall"
                deadline = min(now + max(limit - used, 0.005), wall_end)

    def _timed_out(self, head: _Sent, limit: float, how: str) -> StudentError:
        what = f"importing {head.module}.py" if head.module else head.function
        if how == "cpu" and self._clock is not None:
            return StudentError("timeout", f"timed out after {limit:g} s of CPU time in {what}", seconds=limit)
        if self._clock is not None:
            return StudentError("timeout", f"timed out after {limit * WALL_FACTOR:g} s of wall-clock time in "
                                           f"{what} (waiting, not computing)", seconds=limit)
        return StudentError("timeout", f"timed out after {limit:g} s in {what}", seconds=limit)

    def _receive(self, ticket: str | None, timeout: float) -> None:
        """Read the reply to the oldest request. It gets ``timeout`` seconds if it is ``ticket``'s, its own
        limit otherwise (the call timeout, an import's), counted from when the worker could start it (the
        reply before it, or its sending).

        :raises StudentError: ``ticket``'s call timed out or broke the worker (which is then killed).
        :raises _Lost: an earlier request did (the worker is killed; ``ticket`` must be sent again).
        :raises GraderFault: the grader's machinery failed: the zygote died, or something other than the
            grader killed the worker (the machine's out-of-memory killer, say).
        """
        head = self._sent[0]
        mine = head.ticket == ticket
        limit = timeout if mine else head.limit
        start, mark = max(head.sent, self._last), self._cpu_last
        got = self._wait(start, mark, limit)
        while head.answer is not None and type(got) is tuple and got[0] == "ok" and _asks(got[1], head.ticket):
            self._answer_stand_in(head, got[1])
            got = self._wait(start, mark, limit)
        if type(got) is str:
            self.busy += limit
            error = self._timed_out(head, limit, got)    # (before the kill, which stops the CPU clock)
            self._kill()
            if head.module:
                self._imported += limit
                self._import_failed[head.module] = error
            if not mine:
                raise _Lost from None
            raise error
        status, payload = got
        now = time.monotonic()
        if status == "ok" and not _well_formed(payload, head.ticket, head.return_inputs):
            status, payload = "garbled", "a reply of the wrong form or out of turn"
        if status != "ok":
            code = self._exit_code(timeout=1) if status == "eof" else None
            seconds = self._cpu_since(mark, start) if self._clock is not None else now - start
            self.busy += seconds
            zygote_died = self._zygote is not None and status == "eof" and not self._zygote.alive
            self._kill()
            what = f"importing {head.module}.py" if head.module else f"{head.function}()"
            if zygote_died:
                raise self._fault(f"the sandbox's zygote died during {what}")
            if code == -signal.SIGKILL:
                raise self._fault(f"something other than the grader killed the worker with SIGKILL during "
                                  f"{what} (the machine's out-of-memory killer?)")
            error = _death(head.function, code, payload, head.module, seconds)
            if head.module:
                self._imported += seconds
                self._import_failed[head.module] = error
            if not mine:
                raise _Lost
            raise error
        self._unanswered -= self._sent.popleft().size
        seconds = self._charge(payload, now, start, mark)
        log = payload.get("log")
        if type(log) is not int or log < self._log_end:  # fd 2 moved by the student's code: ask the file
            log = max(self._log_end, os.fstat(self._log.fileno()).st_size)
        output = self._read_log(self._log_end, log)
        self._log_end, self._last = log, now
        if head.module:
            self._imported += seconds
            return
        self._answers[head.ticket] = (payload, seconds, limit, output)
        self.busy += seconds
        if seconds > SLOW_CALL * self.limits.call_timeout and any(not one.module for one in self._sent):
            self._kill()                                 # a slow submission: the calls queued behind this one
                                                         # could eat its budgets running ahead of the tests;
                                                         # they run when asked, in a fresh worker

    def _charge(self, reply: dict, now: float, start: float, mark: float) -> float:
        """The seconds a request that ran from ``start`` to ``now`` (wall) is charged: its CPU time since the
        clock's reading ``mark``; or its wall time when the clock was read less than FAST_CALL ago.

        Reading ``/proc`` after each of the ~70 replies of a submission cost about 10 µs each, and most of
        them come back to back (calls sent ahead). Such a call is far shorter than the clock's tick (10 ms)
        and its CPU time on one core at most its wall time; whatever it did use stays on the clock, and the
        next reading charges it. The clock is read at least every FAST_CALL, so every slower call (and every
        call after a pause) is charged its CPU time as before, from a reading at most FAST_CALL older than
        its start: the CPU-time limits keep their meaning to well within one tick.
        """
        if self._clock is None:                          # no /proc: the worker's own count
            reported = reply.get("cpu")
            return reported if type(reported) is float and 0 <= reported < 1e6 else now - start
        if now - self._clock_read < FAST_CALL:
            return now - start
        cpu = self._clock()
        self._cpu_last, self._clock_read = cpu, now
        return cpu - mark

    def _answer_stand_in(self, head: _Sent, request: dict) -> None:
        """Answer a stand-in's call (see :meth:`call`'s ``stand_ins``) with the reference's value, or say
        that the specified wiring never gives that function that input."""
        name, args, kwargs = request["standin"], request.get("args"), request.get("kwargs")
        try:
            if type(args) is not list or type(kwargs) is not dict:
                raise NotSpecified(f"{name}() was called in a way the grader cannot read")
            answer = {"id": head.ticket, "ok": True, "value": head.answer(name, args, kwargs)}
        except NotSpecified as why:
            answer = {"id": head.ticket, "ok": False, "error": str(why)}
        except Exception as exc:                         # the grader's own code failed: never the student's
            self._kill()
            raise self._fault(f"the grader failed to answer {name}() for a wiring test ({type(exc).__name__})") \
                from None
        self._send_bytes(b"".join(wire._HEADER.pack(len(f)) + f for f in wire.encode(answer)))

    def call(self, module: str, function: str, args: list, kwargs: dict, timeout: float,
             return_inputs: bool = False, ticket: str | None = None, encoded: Sequence[bytes] | None = None,
             stand_ins: tuple[Mapping[str, str], Callable[[str, list, dict], Any]] | None = None) -> Reply:
        """Run ``module.function(*args, **kwargs)`` in the worker and return its value as plain data.

        :param timeout: CPU seconds before the worker is killed, counted from when the worker could start
            the call (and WALL_FACTOR times that in wall-clock time).
        :param ticket: this very call's ticket from :meth:`ahead`, if it was sent ahead (unknown tickets,
            e.g. of a worker killed since, are ignored: the call is sent now).
        :param encoded: the call as :meth:`encode_call` gives it, if the caller has it already.
        :param stand_ins: ``(functions, answer)``: run the call with each of the student's ``functions``
            (name -> module) bound, wherever the submission's modules refer to it, to a stand-in whose
            value is ``answer(name, args, kwargs)``, computed here from trusted code (it raises
            :class:`NotSpecified` for an input the specified wiring never gives).
        :raises StudentError: the student's code raised, timed out, crashed, exited or returned bad data.
            Its ``message`` is the grader's own words (a hidden test shows it); ``public`` and ``detail`` may
            hold what the student's code chose (an exception's name, a traceback): public tests only.
        :raises GraderFault: the grader's machinery failed (see :meth:`_receive`).
        """
        for _ in range(len(self._modules) + 2):          # again when a request sent before broke the worker
            if module in self._import_failed:
                raise self._import_failed[module]
            try:
                if ticket is None or (ticket not in self._answers and all(s.ticket != ticket for s in self._sent)):
                    if stand_ins:
                        encoded = wire.encode({"function": function, "args": list(args), "kwargs": dict(kwargs),
                                               "return_inputs": return_inputs, "standins": dict(stand_ins[0])})
                    one, request = self._request(module, function, return_inputs,
                                                 encoded or self.encode_call(function, args, kwargs, return_inputs))
                    one.answer = stand_ins[1] if stand_ins else None
                    while self._sent and self._unanswered + one.size > AHEAD_BYTES:
                        self._receive(None, self.limits.call_timeout)        # make room: never both writing
                    self._write([one], request)
                    ticket = one.ticket
                while ticket not in self._answers:
                    if all(s.ticket != ticket for s in self._sent):
                        raise _Lost                      # the worker was killed after a slow call
                    self._receive(ticket, timeout)
                break
            except _Lost:
                ticket = None
            except TimeoutError:                         # the worker did not take the request in time
                self._kill()
                raise StudentError("timeout", f"timed out in {function} (it stopped reading its requests)",
                                   seconds=timeout) from None
            except OSError:                              # it is gone
                code = self._exit_code(timeout=1)
                self._kill()
                raise _death(function, code, None) from None
        else:
            raise self._fault(f"the worker kept failing before {function}() could run")
        payload, seconds, limit, output = self._answers.pop(ticket)
        if limit > timeout and seconds > timeout:        # it ran ahead, for longer than this call may take
            self._kill()
            raise StudentError("timeout", f"timed out after {timeout:g} s of CPU time in {function}", seconds=timeout)
        if not payload["ok"]:
            kind = payload["kind"]
            raise StudentError(kind, _words(kind, module, function), public=payload["error"][:SHOWN_TEXT],
                               detail=payload.get("traceback", "")[:SHOWN_TEXT * 4], output=output, seconds=seconds,
                               builtins=tuple(payload.get("builtins", ())))
        return Reply(payload["value"], payload.get("inputs"), output, seconds)

    def check_fault(self) -> None:
        """:raises GraderFault: the grader's machinery failed during this submission (even if a suite's
        ``except`` swallowed the exception)."""
        if self.fault:
            raise GraderFault(self.fault)

    def restart(self) -> None:
        """Kill the worker (and all it started); the next call starts a fresh one."""
        self._kill()

    def _close_log(self) -> None:
        if self._log is not None:
            self._log.close()
            self._log_path.unlink(missing_ok=True)
            self._log = None

    def close(self) -> None:
        self._kill()
        self._close_log()
        shutil.rmtree(self._tmp, ignore_errors=True)
        if self._zygote is None:
            shutil.rmtree(self._logs, ignore_errors=True)


def run_as_ids(user: str | None, level: str) -> tuple[int, int] | None:
    """The (uid, gid) of ``user``, whom workers run as at the ``process`` level when no bubblewrap can run
    (a Gradescope container): the grader runs as root and hides what the student must not read or
    write from that user; every process of it is killed after each submission.

    :raises GradeError: ``user`` is unknown, is root, or is asked for at the ``bwrap`` level or by a
        grader that is not root (it could not switch users).
    """
    if user is None:
        return None
    import pwd

    if level != PROCESS or os.name != "posix" or os.geteuid() != 0:
        raise GradeError("--run-as needs the process level (--sandbox process --unsafe) and a grader running as root")
    try:
        entry = pwd.getpwnam(user)
    except KeyError:
        raise GradeError(f"--run-as {user}: no such user") from None
    if entry.pw_uid == 0:
        raise GradeError(f"--run-as {user}: must not be root")
    _check_runs_as(entry.pw_uid, entry.pw_gid, user)
    return entry.pw_uid, entry.pw_gid


@lru_cache(maxsize=4)
def _check_runs_as(uid: int, gid: int, user: str) -> None:
    """:raises GradeError: ``user`` cannot run this Python with numpy (e.g. it is installed under /root)."""
    try:
        proc = subprocess.run([sys.executable, "-I", "-c", "import numpy, tempfile"], user=uid, group=gid,
                              extra_groups=[], cwd="/", stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
        ok = proc.returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        ok = False
    if not ok:
        raise GradeError(f"--run-as {user}: that user cannot run {sys.executable} with numpy; install Python and "
                         "the grader's requirements where every user can read them")


def started_worker(submission: Path, limits: Limits, level: str, tmp_root: Path | None = None,
                   modules: Sequence[str] = (), run_as: str | None = None,
                   functions: Mapping[str, str] | None = None) -> Worker | None:
    """A cold worker for ``submission``, started now: its interpreter imports numpy (and then the
    submission's ``modules``) while the caller gets on with something else. None when the submission cannot
    be copied (its first call meets the same error and reports it)."""
    try:
        worker = Worker(submission, limits, level, None, tmp_root, modules, run_as, functions)
    except StudentError:
        return None
    try:
        worker.start()
    except BaseException:
        worker.close()
        raise
    return worker


BUILTIN_EXCEPTIONS = frozenset(name for name, value in vars(builtins).items()
                               if isinstance(value, type) and issubclass(value, BaseException))
KINDS = {"import_error", "missing_function", "not_implemented", "raised", "bad_type", "too_large", "not_specified"}


class NotSpecified(Exception):
    """A stand-in was called on an input the specified wiring never gives it."""


def _asks(message: Any, ticket: str) -> bool:
    """Is ``message`` a stand-in's question for the call ``ticket``?"""
    return type(message) is dict and message.get("id") == ticket and type(message.get("standin")) is str
SHOWN_TEXT = 2000        # characters of the worker's own error text kept (public tests only)


def _words(kind: str, module: str, function: str) -> str:
    """What a failed call's ``kind`` means, in the grader's own words: all a hidden test shows of it (the
    worker's text is the student's process's, which could carry anything, a hidden input included)."""
    return {"import_error": f"importing {module}.py failed",
            "missing_function": f"{module}.py has no function {function}()",
            "not_implemented": f"{function}() is not implemented yet (it raises NotImplementedError)",
            "raised": f"{function}() raised an exception",
            "bad_type": f"{function}() returned a value that cannot be graded: return a numpy array of a "
                        "numeric dtype, or plain Python numbers",
            "too_large": f"{function}() returned a value that is too large",
            "not_specified": f"{function}() called one of your functions on an input the specified wiring never "
                             "gives it"}[kind]


def _well_formed(reply: Any, nonce: str, return_inputs: bool) -> bool:
    """A reply the worker's own code would send for this request (a student could write others)."""
    if type(reply) is not dict or reply.get("id") != nonce or type(reply.get("ok")) is not bool:
        return False
    if reply["ok"]:
        inputs = reply.get("inputs")
        return "value" in reply and (not return_inputs or (type(inputs) is list and len(inputs) == 2
                                                            and type(inputs[0]) is list and type(inputs[1]) is dict))
    builtins = reply.get("builtins", [])
    return (reply.get("kind") in KINDS and type(reply.get("error")) is str
            and type(reply.get("traceback", "")) is str
            and type(builtins) is list and all(type(b) is str and b in BUILTIN_EXCEPTIONS for b in builtins))


# Windows reports a crash as the NTSTATUS code the process died with (an exit status of 0xC0000000 or
# more, e.g. 3221225477), not as a signal; these are the ones student code meets.
NTSTATUS_CRASHES = {0xC0000005: "an access violation", 0xC00000FD: "a stack overflow",
                    0xC0000409: "a stack buffer overrun", 0xC0000374: "a corrupted heap",
                    0xC000001D: "an illegal instruction", 0xC0000094: "an integer division by zero",
                    0xC0000096: "a privileged instruction", 0xC0000006: "an in-page error",
                    0xC0000017: "no memory left", 0xC000013A: "Ctrl+C"}


def crash_name(code: int) -> str | None:
    """What killed a process that exited with ``code``, or None when it exited on its own (sys.exit).

    Negative: the POSIX signal (``SIGSEGV``). On Windows, an NTSTATUS error code (severity bits 11),
    seen unsigned (3221225477) or as a signed 32-bit number (-1073741819): "an access violation
    (0xC0000005)". An exit status a program chooses is 0-255 on POSIX; on Windows ``sys.exit(-1)`` gives
    0xFFFFFFFF, which is no NTSTATUS code and stays an exit.
    """
    unsigned = code & 0xFFFFFFFF
    if unsigned >> 30 == 0b11 and unsigned != 0xFFFFFFFF and (code > 255 or code < -255):
        return f"{NTSTATUS_CRASHES.get(unsigned, 'a Windows error')} (0x{unsigned:08X})"
    if code < 0:
        try:
            return signal.Signals(-code).name
        except ValueError:
            return f"signal {-code}"
    return None


def _death(function: str, code: int | None, garbled: str | None, module: str = "",
           seconds: float = 0.0) -> StudentError:
    """The error for a worker that died or broke its channel: the grader's words for hidden tests, the
    signal or exit status (which the student's code chooses) for public ones."""
    what = f"importing {module}.py" if module else f"{function}()"
    if garbled:
        return StudentError("crashed", f"the worker sent a broken reply during {what}",
                            public=f"the worker sent a broken reply during {what} ({garbled})", seconds=seconds)
    if code is None:
        return StudentError("crashed", f"the worker closed its channel during {what}", seconds=seconds)
    name = crash_name(code)
    if name is not None:
        return StudentError("crashed", f"crashed during {what}", public=f"crashed with {name} during {what}",
                            seconds=seconds)
    return StudentError("crashed", f"the process exited during {what}: do not call sys.exit or os._exit",
                        public=f"the process exited (status {code}) during {what}: do not call sys.exit or "
                               "os._exit", seconds=seconds)
