"""Parent side of the worker: the calls a submission's worker is sent (some ahead of the tests), their
replies and timeouts, and the stand-ins' answers.

Student code runs only in the worker process (:mod:`grader.sandbox.child.worker`), which
:mod:`grader.sandbox.process` starts, limits and kills. This module talks to it: it enforces the per-call
timeout from the parent, charges each call its CPU time (:mod:`grader.sandbox.clock`), hands back the student's
output (capped, never parsed), and starts a fresh worker after a crash or a timeout.
"""
from __future__ import annotations

import json
import secrets
import signal
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from grader.course.limits import Limits
from grader.errors import GraderFault, StudentError
from grader.sandbox.child import protocol as wire
from grader.sandbox.clock import WALL_FACTOR
from grader.sandbox.policy import PROCESS
from grader.sandbox.process import WorkerProcess
from grader.sandbox.replies import NotSpecified, SHOWN_TEXT, _asks, _death, _well_formed, _words
from grader.sandbox.zygote import Zygote

__all__ = ["AHEAD_BYTES", "SLOW_CALL", "WALL_FACTOR", "Reply", "Worker", "started_worker"]

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
AHEAD_BYTES = 64 << 10           # request bytes a worker may hold unanswered: a write then never waits on a
                                 # worker that is itself waiting to write a reply (a socket buffers ~200 KiB)


def _framed(frames: Sequence[bytes]) -> bytes:
    """Wire frames as the bytes written: each after its length."""
    return b"".join(wire._HEADER.pack(len(f)) + f for f in frames)


class _Lost(Exception):
    """A call sent ahead of the one awaited timed out or broke the worker: that call must be sent again."""


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
    worker's own count, and wall-clock time for timeouts (:class:`grader.sandbox.clock.Meter`).

    Use as a context manager; :meth:`close` kills the worker and all it started, and deletes the copy.
    """

    def __init__(self, submission: Path, limits: Limits, level: str = PROCESS, zygote: Zygote | None = None,
                 tmp_root: Path | None = None, modules: Sequence[str] = (), run_as: str | None = None,
                 functions: Mapping[str, str] | None = None):
        self._process = WorkerProcess(submission, limits, level, zygote, tmp_root, run_as)
        self.limits = limits
        self.level = level
        self.root = self._process.root
        self._modules = list(dict.fromkeys(modules))
        self._functions: dict[str, list[str]] = {}       # module -> its course functions
        for function, module in (functions or {}).items():
            self._functions.setdefault(module, []).append(function)
        self._sent: deque[_Sent] = deque()              # written, not answered yet, in order
        self._unanswered = 0                             # their bytes
        self._answers: dict[str, tuple] = {}            # ticket -> (reply, seconds, limit, what it printed)
        self._last = 0.0                                 # time.monotonic() of the last reply
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
        if not self._process.running:
            self._write([], b"")

    def _start(self) -> None:
        self._last = time.monotonic()
        try:
            self._process.start(self._functions,
                                {module: error.message for module, error in self._import_failed.items()})
        except GraderFault as err:
            raise self._fault(str(err)) from None

    @property
    def starts(self) -> int:
        """How many times a worker process was started (a restart kills the calls sent ahead)."""
        return self._process.starts

    def _kill(self) -> None:
        """Kill the worker and every process it started."""
        self._ahead_ended = True
        self._sent.clear()                               # (answers already in stay: this submission's
        self._unanswered = 0                             # code gave them, e.g. before a slow call)
        self._process.kill()

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
        data = _framed([json.dumps(head).encode(), *call[1:]])
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
            request = _framed(wire.encode({"import": module, "id": ticket}))
            sent.append(_Sent(ticket, f"import {module}", False, len(request),
                              limit=min(self.limits.import_timeout, left), module=module))
            data.append(request)
        return sent, b"".join(data)

    def _write(self, sent: list[_Sent], data: bytes) -> None:
        """Write requests to the worker (started if need be, its imports first).

        :raises TimeoutError: a forked worker did not take them in time. :raises OSError: it is gone.
        """
        if not self._process.running:
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
        self._process.channel.send(data, self.limits.call_timeout * WALL_FACTOR)

    def ahead(self, calls: list[tuple[str, str, bool, Sequence[bytes]]]) -> list[str]:
        """Send calls before they are made, ``(module, function, return_inputs, encode_call(...))`` each, for
        the worker to run back to back (a forked worker only): a call then costs each side one wake-up less.
        :meth:`call` with ``ticket=`` collects one. Sends the first calls that fit in AHEAD_BYTES with the
        requests not answered yet, in one write, and returns their tickets.
        """
        if self._process.zygote is None or self._ahead_ended:
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
        meter, channel = self._process.meter, self._process.channel
        start, mark = max(head.sent, self._last), meter.cpu_last
        got = meter.wait(channel.next_message, start, mark, limit)
        while head.answer is not None and type(got) is tuple and got[0] == "ok" and _asks(got[1], head.ticket):
            self._answer_stand_in(head, got[1])
            got = meter.wait(channel.next_message, start, mark, limit)
        if type(got) is str:
            self.busy += limit
            what = f"importing {head.module}.py" if head.module else head.function
            error = meter.timed_out(what, limit, got)    # (before the kill, which stops the CPU clock)
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
            code = self._process.exit_code(timeout=1) if status == "eof" else None
            seconds = meter.since(mark, start) if meter.clock is not None else now - start
            self.busy += seconds
            zygote_died = status == "eof" and self._process.zygote_died
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
        seconds = meter.charge(payload, now, start, mark)
        output = self._process.output(payload.get("log"))
        self._last = now
        if head.module:
            self._imported += seconds
            return
        self._answers[head.ticket] = (payload, seconds, limit, output)
        self.busy += seconds
        if seconds > SLOW_CALL * self.limits.call_timeout and any(not one.module for one in self._sent):
            self._kill()                                 # a slow submission: the calls queued behind this one
                                                         # could eat its budgets running ahead of the tests;
                                                         # they run when asked, in a fresh worker

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
        self._send_bytes(_framed(wire.encode(answer)))

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
                code = self._process.exit_code(timeout=1)
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

    def close(self) -> None:
        self._kill()
        self._process.close()


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
