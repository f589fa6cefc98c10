"""Parent side of the worker: start it on a private copy of a submission, call, time out, kill.

Student code runs only in the worker process (:mod:`grader.worker`). This module owns that process:
it applies limits, enforces the per-call wall-clock timeout from the parent, captures the student's
output (capped, never parsed), and restarts a fresh worker after a crash or a timeout.
"""
from __future__ import annotations

import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from . import worker as wire
from .errors import StudentError

WORKER_SCRIPT = Path(wire.__file__).resolve()
MAX_SUBMISSION_FILES = 200
MAX_SUBMISSION_BYTES = 5 << 20


@dataclass(frozen=True)
class Limits:
    """Resource limits for one submission's worker (all from course.json ``limits``).

    :param call_timeout: seconds of wall clock for one call.
    :param problem_budget: seconds of wall clock for all the calls of one problem.
    :param submission_budget: seconds of wall clock for all the calls of one submission.
    :param memory_mb: address-space limit of the worker, MiB.
    :param output_kb: student output kept per call, KiB.
    """

    call_timeout: float = 5.0
    problem_budget: float = 15.0
    submission_budget: float = 120.0
    memory_mb: int = 1024
    output_kb: int = 64

    def worker_limits(self) -> dict:
        return {"memory_bytes": self.memory_mb << 20, "file_bytes": 16 << 20, "open_files": 64,
                "cpu_seconds": int(self.submission_budget) + 10, "processes": 64}


@dataclass(frozen=True)
class Reply:
    """One call's outcome: the decoded value, the arguments after the call (if asked), output, seconds."""

    value: Any
    inputs: Any
    output: str
    seconds: float


BWRAP, PROCESS = "bwrap", "process"
DROP_UID = 65534                 # nobody: the worker's uid when the grader runs as root
SANDBOX_TMP_BYTES = 64 << 20     # the worker's private /tmp


def _runtime_paths() -> list[Path]:
    """Folders the worker needs to see: the interpreter, the standard library and numpy."""
    import numpy

    paths = {Path(sys.base_prefix), Path(sys.prefix), Path(sys.executable).resolve().parent.parent,
             Path(numpy.__file__).resolve().parent.parent}
    return sorted(p for p in paths if not str(p).startswith("/usr/"))


def _bwrap_command(copy: Path, python: list[str], drop_uid: bool) -> list[str]:
    """The bubblewrap command line: a mount namespace holding only /usr, the Python runtime, numpy, the
    worker script (read-only) and the submission's private copy; new pid, net, ipc and uts namespaces;
    a private size-capped /tmp; killed with its parent."""
    cmd = ["bwrap", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
           "--die-with-parent", "--new-session", "--ro-bind", "/usr", "/usr"]
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
    cmd += ["--ro-bind", str(WORKER_SCRIPT), "/worker/worker.py", "--bind", str(copy), "/submission",
            "--chdir", "/submission", "--proc", "/proc", "--dev", "/dev",
            "--size", str(SANDBOX_TMP_BYTES), "--tmpfs", "/tmp"]
    if drop_uid:                  # root: keep only what the worker needs to drop to `nobody` itself
        cmd += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    else:                         # not root: a user namespace maps us in
        cmd += ["--unshare-user"]
    return cmd + python


@lru_cache(maxsize=1)
def _bwrap_works() -> bool:
    if os.name != "posix" or shutil.which("bwrap") is None:
        return False
    with tempfile.TemporaryDirectory(prefix="grade-probe-") as tmp:
        cmd = _bwrap_command(Path(tmp), [sys.executable, "-I", "-c", "import numpy"], os.geteuid() == 0)
        try:
            return subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL, timeout=30).returncode == 0
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
            shutil.copyfile(src, target / rel / name)
    return target


class Worker:
    """A sandboxed worker process for one submission, started lazily and restarted after a failure.

    Use as a context manager; :meth:`close` kills the process group and deletes the private copy.
    """

    def __init__(self, submission: Path, limits: Limits, level: str = PROCESS):
        if level not in (BWRAP, PROCESS):
            raise ValueError(f"unknown isolation level {level!r}")
        self.limits = limits
        self.level = level
        self._drop_uid = level == BWRAP and os.geteuid() == 0
        self._tmp = Path(tempfile.mkdtemp(prefix="grade-"))
        try:
            self.root = private_copy(Path(submission), self._tmp)
            if self._drop_uid:           # the student's code may write in its own (private) folder
                for path in [self.root, *self.root.rglob("*")]:
                    os.chown(path, DROP_UID, DROP_UID, follow_symlinks=False)
        except BaseException:
            shutil.rmtree(self._tmp, ignore_errors=True)
            raise
        self._log_path = self._tmp / "output.log"
        self._proc: subprocess.Popen | None = None
        self._replies: queue.Queue = queue.Queue()

    def __enter__(self) -> "Worker":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _start(self) -> None:
        limits = self.limits.worker_limits()
        if self.level == BWRAP:
            root, tmp = "/submission", "/tmp"
            limits["drop_uid"] = DROP_UID if self._drop_uid else None
            cmd = _bwrap_command(self.root, [sys.executable, "-I", "-B", "/worker/worker.py", root,
                                             json.dumps(limits)], self._drop_uid)
        else:
            root, tmp = str(self.root), str(self._tmp)
            cmd = [sys.executable, "-I", "-B", str(WORKER_SCRIPT), root, json.dumps(limits)]
        env = {"PATH": os.environ.get("PATH", ""), "HOME": root, "TMPDIR": tmp, "PYTHONHASHSEED": "0",
               "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "LANG": "C.UTF-8"}
        for key in ("SYSTEMROOT", "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):   # Windows needs SYSTEMROOT
            if key in os.environ:
                env[key] = os.environ[key]
        log = open(self._log_path, "ab")
        self._proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log,
                                      cwd=self.root, env=env, start_new_session=(os.name == "posix"))
        log.close()
        self._replies = queue.Queue()
        threading.Thread(target=self._read, args=(self._proc.stdout, self._replies), daemon=True).start()

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

    def _kill(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        try:
            if os.name == "posix":
                os.killpg(proc.pid, signal.SIGKILL)
            else:
                proc.kill()
        except (ProcessLookupError, PermissionError):
            pass
        proc.wait()
        for stream in (proc.stdin, proc.stdout):
            try:
                stream.close()
            except OSError:
                pass

    def _output_since(self, offset: int) -> str:
        try:
            with open(self._log_path, "rb") as f:
                f.seek(offset)
                data = f.read(self.limits.output_kb << 10)
        except OSError:
            return ""
        return data.decode("utf-8", errors="replace").replace("\x00", "")

    def call(self, module: str, function: str, args: list, kwargs: dict, timeout: float,
             return_inputs: bool = False) -> Reply:
        """Run ``module.function(*args, **kwargs)`` in the worker and return its value as plain data.

        :param timeout: seconds of wall clock before the worker is killed.
        :raises StudentError: the student's code raised, timed out, crashed, exited or returned bad data.
        """
        if self._proc is None:
            self._start()
        offset = self._log_path.stat().st_size
        request = {"op": "call", "module": module, "function": function, "args": list(args),
                   "kwargs": dict(kwargs), "return_inputs": return_inputs}
        started = time.monotonic()
        try:
            wire.write_message(self._proc.stdin, request)
            status, payload = self._replies.get(timeout=timeout)
        except queue.Empty:
            self._kill()
            raise StudentError("timeout", f"timed out after {timeout:g} s in {function}") from None
        except (BrokenPipeError, OSError):
            status, payload = "eof", None
        seconds = time.monotonic() - started
        if status != "ok":
            try:
                code = self._proc.wait(timeout=1) if self._proc else None
            except subprocess.TimeoutExpired:
                code = None
            self._kill()
            if self.level == BWRAP and code is not None and code > 128:
                code = -(code - 128)                     # bwrap reports a signal as 128 + its number
            raise StudentError("crashed", _death(function, code, payload))
        output = self._output_since(offset)
        if not payload["ok"]:
            raise StudentError(payload["kind"], payload["error"], detail=payload.get("traceback", ""),
                               output=output)
        return Reply(payload["value"], payload.get("inputs"), output, seconds)

    def close(self) -> None:
        self._kill()
        shutil.rmtree(self._tmp, ignore_errors=True)


def _death(function: str, code: int | None, garbled: str | None) -> str:
    if garbled:
        return f"the worker sent a broken reply during {function}() ({garbled})"
    if code is not None and code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        hint = " (out of memory?)" if name == "SIGKILL" else ""
        return f"crashed with {name}{hint} in {function}()"
    return f"the process exited (status {code}) during {function}(): do not call sys.exit or os._exit"
