"""Parent side of the worker: a submission's calls (some sent ahead of the tests) and their
outcomes.

Student code runs only in the worker process (:mod:`grader.sandbox.child.worker`), which
:mod:`grader.sandbox.process` starts, limits and kills. The requests in flight
(:mod:`grader.sandbox.inflight`) enforce each call's timeout from the parent and charge its CPU time
(:mod:`grader.sandbox.clock`); this module makes the calls, sends the next ones ahead, and turns
replies into values, the student's output (capped, never parsed), or the grader's own words for what
went wrong; a fresh worker starts after a crash or a timeout.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from grader.course.limits import Limits
from grader.errors import GraderFault, StudentError
from grader.sandbox.inflight import InFlight, Spent, _Lost, encode_call
from grader.sandbox.policy import PROCESS
from grader.sandbox.process import Copy, WorkerProcess
from grader.sandbox.replies import SHOWN_TEXT, _death, _words
from grader.sandbox.zygote import Zygote


@dataclass(frozen=True)
class Reply:
    """One call's outcome: the decoded value, the arguments after the call (if asked), output and
    seconds."""

    value: Any
    inputs: Any
    output: str
    seconds: float
    used: tuple[str, ...] | None = None  # the watched modules it ran code of (None: not watched)


class Worker:
    """A sandboxed worker process for one submission, started lazily and restarted after a failure.

    :param zygote: fork the worker from this warm zygote (same level) instead of starting Python.
    :param tmp_root: where the private copy goes (default: the system's temporary folder).
    :param modules: the submission's modules, imported by every new worker before its first call,
        each on ``limits.import_timeout`` (not on any call's or problem's time).
    :param run_as: at the ``process`` level, as root, the user the worker runs as (see
        :func:`run_as_ids`); with a zygote, the zygote's.
    :param reference: module -> the reference's source, for the modules of the other problems that
        the functions under test use (a phase of ``grade autograde``: :mod:`grader.grading.phases`):
        every worker gets them before any student code runs, and the student's code importing those
        names gets them.
    :param spent: what the submission's imports cost so far, shared by its workers (its import
        budget).
    :param copy: the submission's private copy, made for its first worker and read by the others
        (default: a copy of its own, deleted with it).
    :param fork: without a zygote, fork the worker from this process
        (:class:`grader.sandbox.process.Forked`: Linux, the process level, and only where no
        reference is in this process: a student's release).

    Times are the worker's CPU seconds where this process can read them (Linux: ``/proc``; macOS and
    Windows: psutil), with a wall-clock backstop WALL_FACTOR times larger; elsewhere (the bwrap
    level's other pid namespace) the worker's own count, and wall-clock time for timeouts
    (:class:`grader.sandbox.clock.Meter`).

    Use as a context manager; :meth:`close` kills the worker and all it started, and deletes the
    copy.
    """

    def __init__(
        self,
        submission: Path,
        limits: Limits,
        level: str = PROCESS,
        zygote: Zygote | None = None,
        tmp_root: Path | None = None,
        modules: Sequence[str] = (),
        run_as: str | None = None,
        reference: Mapping[str, str] | None = None,
        spent: Spent | None = None,
        copy: Copy | None = None,
        fork: bool = False,
    ):
        self._process = WorkerProcess(
            submission, limits, level, zygote, tmp_root, run_as, copy, fork
        )
        self._flight = InFlight(self._process, limits, modules, reference, spent)
        self.limits = limits
        self.level = level
        self.root = self._process.root

    def watch(self, uses: Mapping[str, Sequence[str]]) -> None:
        """From the next call on, a call of a module of ``uses`` (module -> the submission's modules
        its functions use) reports which of those modules it ran code of (:attr:`Reply.used`,
        :attr:`StudentError.used`)."""
        self._flight.watch = {m: tuple(used) for m, used in uses.items() if used}

    def __enter__(self) -> "Worker":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def busy(self) -> float:
        """Seconds the worker spent on calls, all of them."""
        return self._flight.busy

    @property
    def copy(self) -> Copy:
        """The submission's private copy this worker reads."""
        return self._process.copy

    @property
    def spent(self) -> Spent:
        """What the submission's imports cost so far (shared with its other workers)."""
        return self._flight.spent

    @property
    def fault(self) -> str:
        """What failed in the grader's own machinery ("" if nothing did)."""
        return self._flight.fault

    def start(self) -> None:
        """Start the worker now (otherwise the first call does): cold, its interpreter imports numpy
        and then the submission's modules while the grader gets on with something else."""
        if not self._process.running:
            self._flight.write([], b"")

    @property
    def starts(self) -> int:
        """How many times a worker process was started (a restart kills the calls sent ahead)."""
        return self._process.starts

    encode_call = staticmethod(encode_call)

    def ahead(self, calls: list[tuple[str, str, bool, Sequence[bytes]]]) -> list[str]:
        """Send calls before they are made, ``(module, function, return_inputs, encode_call(...))``
        each, for the worker to run back to back (a forked worker only): a call then costs each side
        its wake-ups.
        :meth:`call` with ``ticket=`` collects one. Sends the calls up to the first of a module that
        failed to import, in one write (the channel writes what the worker does not take yet while
        replies are awaited), and returns their tickets.
        """
        f = self._flight
        if not self._process.batches or f.ahead_ended:
            return []
        sent, data = [], []
        for module, function, return_inputs, call in calls:
            if module in f.import_failed:
                break
            one, request = f.request(module, function, return_inputs, call)
            sent.append(one)
            data.append(request)
        if not sent:
            return []
        try:
            f.write(sent, b"".join(data))
        except (OSError, TimeoutError):  # the worker is gone: the calls, made, will say
            f.kill()
            return []
        except GraderFault:  # the zygote is gone: the calls, made, will say
            return []
        return [one.ticket for one in sent]

    def drop_ahead(self) -> None:
        """Kill the worker if calls sent ahead are still unanswered (running or waiting to run):
        they are not wanted any more, and would run for nothing. The next call starts a fresh
        worker."""
        if any(one.call for one in self._flight.sent):
            self._flight.kill()

    def call(
        self,
        module: str,
        function: str,
        args: list,
        kwargs: dict,
        timeout: float,
        return_inputs: bool = False,
        ticket: str | None = None,
        encoded: Sequence[bytes] | None = None,
        wall: float = float("inf"),
    ) -> Reply:
        """Run ``module.function(*args, **kwargs)`` in the worker and return its value as plain
        data.

        :param timeout: CPU seconds before the worker is killed, counted from when the worker could
            start the call (and WALL_FACTOR times that in wall-clock time, at most ``wall``).
        :param ticket: this very call's ticket from :meth:`ahead`, if it was sent ahead (unknown
            tickets, e.g. of a worker killed since, are ignored: the call is sent now).
        :param encoded: the call as :meth:`encode_call` gives it, if the caller has it already.
        :raises StudentError: the student's code raised, timed out, crashed, exited or returned bad
            data. Its ``message`` is the grader's own words (a hidden test shows it); ``public`` and
            ``detail`` may hold what the student's code chose (an exception's name, a traceback):
            public tests only.
        :raises GraderFault: the grader's machinery failed (see
            :meth:`grader.sandbox.inflight.InFlight.receive`).
        """
        f = self._flight
        for _ in range(len(f.modules) + 2):  # again when a request sent before broke the worker
            if module in f.import_failed:
                raise f.import_failed[module]
            try:
                if ticket is None or not f.pending(ticket):
                    one, request = f.request(
                        module,
                        function,
                        return_inputs,
                        encoded or self.encode_call(function, args, kwargs, return_inputs),
                    )
                    f.write([one], request)
                    ticket = one.ticket
                while ticket not in f.answers:
                    if all(s.ticket != ticket for s in f.sent):
                        raise _Lost  # the worker was killed after a slow call
                    f.receive(ticket, timeout, wall)
                break
            except _Lost:
                ticket = None
            except TimeoutError:  # the worker did not take the request in time
                f.kill()
                raise StudentError(
                    "timeout",
                    f"timed out in {function} (it stopped reading its requests)",
                    seconds=timeout,
                ) from None
            except OSError:  # it is gone
                code = self._process.exit_code(timeout=1)
                f.kill()
                raise _death(function, code, None) from None
        else:
            raise f.failed(f"the worker kept failing before {function}() could run")
        payload, seconds, limit, output = f.answers.pop(ticket)
        if (
            limit > timeout and seconds > timeout
        ):  # it ran ahead, for longer than this call may take
            f.kill()
            raise StudentError(
                "timeout",
                f"timed out after {timeout:g} s of CPU time in {function}",
                seconds=timeout,
            )
        watched, used = f.watch.get(module), payload.get("used")
        used = (
            tuple(m for m in watched if m in used)  # (the worker's list: only names asked for)
            if watched and type(used) is list
            else None
        )
        if not payload["ok"]:
            kind = payload["kind"]
            error = StudentError(
                kind,
                _words(kind, module, function),
                public=payload["error"][:SHOWN_TEXT],
                detail=payload.get("traceback", "")[: SHOWN_TEXT * 4],
                output=output,
                seconds=seconds,
                builtins=tuple(payload.get("builtins", ())),
            )
            error.used = used
            raise error
        return Reply(payload["value"], payload.get("inputs"), output, seconds, used)

    def check_fault(self) -> None:
        """:raises GraderFault: the grader's machinery failed during this submission (even if a
        suite's ``except`` swallowed the exception)."""
        if self.fault:
            raise GraderFault(self.fault)

    def restart(self) -> None:
        """Kill the worker (and all it started); the next call starts a fresh one."""
        self._flight.kill()

    def close(self) -> None:
        self._flight.kill()
        self._process.close()


def started_worker(
    submission: Path,
    limits: Limits,
    level: str,
    tmp_root: Path | None = None,
    modules: Sequence[str] = (),
    run_as: str | None = None,
    reference: Mapping[str, str] | None = None,
    fork: bool = False,
) -> Worker | None:
    """A cold worker for ``submission``, started now: its interpreter imports numpy (and then the
    submission's ``modules``) while the caller gets on with something else. None when the submission
    cannot be copied (its first call meets the same error and reports it)."""
    try:
        worker = Worker(
            submission, limits, level, None, tmp_root, modules, run_as, reference, fork=fork
        )
    except StudentError:
        return None
    try:
        worker.start()
    except BaseException:
        worker.close()
        raise
    return worker
