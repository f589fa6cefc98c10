"""Parent side of the worker: start it on a private copy of a submission, call, time out, kill.

Student code runs only in the worker process (:mod:`grader.sandbox.child.worker`). This module owns that process:
it applies limits, enforces the per-call wall-clock timeout from the parent, captures the student's
output (capped, never parsed), and restarts a fresh worker after a crash or a timeout.
"""
from __future__ import annotations

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
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from grader.course.limits import Limits
from grader.errors import GraderFault, StudentError
from grader.sandbox.child import protocol as wire
from grader.sandbox.policy import (BWRAP, DROP_UID, PROCESS, SANDBOX_TMP_BYTES, SANDBOX_TMP_INODES, SITE, WORKER_SCRIPT,
                                   _bwrap_command, _interpreter, _seccomp_file, _worker_env, private_copy, run_as_ids,
                                   worker_seccomp_program)
from grader.sandbox.replies import NotSpecified, SHOWN_TEXT, _asks, _death, _well_formed, _words
from grader.sandbox.zygote import Zygote, _CpuClock, cpu_clock


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
