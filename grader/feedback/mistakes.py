"""Known mistakes: name the misconception behind a failed comparison.

A course keeps a catalogue of known mistakes (course.json ``feedback.mistakes``): a module next to
the solutions whose ``MISTAKES`` lists :class:`Mistake` objects, each a variant implementation of
one or more of the course's functions. A suite passes ``diagnose=mistakes.layernorm(x, eps=0.1)`` to
a check, with the arguments it gave the student's function; after a failure the variants run on
those arguments, in the grader process (never in the student's worker), and when the student's
output matches exactly one mistake, whose output does not also pass the check, that mistake's
one-line message is the diagnosis.

A call names only what its inputs can tell apart: a variant that passes the check there (it equals
the reference on these inputs) never is a diagnosis, and two variants of different mistakes that
give the same output there (within the check's tolerance) are not named by that call, since the
student's output could be either (:func:`~grader.feedback.matching.unique_match`; the same rule
whether the outputs are stored or live). A parametric mistake (:func:`fit`) is a family of variants,
one per value of its parameter (a default eps of 1e-6, 1e-8, ...): its members are never rivals of
each other, and the diagnosis is the member closest to the student's output.

Where the solutions are (the instructor's checkout, the Gradescope autograder) the variants run
live, so a change of the catalogue counts at once. A student's copy of the course has no solutions
and so no variants: ``grade release`` writes into it, for every call the public suites make, the
variants' outputs and the messages (course.json ``feedback.mistakes_data``, JSON), looked up by a
hash of the function and the arguments.
"""

from __future__ import annotations

import copy
import json
import warnings
from dataclasses import dataclass
from functools import cached_property, partial
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from grader.course.modules import import_course_module
from grader.errors import GradeError
from grader.feedback.matching import Prefer, evidence, unique_match
from grader.feedback.mismatch import Diagnose, Diagnosis, Evidence, Same, family
from grader.feedback.outputs import Outputs, call_key, decode


@dataclass(frozen=True)
class Mistake:
    """One known mistake.

    :param id: a stable name, ``<function or topic>.<mistake>``, e.g. ``"layernorm.ddof1"``.
    :param message: one line a student can act on, e.g. "this matches LayerNorm with the sample
        variance (ddof=1): use the population variance".
    :param variants: function name -> the ways of writing this mistake, each a callable with that
        function's signature (several when students write the same mistake in ways whose outputs
        differ).
    """

    id: str
    message: str
    variants: Mapping[str, Sequence[Callable[..., Any]]]


def mistake(
    id: str, message: str, **variants: Callable[..., Any] | Sequence[Callable[..., Any]]
) -> Mistake:
    """Build a :class:`Mistake`; each keyword is a function name, its value one variant or a list of
    them."""
    return Mistake(
        id,
        message,
        {name: list(v) if isinstance(v, (list, tuple)) else [v] for name, v in variants.items()},
    )


def fit(
    id: str, message: str, values: Sequence[float], **variants: Callable[[float], Any]
) -> list[Mistake]:
    """A parametric mistake, where one number explains the output: one :class:`Mistake` per value,
    with the id ``<id>@<value>`` and ``message`` formatted with ``{value}``; each keyword is a
    function name and a function of the value that returns that function's variant (or a list of
    them).

    Its diagnosis names the family ``id`` with the message of the value that fits best
    (:func:`~grader.feedback.matching.unique_match`).
    """
    return [
        mistake(
            f"{id}@{value:g}",
            message.format(value=f"{value:g}"),
            **{name: make(value) for name, make in variants.items()},
        )
        for value in values
    ]


def run_variants(
    catalogue: Sequence[Mistake], function: str, args: Sequence[Any], kwargs: Mapping[str, Any]
) -> Outputs:
    """Every variant of ``function`` on a copy of the arguments; a variant that raises gives no
    output."""
    outputs: Outputs = {}
    for m in catalogue:
        for variant in m.variants.get(function, ()):
            try:
                with np.errstate(all="ignore"), warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    out = variant(*copy.deepcopy(list(args)), **copy.deepcopy(dict(kwargs)))
            except Exception:
                continue
            outputs.setdefault(m.id, []).append(out)
    return outputs


def problems_of(course) -> dict[str, str]:
    """Every function, module and problem name of ``course`` -> the problem it belongs to."""
    problems = {}
    for problem in course.problems:
        for name in (problem.name, problem.module, *problem.functions):
            problems.setdefault(name, problem.name)
    return problems


class Catalogue:
    """The course's known mistakes, as the suites' ``mistakes`` fixture.

    ``mistakes.<function>(*args, **kwargs)`` returns a :data:`~grader.feedback.mismatch.Diagnose`
    for a check on the student's ``<function>(*args, **kwargs)``. The variants run live when their
    module is given (computed once per call and kept), else the stored outputs are used. With
    neither, the diagnosis is None.

    :param data: the JSON file of stored outputs
        (``{"messages": ..., "calls": {key: {mistake: [outputs]}}}``).
    :param variants: the catalogue module (defines ``MISTAKES``); ``search`` is put on ``sys.path``
        to import it.
    """

    def __init__(
        self,
        data: Path | None = None,
        variants: Path | None = None,
        search: Sequence[Path] = (),
        problems: Mapping[str, str] | None = None,
    ):
        self._data_path = data if data is not None and data.is_file() else None
        self._variants_path = variants if variants is not None and variants.is_file() else None
        self._search = tuple(search)
        self._computed: dict[str, Outputs] = {}
        self.problems: dict[str, str] = dict(problems or {})  # function, module -> its problem

    @classmethod
    def for_course(cls, course) -> "Catalogue":
        """The catalogue named in ``course.feedback``: its variants where the solutions are, else
        the data a release carries."""
        solutions = course.solutions
        problems = problems_of(course)
        if solutions is not None and solutions.is_dir():
            return cls(None, course.feedback.mistakes, (solutions,), problems)
        return cls(course.feedback.mistakes_data, problems=problems)

    @cached_property
    def owners(self) -> dict[str, str]:
        """Mistake family -> the problem it is a mistake of: the one its id names
        (``"softmax.no_max"``: softmax's, attention), else the one of the function its variants are
        first written for (``"model.tied_twice"``: count_model's). A component's mistake is named in
        its own problem's feedback only (:class:`grader.grading.verdicts.Verdicts`)."""
        if not self.mistakes:
            return dict(self._data.get("owners", {}))
        owners = {}
        for m in self.mistakes:
            name = family(m.id)
            home = self.problems.get(name.partition(".")[0]) or next(
                (self.problems[f] for f in m.variants if f in self.problems), None
            )
            if home is not None:
                owners.setdefault(name, home)
        return owners

    @cached_property
    def _data(self) -> dict:
        if self._data_path is None:
            return {"messages": {}, "calls": {}}
        try:
            return json.loads(self._data_path.read_text())
        except (OSError, ValueError) as err:
            raise GradeError(f"{self._data_path}: unreadable mistakes data: {err}") from None

    @cached_property
    def mistakes(self) -> tuple[Mistake, ...]:
        """The live catalogue (empty without the variants module)."""
        if self._variants_path is None:
            return ()
        return tuple(import_course_module(self._variants_path, self._search).MISTAKES)

    @cached_property
    def messages(self) -> dict[str, str]:
        return {**self._data["messages"], **{m.id: m.message for m in self.mistakes}}

    def outputs(self, function: str, args: Sequence[Any], kwargs: Mapping[str, Any]) -> Outputs:
        """The mistakes' outputs for this call: live from the variants, else as stored; kept for
        the next student."""
        key = call_key(function, args, kwargs)
        if key not in self._computed:
            if self._variants_path is not None:
                self._computed[key] = run_variants(self.mistakes, function, args, kwargs)
            else:
                self._computed[key] = decode(self._data["calls"].get(key, {}))
        return self._computed[key]

    def raised(
        self, function: str, args: Sequence[Any], kwargs: Mapping[str, Any]
    ) -> frozenset[str]:
        """The mistakes of ``function`` whose every variant raises on this call (live, else as
        stored)."""
        if self._variants_path is None:
            return frozenset(self._data.get("raised", {}).get(call_key(function, args, kwargs), ()))
        gave = self.outputs(function, args, kwargs)
        return frozenset(
            m.id for m in self.mistakes if m.variants.get(function) and m.id not in gave
        )

    def diagnose(self, function: str, *args: Any, **kwargs: Any) -> "Call":
        """The known mistakes on the student's ``function(*args, **kwargs)``: a
        :data:`~grader.feedback.mismatch.Diagnose` for a check on it, whose ``outputs()`` are the
        mistakes' outputs."""
        return Call(self, function, args, kwargs)

    def __getattr__(self, function: str) -> Callable[..., Diagnose]:
        if function.startswith("_"):
            raise AttributeError(function)
        return partial(self.diagnose, function)


@dataclass
class Call:
    """The known mistakes on one call of a student's function (``mistakes.block(x, params)``).

    Calling it is a :data:`~grader.feedback.mismatch.Diagnose`; :meth:`outputs` gives mistake id ->
    its variants' outputs.
    """

    catalogue: Catalogue
    function: str
    args: tuple
    kwargs: dict

    def outputs(self) -> Outputs:
        return self.catalogue.outputs(self.function, self.args, self.kwargs)

    def __call__(self, got: Any, expected: Sequence[Any], same: Same) -> Diagnosis | None:
        return unique_match(
            self.outputs(), self.catalogue.messages, got, expected, same, prefer=self._own()
        )

    def evidence(self, got: Any, expected: Sequence[Any], same: Same) -> Evidence:
        """What this call says of each mistake (:func:`grader.feedback.matching.evidence`)."""
        return evidence(
            self.outputs(),
            self.catalogue.messages,
            got,
            expected,
            same,
            self._own(),
            self.catalogue.owners,
        )

    def compared(self, same: Same) -> None:
        """The check of this call compares with ``same`` (told pass or fail: see
        :class:`grader.feedback.recorder.Recorder`)."""

    def raising(self) -> Evidence:
        """What the student's function raising on this call says: the mistakes whose variants raise
        here too (:func:`grader.feedback.compare.raising`) explain it; none tells it apart beyond
        doubt."""
        return Evidence(
            self.catalogue.raised(self.function, self.args, self.kwargs),
            frozenset(),
            {},
            self.catalogue.owners,
        )

    def _own(self) -> Prefer:
        """The mistakes of the checked function's problem (the block's and mlp's in a test of
        block()), or, where the course's problems are unknown, those whose id starts with the
        function's name."""
        owners, home = self.catalogue.owners, self.catalogue.problems.get(self.function)
        if not owners or home is None:
            return f"{self.function}."
        return lambda mid: owners.get(family(mid)) == home
