"""The requests a submission's worker was sent and has not answered yet: written in order (a fresh
worker is given the reference's modules it holds, if any, then imports the submission's modules),
each reply read under its request's own time limit, judged, and charged.

Each request carries a fresh ticket its reply must echo, so nothing answers a call in advance.
"""

from __future__ import annotations

import secrets
import signal
import time
from collections import deque
from dataclasses import dataclass
from typing import Mapping, Sequence

from grader.course.limits import Limits
from grader.errors import GraderFault, StudentError
from grader.sandbox.child import protocol as wire
from grader.sandbox.clock import WALL_FACTOR
from grader.sandbox.process import WorkerProcess
from grader.sandbox.replies import _death, _well_formed, oom_kills


@dataclass
class _Sent:
    """A request written to the worker and not answered yet."""

    ticket: str  # the request's nonce: its reply must echo it
    function: str
    return_inputs: bool
    size: int  # bytes on the wire
    limit: float = 0.0  # its CPU seconds when it is not the call awaited
    module: str = ""  # an import's module ("" for a call)
    sent: float = 0.0  # time.monotonic() when written
    setup: bool = False  # the reference's modules, given before any student code runs

    @property
    def call(self) -> bool:
        return not self.module and not self.setup


@dataclass
class Spent:
    """What a submission's imports cost, over all its workers (one per phase, and each restart)."""

    imports: float = 0.0


SLOW_CALL = 0.1  # a call that takes longer than this share of the call timeout ends sending ahead


class _Lost(Exception):
    """A call sent ahead of the one awaited timed out or broke the worker: that call must be sent
    again."""


def encode_call(
    function: str, args: Sequence, kwargs: Mapping, return_inputs: bool = False
) -> list[bytes]:
    """A call as wire frames, without its ticket: byte for byte the same for the same call.

    :raises wire.WireError: an argument may not travel (the suite's error: said as the argument's).
    """
    try:
        return wire.encode(
            {
                "function": function,
                "args": list(args),
                "kwargs": dict(kwargs),
                "return_inputs": return_inputs,
            }
        )
    except wire.WireError as err:  # its words are a reply's ("returned a ...")
        what = str(err).replace("returned ", "", 1).partition(": return")[0]
        raise wire.WireError(
            err.kind,
            f"{function}() cannot be sent this call: an argument may "
            f"not travel to the worker ({what}); the types that do are listed in "
            "grader.feedback.values",
        ) from None


class InFlight:
    """One submission's requests in flight, over the worker process it restarts when need be, and
    what the submission's code cost and broke so far (its seconds, the modules that cannot be
    imported, a fault of the grader's machinery). :class:`grader.sandbox.client.Worker` makes the
    calls through it."""

    def __init__(
        self,
        process: WorkerProcess,
        limits: Limits,
        modules: Sequence[str] = (),
        reference: Mapping[str, str] | None = None,
        spent: Spent | None = None,
    ):
        self.process = process
        self.limits = limits
        self.modules = list(dict.fromkeys(modules))
        self.reference = dict(reference or {})  # module -> the reference's source, for every worker
        self.spent = spent or Spent()
        self.sent: deque[_Sent] = deque()  # written, not answered yet, in order
        self.answers: dict[str, tuple] = {}  # ticket -> (reply, seconds, limit, what it printed)
        self._last = 0.0  # time.monotonic() of the last reply
        self.busy = 0.0  # seconds the worker spent on calls, all of them
        self.import_failed: dict[str, StudentError] = {}  # module -> why it cannot be imported (it
        # timed out or killed the worker): never tried again
        self.ahead_ended = False  # after a slow call, a kill: no more calls sent ahead
        self._unused: list[str] = []  # fresh tickets, drawn 64 at a time
        self._oom_kills: int | None = None
        self.watch: dict[str, tuple[str, ...]] = {}  # module -> the modules its calls report using
        self.fault = ""  # set when the grader's own machinery failed

    def failed(self, message: str) -> GraderFault:
        """Record a failure of the grader's machinery (the runner checks it after every test)."""
        self.fault = self.fault or message
        return GraderFault(message)

    def _start(self) -> None:
        self._last = time.monotonic()
        self._oom_kills = oom_kills()  # the kernel's count, before this worker
        try:
            self.process.start(
                {module: error.message for module, error in self.import_failed.items()}
            )
        except GraderFault as err:
            raise self.failed(str(err)) from None

    def kill(self) -> None:
        """Kill the worker and every process it started."""
        self.ahead_ended = True
        self.sent.clear()  # (answers already in stay: this submission's
        # code gave them, e.g. before a slow call)
        self.process.kill()

    def pending(self, ticket: str) -> bool:
        """Whether ``ticket``'s request is written and its answer not collected yet."""
        return ticket in self.answers or any(s.ticket == ticket for s in self.sent)

    def _ticket(self) -> str:
        """A fresh ticket: 8 random bytes, unknown to the worker until its request is written."""
        if not self._unused:
            drawn = secrets.token_bytes(8 * 64)
            self._unused = [drawn[i : i + 8].hex() for i in range(0, len(drawn), 8)]
        return self._unused.pop()

    def request(
        self, module: str, function: str, return_inputs: bool, call: Sequence[bytes]
    ) -> tuple[_Sent, bytes]:
        """An encoded call (:func:`encode_call`) as a request with a fresh ticket, and its bytes: an
        envelope (the ticket and the module) followed by the call as it was encoded."""
        ticket = self._ticket()  # a reply must echo it: nothing answers a call in advance
        watch = {"watch": list(self.watch[module])} if self.watch.get(module) else {}
        envelope = wire.encode({"id": ticket, "module": module, "call": True, **watch})
        data = wire.framed(envelope) + wire.framed(call)
        return _Sent(
            ticket, function, return_inputs, len(data), limit=self.limits.call_timeout
        ), data

    def _imports(self) -> tuple[list[_Sent], bytes]:
        """The requests a new worker gets first: the reference's modules it holds (if any), then the
        imports of the submission's modules, each on its own time limit."""
        sent, data = [], []
        if self.reference:
            ticket = self._ticket()
            request = wire.framed(wire.encode({"reference": self.reference, "id": ticket}))
            sent.append(
                _Sent(
                    ticket,
                    "loading the reference",
                    False,
                    len(request),
                    limit=self.limits.import_timeout,
                    setup=True,
                )
            )
            data.append(request)
        for module in self.modules:
            if module in self.import_failed:
                continue
            left = self.limits.import_budget - self.spent.imports
            if left <= 0:
                self.import_failed[module] = StudentError(
                    "import_error",
                    f"importing {module}.py was not run: the submission's "
                    f"{self.limits.import_budget:g} s import budget is used up (slow imports)",
                )
                continue
            ticket = self._ticket()
            request = wire.framed(wire.encode({"import": module, "id": ticket}))
            sent.append(
                _Sent(
                    ticket,
                    f"import {module}",
                    False,
                    len(request),
                    limit=min(self.limits.import_timeout, left),
                    module=module,
                )
            )
            data.append(request)
        return sent, b"".join(data)

    def write(self, sent: list[_Sent], data: bytes) -> None:
        """Write requests to the worker (started if need be, its imports first).

        :raises TimeoutError: a forked worker did not take them in time. :raises OSError: it is
            gone.
        """
        if not self.process.running:
            self._start()
            imports, request = self._imports()
            sent, data = imports + sent, request + data
        if not data:
            return
        self._send_bytes(data)
        now = time.monotonic()
        for one in sent:
            one.sent = now
            self.sent.append(one)

    def _send_bytes(self, data: bytes) -> None:
        """Write to the worker's channel (a forked worker's socket, giving up after the wall-clock
        backstop; a spawned worker's pipe)."""
        self.process.channel.send(data, self.limits.call_timeout * WALL_FACTOR)

    def receive(self, ticket: str | None, timeout: float, wall: float = float("inf")) -> None:
        """Read the reply to the oldest request. It gets ``timeout`` seconds if it is ``ticket``'s,
        its own limit otherwise (the call timeout, an import's), counted from when the worker could
        start it (the reply before it, or its sending), and at most ``wall`` seconds of wall-clock
        time.

        :raises StudentError: ``ticket``'s call timed out or broke the worker (which is then
            killed).
        :raises _Lost: an earlier request did (the worker is killed; ``ticket`` must be sent again).
        :raises GraderFault: the grader's machinery failed: the zygote died, or something other than
            the grader killed the worker (the machine's out-of-memory killer, say).
        """
        head = self.sent[0]
        mine = head.ticket == ticket
        limit = timeout if mine else head.limit
        meter, channel = self.process.meter, self.process.channel
        start, mark = max(head.sent, self._last), meter.cpu_last
        got = meter.wait(channel.next_message, start, mark, limit, wall if mine else float("inf"))
        if head.setup and (type(got) is str or got[0] != "ok"):
            self.kill()  # no student code has run in this worker yet
            raise self.failed("a worker could not load the reference's modules")
        if type(got) is str:
            self.busy += limit
            what = f"importing {head.module}.py" if head.module else head.function
            error = meter.timed_out(
                what, limit, got
            )  # (before the kill, which stops the CPU clock)
            self.kill()
            if head.module:
                self.spent.imports += limit
                self.import_failed[head.module] = error
            if not mine:
                raise _Lost from None
            raise error
        status, payload = got
        now = time.monotonic()
        if status == "ok" and not _well_formed(payload, head.ticket, head.return_inputs):
            status, payload = "garbled", "a reply of the wrong form or out of turn"
        if status != "ok":
            code = self.process.exit_code(timeout=1) if status == "eof" else None
            seconds = meter.since(mark, start) if meter.clock is not None else now - start
            self.busy += seconds
            zygote_died = status == "eof" and self.process.zygote_died
            self.kill()
            what = f"importing {head.module}.py" if head.module else f"{head.function}()"
            if zygote_died:
                raise self.failed(f"the sandbox's zygote died during {what}")
            if (
                code == -getattr(signal, "SIGKILL", 9)
                and self._oom_kills is not None
                and (oom_kills() or 0) > self._oom_kills
            ):
                raise self.failed(
                    f"the machine's out-of-memory killer killed the worker during {what}"
                )
            error = _death(head.function, code, payload, head.module, seconds)
            if head.module:
                self.spent.imports += max(seconds, (now - start) / WALL_FACTOR)
                self.import_failed[head.module] = error
            if not mine:
                raise _Lost
            raise error
        self.sent.popleft()
        seconds = meter.charge(payload, now, start, mark)
        output = self.process.output(payload.get("log"))
        self._last = now
        if head.setup:
            return
        if head.module:  # its CPU time, or a share of its wall time: an
            self.spent.imports += max(
                seconds, (now - start) / WALL_FACTOR
            )  # import that sleeps, in every restarted
            return  # worker, must use the budget up too (red team 18c)
        self.answers[head.ticket] = (payload, seconds, limit, output)
        self.busy += seconds
        if seconds > SLOW_CALL * self.limits.call_timeout and any(one.call for one in self.sent):
            self.kill()  # a slow submission: the calls queued behind this one
            # could eat its budgets running ahead of the tests;
            # they run when asked, in a fresh worker
