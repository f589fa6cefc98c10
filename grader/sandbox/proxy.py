"""What the suites call: ``student.layernorm(x)`` runs the student's ``layernorm`` in the worker.

The proxy is the one seam between the suites and student code. It sends copies of the arguments,
returns plain data (ndarrays, numbers, dicts, lists) or raises :class:`~grader.errors.StudentError`,
and charges each call's wall-clock time to the current problem's and the submission's budgets.

Calls sent ahead: the suites make the same calls for every submission, so the runner records the
first call of each plain test (its fixtures only the grader's) with a :class:`Recorder`, which stops
each test at that call (a :data:`Plan`: no student code runs, the same for every student), and the
proxy sends those to the worker before the tests ask, the public tests' at once (then the hidden
tests'), to run back to back. A
test's call then takes the answer whose call is identical (function and arguments, byte for byte);
any other call is sent when it comes. Only first calls: a later call of a test may be made of what
the student's code returned, which must never reach another worker (a plain test has no fixture that
could carry them from an earlier test). The worker runs the calls in
the plan's order, each under its own timeout; a test that ends before its planned call leaves that
call unused: sending ahead stops for the submission then (and the worker is killed if calls sent
ahead are still running or waiting), and after a timeout, a crash or a slow call (see
:data:`~grader.sandbox.inflight.SLOW_CALL`: a slow submission's queued calls would eat its time
budgets).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import partial
from itertools import takewhile
from typing import Any, Mapping

from grader.course.limits import Limits
from grader.errors import StudentError
from grader.sandbox.client import Worker


@dataclass(frozen=True)
class Planned:
    """One call a test made: the test's nodeid, the function, and the call encoded
    (:meth:`Worker.encode_call <grader.sandbox.client.Worker.encode_call>`: its identity)."""

    test: str
    function: str
    return_inputs: bool
    call: tuple[bytes, ...]
    public: bool = True  # a public test's: sent ahead only while public tests run


Plan = list[Planned]  # the first calls of a submission's plain tests, in the order made


class Student:
    """A proxy to one submission's functions.

    :param worker: the sandboxed worker that runs the calls (another with :meth:`use`).
    :param functions: function name -> module name, from course.json (e.g. ``{"softmax":
        "attention"}``).
    :param limits: the call timeout and the time budgets, seconds.
    :param plan: the calls to send ahead to ``worker``.
    """

    def __init__(
        self, worker: Worker | None, functions: Mapping[str, str], limits: Limits, plan: Plan = ()
    ):
        self._functions = dict(functions)
        self._limits = limits
        self._problem = ""
        self._spent: dict[str, float] = {}
        self._total = 0.0
        self._walls: dict[str, float] = {}  # problem -> wall-clock seconds of its calls
        self._started = time.monotonic()  # the submission's grading began
        self._output: list[str] = []
        self._used: set[str] | None = set()  # None: a call of this test did not say
        self._test: str | None = None
        self._public = True  # the current test is a public one
        self.use(worker, plan)

    def use(self, worker: Worker | None, plan: Plan = ()) -> None:
        """Make the next calls in ``worker`` (a phase's: see :mod:`grader.grading.phases`), sending
        ``plan`` ahead; the time budgets go on."""
        self._worker = worker
        self._busy = 0.0  # the worker's busy seconds already charged
        self._plan = list(plan)
        self._first = {
            planned.test: i for i, planned in enumerate(self._plan)
        }  # test -> its place in the plan
        self._next = 0  # the plan's next call to send ahead
        self._waiting: dict[
            int, tuple[str, tuple]
        ] = {}  # place in the plan -> (ticket, call) not taken yet

    def start_test(self, nodeid: str | None, public: bool = True) -> None:
        """The calls from now on are the test ``nodeid``'s (None: the tests are over, e.g. deferred
        checks come: nothing is sent ahead any more); ``public``: it is a public test. Calls of
        hidden tests are sent ahead only once the public tests are over (the runner runs them
        first): the student's code could read its request stream, and a public test shows what it
        printed.

        A call sent ahead for an earlier test and not taken (the test
        stopped before it, e.g. its problem's time budget ran out) stops sending ahead for this
        submission, and the worker is killed if calls sent ahead are still running or waiting: they
        would run for nothing (the next call starts a fresh worker)."""
        self._test, self._public = nodeid, public
        first = self._first.get(nodeid, -1) if nodeid is not None else float("inf")
        unused = [place for place in self._waiting if place < first]
        if unused:
            for place in unused:
                del self._waiting[place]
            self._plan = []
            self._worker.drop_ahead()
        if nodeid is None:
            self._plan = []

    def charge_to(self, problem: str) -> None:
        """Charge the following calls' time to ``problem``'s budget."""
        self._problem = problem

    def take_output(self) -> str:
        """What the student's code printed since the last call of this method."""
        text, self._output = "".join(self._output), []
        return text

    def take_used(self) -> tuple[str, ...] | None:
        """The watched modules (:meth:`grader.sandbox.client.Worker.watch`) whose code the calls
        since the last call of this method ran, or None when a call did not say (not watched, or it
        timed out or crashed)."""
        used, self._used = self._used, set()
        return None if used is None else tuple(sorted(used))

    def _note_used(self, used: tuple[str, ...] | None) -> None:
        self._used = None if used is None or self._used is None else self._used | set(used)

    def __getattr__(self, name: str):
        if name.startswith("_") or name not in self._functions:
            raise AttributeError(f"no student function {name!r} in course.json")
        return partial(self._call, name, False)

    def call_with_inputs(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, list, dict]:
        """Call ``name`` and also return the arguments as the student's function left them.

        :returns: ``(value, args_after, kwargs_after)``.
        """
        if name not in self._functions:
            raise AttributeError(f"no student function {name!r} in course.json")
        return self._call(name, True, *args, **kwargs)

    def _send_ahead(self) -> None:
        """Send the plan's calls of the tests to come, the public tests' (or, once they are over,
        the hidden tests'), all at once."""
        if not self._plan or self._next >= len(self._plan):
            return
        batch = list(takewhile(lambda p: p.public == self._public, self._plan[self._next :]))
        if not batch:  # the next calls are of the hidden tests: not yet
            return
        tickets = self._worker.ahead(
            [(self._functions[p.function], p.function, p.return_inputs, p.call) for p in batch]
        )
        for i, ticket in enumerate(tickets, start=self._next):
            self._waiting[i] = ticket, self._plan[i].call
        self._next += len(tickets)
        if len(tickets) < len(batch):  # the worker is gone or a module failed to import:
            self._plan = []  # the rest are made when asked

    def _call(self, name: str, return_inputs: bool, *args: Any, **kwargs: Any):
        limits = self._limits
        left_problem = limits.problem_budget - self._spent.get(self._problem, 0.0)
        left_total = limits.submission_budget - self._total
        if left_problem <= 0 or left_total <= 0:
            spent = "problem" if left_problem <= 0 else "submission"
            budget = limits.problem_budget if left_problem <= 0 else limits.submission_budget
            raise StudentError(
                "budget",
                f"not run: the {spent}'s {budget:g} s time budget is used up "
                "(earlier calls were too slow)",
            )
        started = time.monotonic()
        wall_problem = limits.problem_wall - self._walls.get(self._problem, 0.0)
        wall_total = limits.submission_wall - (started - self._started)
        if wall_problem <= 0 or wall_total <= 0:
            spent = "problem" if wall_problem <= 0 else "submission"
            budget = limits.problem_wall if wall_problem <= 0 else limits.submission_wall
            raise StudentError(
                "budget",
                f"not run: the {spent}'s {budget:g} s of wall-clock time ran out (calls "
                "that sleep or wait count too)",
            )
        ticket = encoded = None
        if self._test is not None:
            encoded = tuple(self._worker.encode_call(name, args, kwargs, return_inputs))
            self._send_ahead()
            place = self._first.get(self._test)  # the test's first call, if it is the one planned
            if place in self._waiting and self._waiting[place][1] == encoded:
                ticket = self._waiting.pop(place)[0]
        seconds = 0.0
        left = min(left_problem, left_total)
        try:
            reply = self._worker.call(
                self._functions[name],
                name,
                list(args),
                kwargs,
                timeout=min(limits.call_timeout, left),
                return_inputs=return_inputs,
                ticket=ticket,
                encoded=encoded,
                wall=min(wall_problem, wall_total),
            )
            seconds = reply.seconds
        except StudentError as err:
            seconds = err.seconds
            self._output.append(err.output)
            self._note_used(err.used)
            if (
                err.kind == "timeout"
                and "wall-clock" in err.message
                and time.monotonic() - started >= min(wall_problem, wall_total)
            ):
                which = "problem" if wall_problem <= wall_total else "submission"
                raise StudentError(
                    "budget",
                    f"{name}() ran out of the {which}'s wall-clock time (calls that "
                    "sleep or wait count too)",
                    output=err.output,
                    seconds=seconds,
                ) from None
            if err.kind == "timeout" and left < limits.call_timeout:
                # What was left of a budget depends on the earlier calls' times: never said in
                # numbers.
                which = "problem" if left == left_problem else "submission"
                raise StudentError(
                    "budget",
                    f"{name}() ran out of the {which}'s time budget (earlier calls were slow)",
                    output=err.output,
                    seconds=seconds,
                ) from None
            raise
        finally:
            self._walls[self._problem] = (
                self._walls.get(self._problem, 0.0) + time.monotonic() - started
            )
            self._spent[self._problem] = self._spent.get(self._problem, 0.0) + seconds
            self._total += self._worker.busy - self._busy  # every call's time, once, when answered
            self._busy = self._worker.busy
        self._output.append(reply.output)
        self._note_used(reply.used)
        if return_inputs:
            args_after, kwargs_after = reply.inputs
            if len(args_after) != len(args) or set(kwargs_after) != set(kwargs):
                # the worker's lists, which the student's code can reach: a suite indexing a shorter
                # one would
                # raise an error of its own, and the whole submission would be the grader's failure
                raise StudentError(
                    "bad_type",
                    f"{name}() changed the list of arguments it was called with (not "
                    "their values: which arguments there are)",
                )
            return reply.value, args_after, kwargs_after
        return reply.value


class Recorded(BaseException):
    """Raised by a :class:`Recorder` at a test's first call: it ends the test (a BaseException, so
    that no ``except Exception`` in a suite goes on past it)."""


class Recorder(Student):
    """A proxy that runs nothing: it records the first call of each test as :class:`Planned` in
    :attr:`made`, and stops the test there with :class:`Recorded`."""

    def __init__(self, functions: Mapping[str, str]):
        super().__init__(None, functions, Limits())
        self.made: Plan = []

    def _call(self, name: str, return_inputs: bool, *args: Any, **kwargs: Any):
        self.made.append(
            Planned(
                self._test,
                name,
                return_inputs,
                tuple(Worker.encode_call(name, args, kwargs, return_inputs)),
                self._public,
            )
        )
        raise Recorded
