"""The worker process: a private copy of a submission, the worker started on it (forked by a zygote,
or a fresh interpreter) under its limits, its channel and CPU clock, its captured output, and its
kill.

What the worker is asked and how its replies are judged is :mod:`grader.sandbox.client`'s job.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Mapping

from grader.course.limits import Limits
from grader.errors import GraderFault
from grader.sandbox.channel import PipeChannel, SocketChannel
from grader.sandbox.clock import Meter
from grader.sandbox.policy import (
    BWRAP,
    DROP_UID,
    PROCESS,
    SANDBOX_TMP_BYTES,
    SANDBOX_TMP_INODES,
    SITE,
    WORKER_SCRIPT,
    _bwrap_command,
    _interpreter,
    _worker_env,
    private_copy,
    run_as_ids,
)
from grader.sandbox.seccomp import _seccomp_file, worker_seccomp_program
from grader.sandbox.zygote import Zygote


class Copy:
    """A submission's private copy (:func:`~grader.sandbox.policy.private_copy`) in a folder of its
    own under ``parent`` (a zygote's spool, which its sandbox sees), which each of the submission's
    workers reads in turn (one per phase: none can write in it); and, for workers that run as
    another user (``run_as``), a folder they may write in. :meth:`close` deletes it all.

    :raises StudentError: the submission cannot be copied (too many files, too large, unreadable).
    """

    def __init__(
        self, submission: Path, parent: Path | None, run_as: tuple[int, int] | None, shared: bool
    ):
        self.parent = parent
        self.folder = Path(tempfile.mkdtemp(prefix="grade-", dir=parent))
        try:
            if shared or run_as:  # a zygote's sandbox, or another user, reads it
                self.folder.chmod(0o755)
            self.root = private_copy(Path(submission), self.folder)
            self.writable = self.folder
            if run_as:  # a folder of its own to write in: nothing else is
                self.writable = self.folder / "tmp"
                self.writable.mkdir(mode=0o700)
                os.chown(self.writable, *run_as)
        except BaseException:
            shutil.rmtree(self.folder, ignore_errors=True)
            raise

    def close(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)


class Forked:
    """A worker forked from this very process, for a student's ``grade check`` on Linux: its numpy
    is imported already (a new interpreter's start and numpy's import are most of a check's cost),
    and no reference is here to inherit. Before the worker runs, every module but the standard
    library's and the course's allowed packages' is forgotten, so the student's code imports what
    autograde's worker would. What
    :class:`subprocess.Popen` gives of a started process, and the grader's end of its socket."""

    def __init__(self, root: str, limits: dict, log_fd: int, imports: tuple[str, ...]):
        import importlib.util
        import socket

        ours, theirs = socket.socketpair()
        env = _worker_env(root, limits["tmp"])
        pid = os.fork()
        if pid == 0:  # the worker: never returns
            try:
                ours.close()
                keep = set(sys.stdlib_module_names) | set(imports)
                for name in [n for n in sys.modules if n.partition(".")[0] not in keep]:
                    del sys.modules[name]
                sys.meta_path[:] = [
                    f for f in sys.meta_path if _module_of(f).partition(".")[0] in keep
                ]
                if not sys.flags.safe_path:  # as `python -I`: no script folder, no working folder
                    del sys.path[0]
                os.environ.clear()
                os.environ.update(env)
                spec = importlib.util.spec_from_file_location("_worker_main", WORKER_SCRIPT)
                worker = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(worker)
                sys.modules["__main__"] = worker  # as in a worker started alone
                worker._sibling("zygote")._child(
                    theirs, [theirs.fileno(), log_fd], {"dir": root, "limits": limits}, worker.main
                )
            finally:
                os._exit(0)
        theirs.close()
        self.pid, self.sock, self.returncode = pid, ours, None

    def poll(self) -> int | None:
        if self.returncode is None:
            done, status = os.waitpid(self.pid, os.WNOHANG)
            if done:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if deadline is not None and time.monotonic() > deadline:
                raise subprocess.TimeoutExpired(["worker"], timeout)
            time.sleep(0.005)
        return self.returncode


def _one_blas_thread() -> bool:
    """Whether this process's numpy was told to use one thread (grader/__init__.py), as every
    worker's is: a forked worker keeps the numpy it finds, and a student's product on more threads
    would use more CPU time."""
    env = _worker_env("", "")
    return all(os.environ.get(name) == env[name] for name in env if name.endswith("_NUM_THREADS"))


def _module_of(finder) -> str:
    return finder.__module__ if isinstance(finder, type) else type(finder).__module__


class WorkerProcess:
    """One submission's worker process, started again after each kill (see
    :class:`grader.sandbox.client.Worker` for the parameters). :meth:`close` kills it and all it
    started, and deletes the copy if it made it."""

    def __init__(
        self,
        submission: Path,
        limits: Limits,
        level: str = PROCESS,
        zygote: Zygote | None = None,
        tmp_root: Path | None = None,
        run_as: str | None = None,
        copy: Copy | None = None,
        fork: bool = False,
    ):
        if level not in (BWRAP, PROCESS):
            raise ValueError(f"unknown isolation level {level!r}")
        if zygote is not None and zygote.level != level:
            raise ValueError("the zygote's isolation level differs from the worker's")
        self.limits = limits
        self.level = level
        self.zygote = zygote
        self.fork = (
            fork
            and level == PROCESS
            and zygote is None
            and sys.platform.startswith("linux")
            and run_as is None
            and hasattr(os, "fork")
            and _one_blas_thread()
        )
        self._drop_uid = level == BWRAP and os.geteuid() == 0
        self._run_as = zygote.run_as if zygote is not None else run_as_ids(run_as, level)
        tmp_root = Path(tmp_root).resolve() if tmp_root else None
        self._own_copy = copy is None
        self.copy = copy or Copy(
            submission, zygote.spool if zygote else tmp_root, self._run_as, zygote is not None
        )
        self.root, self._writable, self._tmp = self.copy.root, self.copy.writable, self.copy.folder
        self._logs = (
            zygote.logs if zygote else Path(tempfile.mkdtemp(prefix="grade-logs-", dir=tmp_root))
        )
        self._log_path: Path | None = None
        self._log = None  # the student's output, read back after each reply
        self._log_end = 0  # where the log ended after the last reply
        self.starts = 0
        self._proc: subprocess.Popen | Forked | None = None  # without a zygote
        self._pid: int | None = None  # with a zygote
        self.channel: SocketChannel | PipeChannel | None = None
        self.meter: Meter | None = None  # the running worker's time

    @property
    def batches(self) -> bool:
        """Whether the worker takes calls sent ahead (a socket: a forked worker's)."""
        return self.zygote is not None or self.fork

    @property
    def running(self) -> bool:
        return self._proc is not None or self._pid is not None

    def start(self, failed_imports: Mapping[str, str]) -> None:
        """Start a worker, and tell it the modules it must not import (-> why).

        :raises GraderFault: the zygote could not fork one.
        """
        limits = self.limits.worker_limits()
        program = (
            worker_seccomp_program() if self.zygote is not None else None
        )  # (grading, not a check)
        if program:
            limits["seccomp"] = program.hex()
        limits["drop_uid"], limits["drop_gid"] = (
            (DROP_UID, DROP_UID) if self._drop_uid else self._run_as or (None, None)
        )
        limits["failed_imports"] = dict(failed_imports)
        if self.level == BWRAP:
            limits.update(tmp_bytes=SANDBOX_TMP_BYTES, tmp_inodes=SANDBOX_TMP_INODES)
        self._close_log()  # a new log for every worker: a fresh worker cannot
        self.starts += 1  # read what the one before it printed (through fd 2)
        self._log_path = self._logs / f"{self._tmp.name}-{id(self)}-{self.starts}.log"
        self._log_end = 0
        log = open(self._log_path, "ab")
        self._log = open(self._log_path, "rb")
        try:
            if self.zygote is not None:
                inside = f"{self.zygote.inside}/{self.root.relative_to(self.zygote.spool)}"
                limits["tmp"] = "/tmp" if self.level == BWRAP else str(self._writable)
                try:
                    sock, self._pid, host = self.zygote.spawn(inside, limits, log.fileno())
                except GraderFault as err:
                    raise GraderFault(f"could not start a worker: {err}") from None
                self.channel = SocketChannel(sock)
                self._set_meter(host)
                return
            if self.fork:
                limits["tmp"] = str(self._writable)
                self._proc = Forked(str(self.root), limits, log.fileno(), self.limits.imports)
                self.channel = SocketChannel(self._proc.sock)
                self._set_meter(self._proc.pid)
                return
            bpf = _seccomp_file() if self.level == BWRAP else None
            if self.level == BWRAP:
                root, tmp = "/submission", "/tmp"
                cmd = _bwrap_command(
                    self.root,
                    [
                        _interpreter(),
                        "-I",
                        "-S",
                        "-B",
                        "/worker/worker.py",
                        root,
                        json.dumps(limits),
                        "--site",
                        SITE,
                    ],
                    self._drop_uid,
                    bpf.fileno(),
                    imports=self.limits.imports,
                )
            else:
                root, tmp = str(self.root), str(self._writable)
                cmd = [sys.executable, "-I", "-B", str(WORKER_SCRIPT), root, json.dumps(limits)]
            self._proc = subprocess.Popen(
                cmd,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
                cwd=self.root,
                env=_worker_env(root, tmp),
                start_new_session=(os.name == "posix"),
                pass_fds=(bpf.fileno(),) if bpf else (),
            )
            if bpf:
                bpf.close()
            # at the bwrap level the worker is bwrap's grandchild in another pid namespace: its own
            # count
            self._set_meter(self._proc.pid if self.level == PROCESS else None)
        finally:
            log.close()
        self.channel = PipeChannel(self._proc.stdin, self._proc.stdout)

    def _set_meter(self, pid: int | None) -> None:
        if self.meter is not None:
            self.meter.close()
        zygote = self.zygote
        self.meter = Meter(
            pid, zygote.group if zygote else None, zygote.host_pid if zygote else None
        )

    def exit_code(self, timeout: float) -> int | None:
        """The worker's exit code after its channel closed (negative: the signal that killed it)."""
        if self.zygote is not None:
            return self.zygote.exit_code(self._pid, timeout)
        try:
            code = self._proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None
        if self.level == BWRAP and code > 128:
            code = -(code - 128)  # bwrap reports a signal as 128 + its number
        return code

    @property
    def zygote_died(self) -> bool:
        return self.zygote is not None and not self.zygote.alive

    def kill(self) -> None:
        """Kill the worker and every process it started."""
        proc, self._proc, self._pid = self._proc, None, None
        if self.meter is not None:
            self.meter.close()
            self.meter = None
        channel, self.channel = self.channel, None
        if self.zygote is not None:
            try:
                self.zygote.kill()
            except GraderFault:
                pass  # torn down: the next spawn says so, if one comes
        elif proc is not None:
            try:
                if hasattr(os, "killpg"):  # the worker's session: all it started
                    os.killpg(proc.pid, signal.SIGKILL)
                else:  # Windows: TerminateProcess, the worker alone
                    proc.kill()
            except (ProcessLookupError, PermissionError):
                pass
            proc.wait()
        if channel is not None:
            channel.close()

    def output(self, end: Any) -> str:
        """What the student's code printed since the last reply, up to the log position ``end`` the
        worker reported (at most ``output_kb``). A position that is no int, or goes back, is not
        believed: fd 2 was moved by the student's code, and the file says where the log ends."""
        if type(end) is not int or end < self._log_end:
            end = max(self._log_end, os.fstat(self._log.fileno()).st_size)
        start, self._log_end = self._log_end, end
        if end <= start:
            return ""
        try:
            self._log.seek(start)
            data = self._log.read(min(end - start, self.limits.output_kb << 10))
        except OSError:
            return ""
        return data.decode("utf-8", errors="replace").replace("\x00", "")

    def _close_log(self) -> None:
        if self._log is not None:
            self._log.close()
            try:
                self._log_path.unlink(missing_ok=True)
            except PermissionError:  # Windows: a killed worker's interpreter (a venv launcher's
                pass  # child) may hold it a moment longer; its folder goes at close
            self._log = None

    def close(self) -> None:
        self.kill()
        self._close_log()
        if self._own_copy:
            self.copy.close()
        if self.zygote is None:
            shutil.rmtree(self._logs, ignore_errors=True)
