"""What the suites call: ``student.layernorm(x)`` runs the student's ``layernorm`` in the worker.

The proxy is the one seam between the suites and student code. It sends copies of the arguments,
returns plain data (ndarrays, numbers, dicts, lists) or raises :class:`~grader.errors.StudentError`,
and charges each call's wall-clock time to the current problem's and the submission's budgets.
"""
from __future__ import annotations

import time
from functools import partial
from typing import Any, Mapping

from .errors import StudentError
from .sandbox import Limits, Worker


class Student:
    """A proxy to one submission's functions.

    :param worker: the sandboxed worker that runs the calls.
    :param functions: function name -> module name, from course.json (e.g. ``{"softmax": "attention"}``).
    :param limits: the call timeout and the time budgets, seconds.
    """

    def __init__(self, worker: Worker, functions: Mapping[str, str], limits: Limits):
        self._worker = worker
        self._functions = dict(functions)
        self._limits = limits
        self._problem = ""
        self._spent: dict[str, float] = {}
        self._total = 0.0
        self._output: list[str] = []
        self._found: dict[str, bool] = {}
        self._fresh_next = False

    def charge_to(self, problem: str) -> None:
        """Charge the following calls' time to ``problem``'s budget."""
        self._problem = problem

    def take_output(self) -> str:
        """What the student's code printed since the last call of this method."""
        text, self._output = "".join(self._output), []
        return text

    def known_mistakes(self) -> Mapping[str, bool]:
        """The known mistakes (catalogue ids, e.g. ``"layernorm.ddof1"``) that failed tests of the other
        problems named in this submission, each with whether it is sure: its problem failed every test
        that the mistake fails.

        Known once the submission's tests have run, that is in a :class:`~grader.errors.Deferred` check.
        """
        return self._found

    def note_known_mistakes(self, found: Mapping[str, bool]) -> None:
        """Record the known mistakes found (the runner, before the deferred checks)."""
        self._found = dict(found)

    def fresh_worker_next(self) -> None:
        """Run the next call, if one comes, in a fresh worker: nothing the student's code did before is known."""
        self._fresh_next = True

    def put_back_output(self, text: str) -> None:
        """Put ``text`` in front of what the next :meth:`take_output` returns."""
        self._output.insert(0, text)

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

    def _call(self, name: str, return_inputs: bool, *args: Any, **kwargs: Any):
        limits = self._limits
        left_problem = limits.problem_budget - self._spent.get(self._problem, 0.0)
        left_total = limits.submission_budget - self._total
        if left_problem <= 0 or left_total <= 0:
            spent = "problem" if left_problem <= 0 else "submission"
            budget = limits.problem_budget if left_problem <= 0 else limits.submission_budget
            raise StudentError("budget", f"not run: the {spent}'s {budget:g} s time budget is used up "
                                         "(earlier calls were too slow)")
        if self._fresh_next:
            self._fresh_next = False
            self._worker.restart()
        started = time.monotonic()
        try:
            reply = self._worker.call(self._functions[name], name, list(args), kwargs,
                                      timeout=min(limits.call_timeout, left_problem, left_total),
                                      return_inputs=return_inputs)
        except StudentError as err:
            self._output.append(err.output)
            raise
        finally:
            elapsed = time.monotonic() - started
            self._spent[self._problem] = self._spent.get(self._problem, 0.0) + elapsed
            self._total += elapsed
        self._output.append(reply.output)
        if return_inputs:
            args_after, kwargs_after = reply.inputs
            return reply.value, args_after, kwargs_after
        return reply.value
