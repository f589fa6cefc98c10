"""Known mistakes: name the misconception behind a failed comparison.

A course keeps a catalogue of known mistakes (course.json ``feedback.mistakes``): a module next to the
solutions whose ``MISTAKES`` lists :class:`Mistake` objects, each a variant implementation of one or more
of the course's functions. A suite passes ``diagnose=mistakes.layernorm(x, eps=0.1)`` to a check, with the
arguments it gave the student's function; after a failure the variants run on those arguments, in the
grader process (never in the student's worker), and when the student's output matches exactly one mistake,
whose output does not also pass the check, that mistake's one-line message is the diagnosis.

A call names only what its inputs can tell apart: a variant that passes the check there (it equals the
reference on these inputs) never is a diagnosis, and two variants of different mistakes that give the same
output there (within the check's tolerance) are not named by that call, since the student's output could be
either (:func:`unique_match`; the same rule whether the outputs are stored or live). A parametric
mistake
(:func:`fit`) is a family of variants, one per value of its parameter (a default eps of 1e-6, 1e-8, ...): its
members are never rivals of each other, and the diagnosis is the member closest to the student's output.

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
from grader.feedback.mismatch import Diagnose, Diagnosis, Same
from grader.feedback.outputs import Outputs, call_key, decode, encode


@dataclass(frozen=True)
class Mistake:
    """One known mistake.

    :param id: a stable name, ``<function or topic>.<mistake>``, e.g. ``"layernorm.ddof1"``.
    :param message: one line a student can act on, e.g. "this matches LayerNorm with the sample variance
        (ddof=1): use the population variance".
    :param variants: function name -> the ways of writing this mistake, each a callable with that function's
        signature (several when students write the same mistake in ways whose outputs differ).
    """

    id: str
    message: str
    variants: Mapping[str, Sequence[Callable[..., Any]]]


def mistake(id: str, message: str, **variants: Callable[..., Any] | Sequence[Callable[..., Any]]) -> Mistake:
    """Build a :class:`Mistake`; each keyword is a function name, its value one variant or a list of them."""
    return Mistake(id, message, {name: list(v) if isinstance(v, (list, tuple)) else [v]
                                 for name, v in variants.items()})


def fit(id: str, message: str, values: Sequence[float], **variants: Callable[[float], Any]) -> list[Mistake]:
    """A parametric mistake, where one number explains the output: one :class:`Mistake` per value, with the id
    ``<id>@<value>`` and ``message`` formatted with ``{value}``; each keyword is a function name and a function
    of the value that returns that function's variant (or a list of them).

    Its diagnosis names the family ``id`` with the message of the value that fits best (:func:`unique_match`).
    """
    return [mistake(f"{id}@{value:g}", message.format(value=f"{value:g}"),
                    **{name: make(value) for name, make in variants.items()}) for value in values]


def family(mistake_id: str) -> str:
    """The mistake a catalogue id belongs to: ``"layernorm.eps@1e-06"`` -> ``"layernorm.eps"``."""
    return mistake_id.partition("@")[0]


def unique_match(outputs: Outputs, messages: Mapping[str, str], got: Any, expected: Sequence[Any],
                 same: Same, prefer: str = "") -> Diagnosis | None:
    """The one mistake that ``got`` matches and that this call's inputs separate from the reference and from
    every other mistake, or None.

    A variant that an expected value matches is no candidate (it is right on these inputs). A matched variant
    that gives the same output as a variant of another mistake (``same`` either way round) names neither:
    the inputs cannot tell them apart. Members of one :func:`fit` family are not rivals; of several that
    match, the one closest to ``got`` gives the message.

    :param outputs: mistake id -> its variants' outputs on the call that produced ``got``.
    :param same: ``same(a, b)``, the check's own test of ``a`` against ``b`` (tolerance, NaN in place).
    :param prefer: the checked function's own mistakes (ids starting with this, e.g. ``"block."``): they need
        to be separated only from each other, not from a block around a faulty component that computes the
        same (a block is graded with the reference's components, so those cannot be the student's; run with the
        student's own, failing ones, it names nothing: :class:`grader.grading.verdicts.Verdicts`).
    """
    def coincide(a: Any, b: Any) -> bool:
        return _safe(same, a, b) or _safe(same, b, a)

    live, matched = _matches(outputs, got, expected, same)

    def preferred(mid: str) -> bool:
        return bool(prefer) and mid.startswith(prefer)

    def separated(mid: str) -> bool:
        rivals = [o for other, outs in live.items() if family(other) != family(mid)
                  and (preferred(other) or not preferred(mid)) for o in outs]
        return not any(coincide(o, r) for o in matched[mid] for r in rivals)

    found = [mid for mid in matched if separated(mid)]
    if len({family(mid) for mid in found}) != 1:
        return None
    best = min(found, key=lambda mid: min(_distance(got, o) for o in matched[mid]))
    return Diagnosis(family(best), messages[best])


def _matches(outputs: Outputs, got: Any, expected: Sequence[Any], same: Same) -> tuple[Outputs, Outputs]:
    """The outputs of the mistakes that are wrong on this call (none equals an expected value), and of those the
    ones ``got`` matches."""
    def coincide(a: Any, b: Any) -> bool:
        return _safe(same, a, b) or _safe(same, b, a)

    live = {mid: [o for o in outs if not any(coincide(o, e) for e in expected)] for mid, outs in outputs.items()}
    matched = {mid: [o for o in outs if _safe(same, got, o)] for mid, outs in live.items()}
    return live, {mid: outs for mid, outs in matched.items() if outs}


def _distance(got: Any, out: Any) -> float:
    """How far ``got`` is from a matched output (for the best fit of a parametric mistake)."""
    try:
        with np.errstate(all="ignore"):
            gap = np.abs(np.asarray(got, dtype=np.float64) - np.asarray(out, dtype=np.float64))
        return float(np.nanmax(gap)) if gap.size and not np.isnan(gap).all() else 0.0
    except (TypeError, ValueError):
        return 0.0


def _safe(same: Same, a: Any, b: Any) -> bool:
    try:
        return bool(same(a, b))
    except Exception:                                    # e.g. a dict against an array
        return False


def run_variants(catalogue: Sequence[Mistake], function: str, args: Sequence[Any],
                 kwargs: Mapping[str, Any]) -> Outputs:
    """Every variant of ``function`` on a copy of the arguments; a variant that raises gives no output."""
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


class Catalogue:
    """The course's known mistakes, as the suites' ``mistakes`` fixture.

    ``mistakes.<function>(*args, **kwargs)`` returns a :data:`~grader.feedback.mismatch.Diagnose` for a check on the
    student's ``<function>(*args, **kwargs)``. The variants run live when their module is given
    (computed once per call and kept), else the stored outputs are used. With neither, the diagnosis
    is None.

    :param data: the JSON file of stored outputs
        (``{"messages": ..., "calls": {key: {mistake: [outputs]}}}``).
    :param variants: the catalogue module (defines ``MISTAKES``); ``search`` is put on ``sys.path`` to import it.
    """

    def __init__(self, data: Path | None = None, variants: Path | None = None, search: Sequence[Path] = ()):
        self._data_path = data if data is not None and data.is_file() else None
        self._variants_path = variants if variants is not None and variants.is_file() else None
        self._search = tuple(search)
        self._computed: dict[str, Outputs] = {}

    @classmethod
    def for_course(cls, course) -> "Catalogue":
        """The catalogue named in ``course.feedback``: its variants where the solutions are, else
        the data a release carries."""
        solutions = course.solutions
        if solutions is not None and solutions.is_dir():
            return cls(None, course.feedback.mistakes, (solutions,))
        return cls(course.feedback.mistakes_data)

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

    def diagnose(self, function: str, *args: Any, **kwargs: Any) -> "Call":
        """The known mistakes on the student's ``function(*args, **kwargs)``: a
        :data:`~grader.feedback.mismatch.Diagnose` for a check on it, whose ``outputs()`` are the mistakes' outputs."""
        return Call(self, function, args, kwargs)

    def __getattr__(self, function: str) -> Callable[..., Diagnose]:
        if function.startswith("_"):
            raise AttributeError(function)
        return partial(self.diagnose, function)


@dataclass
class Call:
    """The known mistakes on one call of a student's function (``mistakes.block(x, params)``).

    Calling it is a :data:`~grader.feedback.mismatch.Diagnose`; :meth:`outputs` gives mistake id -> its
    variants' outputs.
    """

    catalogue: Catalogue
    function: str
    args: tuple
    kwargs: dict

    def outputs(self) -> Outputs:
        return self.catalogue.outputs(self.function, self.args, self.kwargs)

    def __call__(self, got: Any, expected: Sequence[Any], same: Same) -> Diagnosis | None:
        return unique_match(self.outputs(), self.catalogue.messages, got, expected, same, prefer=f"{self.function}.")

    def explains(self, got: Any, expected: Sequence[Any], same: Same) -> frozenset[str]:
        """Every known mistake (family) whose output ``got`` matches here, however many."""
        return frozenset(family(mid) for mid in _matches(self.outputs(), got, expected, same)[1])


class Recorder(Catalogue):
    """A catalogue that notes every call a check asks it about, passed or failed, in ``calls``: the
    ``mistakes`` fixture while ``grade release`` grades the reference with the public suites (a
    reference that fails a test is diagnosed as a student would be). With no variants, it diagnoses
    nothing."""

    def __init__(self, data: Path | None = None, variants: Path | None = None,
                 search: Sequence[Path] = ()):
        super().__init__(data, variants, search)
        self.calls: dict[str, tuple[str, tuple, dict]] = {}

    def diagnose(self, function: str, *args: Any, **kwargs: Any) -> Call:
        self.calls[call_key(function, args, kwargs)] = (function, copy.deepcopy(args), copy.deepcopy(kwargs))
        return super().diagnose(function, *args, **kwargs)


def precompute(catalogue: Sequence[Mistake], calls: Mapping[str, tuple[str, tuple, dict]],
               reference: Callable[[str, tuple, dict], Any]) -> dict:
    """The JSON data for ``feedback.mistakes_data`` (what a release carries): messages, and for each
    call the outputs of the variants that differ from the reference's own output (the others are
    never a diagnosis)."""
    stored = {}
    for key, (function, args, kwargs) in sorted(calls.items()):
        right = reference(function, args, kwargs)
        outputs = {mid: [o for o in outs if not _identical(o, right)]
                   for mid, outs in run_variants(catalogue, function, args, kwargs).items()}
        outputs = {mid: outs for mid, outs in outputs.items() if outs}
        if outputs:
            stored[key] = encode(outputs)
    return {"messages": {m.id: m.message for m in catalogue}, "calls": stored}


def _identical(a: Any, b: Any) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        try:
            return np.array_equal(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64), equal_nan=True)
        except (TypeError, ValueError):
            return False
    return type(a) is type(b) and a == b
