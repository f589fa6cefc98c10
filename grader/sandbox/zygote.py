"""The zygote's client: a warm, sandboxed parent that forks one worker per submission, and the /proc
readings of the pids (across namespaces) of the processes it forks (their CPU clocks:
:mod:`grader.sandbox.clock`).
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
from pathlib import Path
from typing import Any, Sequence

from grader.course.limits import Limits
from grader.errors import GradeError, GraderFault
from grader.sandbox import cgroups
from grader.sandbox.policy import (
    BWRAP,
    SITE,
    WORKER_SCRIPT,
    _bwrap_command,
    _interpreter,
    _worker_env,
    run_as_ids,
    scratch,
)
from grader.sandbox.seccomp import _seccomp_file


class Zygote:
    """A warm, sandboxed parent of workers (POSIX): numpy imported, no student code ever loaded.

    It forks one fresh worker per submission (so a worker costs a fork, not an interpreter start)
    and kills all of them, and everything they started, on request. At the ``bwrap`` level it lives
    in its own sandbox whose only writable folder is a spool holding the private copy of the
    submission being graded; it grades one submission at a time. Use as a context manager.

    :param wait: wait until it has started (numpy imported); with False, :meth:`wait` does that
        later, so the grader can collect its suites meanwhile.
    :param run_as: at the ``process`` level, as root, the user the workers run as (see
        :func:`run_as_ids`).
    :raises GradeError: the sandbox could not start.
    """

    def __init__(
        self,
        level: str,
        tmp_root: Path | None = None,
        wait: bool = True,
        imports: tuple[str, ...] = Limits.imports,
        run_as: str | None = None,
    ):
        import socket

        self.level = level
        self.imports = tuple(imports)
        self.run_as = run_as_ids(run_as, level)
        self.drop_uid = level == BWRAP and os.geteuid() == 0
        tmp_root = (
            Path(tmp_root).resolve() if tmp_root else None
        )  # bwrap and the cwd need absolute paths
        self.spool = Path(
            tempfile.mkdtemp(prefix="grade-spool-", dir=scratch(tmp_root))
        )  # what the sandbox sees
        self.spool.chmod(0o755)
        self.logs = Path(tempfile.mkdtemp(prefix="grade-logs-", dir=tmp_root))  # what it does not
        self._log = self.logs / "zygote.log"
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        bpf = _seccomp_file() if level == BWRAP else None
        if level == BWRAP:
            self.inside = "/spool"
            cmd = _bwrap_command(
                self.spool,
                [
                    _interpreter(),
                    "-I",
                    "-S",
                    "-B",
                    "/worker/worker.py",
                    "--zygote",
                    "pidns",
                    "--site",
                    SITE,
                ],
                self.drop_uid,
                bpf.fileno(),
                self.inside,
                self.imports,
            )
        else:
            self.inside = str(self.spool)
            cmd = [sys.executable, "-I", "-B", str(WORKER_SCRIPT), "--zygote", "nopidns"]
        with open(self._log, "ab") as log:
            self._proc = subprocess.Popen(
                cmd,
                stdin=theirs,
                stdout=subprocess.DEVNULL,
                stderr=log,
                cwd=self.spool,
                env=_worker_env(self.inside, "/tmp" if level == BWRAP else tempfile.gettempdir()),
                start_new_session=True,
                pass_fds=(bpf.fileno(),) if bpf else (),
            )
        if bpf:
            bpf.close()
        theirs.close()
        self._ctrl = ours
        self._answers: queue.Queue = queue.Queue()
        self._exits: dict[int, int] = {}
        self._exited = threading.Condition()
        self._asked = 0  # the id of the last request: its answer must echo it
        self._closed = False
        self.host_pid: int | None = None  # the zygote's pid as this process sees it
        self.group: cgroups.Group | None = None  # around it and its workers, where one can be made
        threading.Thread(target=self._listen, daemon=True).start()
        self._ready = False
        try:
            self._send({"op": "ping"})
        except OSError:
            pass  # wait() reports it
        if wait:
            self.wait()

    def _send(self, message: dict, fds: Sequence[int] = ()) -> int:
        import socket

        self._asked += 1
        socket.send_fds(
            self._ctrl, [json.dumps({**message, "id": self._asked}).encode()], list(fds)
        )
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
            why = (
                self._log.read_text(errors="replace").strip().splitlines()[-3:]
                if self._log.exists()
                else []
            )
            self.close()
            raise GradeError(
                f"the {self.level} sandbox could not start: {' / '.join(why) or 'no output'}"
            )
        if self.level == BWRAP and not answer.get("private_tmp"):
            self.close()
            raise GradeError(
                "the bwrap sandbox could not start: it cannot mount a private /tmp for each worker"
            )
        self.host_pid = (
            _host_pid(self._proc.pid, answer.get("pid"), descendants=True)
            if self.level == BWRAP
            else self._proc.pid
        )
        self.group = self._group()
        self._ready = True

    def _group(self) -> cgroups.Group | None:
        """A control group around the zygote, made before it forks its first worker: every process
        of every worker, however it was started, counts on the workers' CPU clocks and dies with
        their kill."""
        group = cgroups.make(self.spool.name) if self.host_pid else None
        if group is not None:
            try:
                group.add(self.host_pid)
            except OSError:
                group.close()
                group = None
        return group

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
        """Send a request and take its answer. An answer that is late, or is not this request's (say
        the answer to a clean-up that outlasted the previous wait), ends this zygote: every later
        answer would be out of step, so the next student's request must never read it.

        :raises GraderFault: no answer in time, or one out of step; the zygote and its whole sandbox
            are then torn down (:attr:`alive` is False), and the caller starts a fresh one.
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

        :returns: ``(socket, pid, host_pid)``: the grader's end of the worker's channel, the
            worker's pid in the zygote's pid namespace, and as this process sees it (None when it
            cannot be found).
        :raises GraderFault: the zygote is gone or out of step.
        """
        import socket

        self.wait()
        ours, theirs = socket.socketpair()
        try:
            pid = self._ask(
                {"op": "spawn", "dir": folder, "limits": limits}, [theirs.fileno(), log_fd]
            )["pid"]
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        host = _host_pid(self.host_pid, pid) if self.level == BWRAP and self.host_pid else pid
        return ours, pid, host

    def exit_code(self, pid: int, timeout: float) -> int | None:
        """The exit code of worker ``pid`` (negative: killed by that signal), or None if not known
        in time."""
        with self._exited:
            self._exited.wait_for(lambda: pid in self._exits, timeout=timeout)
            return self._exits.pop(pid, None)

    def kill(self) -> None:
        """Kill every worker and everything they started; wait until they are gone.

        :raises GraderFault: something survived, or the zygote is gone or out of step; the zygote is
            then closed, which ends its whole sandbox, and must be replaced.
        """
        if not self._ask({"op": "kill"}).get("clean"):
            self.close()
            raise GraderFault("a worker survived the kill; the sandbox was torn down")
        if self.group is not None:  # (outside a pid namespace: what left the workers'
            self.group.kill_all_but(self.host_pid)  # process groups and their user)

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
        if self.group is not None:
            self.group.kill_all_but(None)
            self.group.close()
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
