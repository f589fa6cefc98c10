"""A test's verdict from what it raised: its status, its kind, and the words the student sees (a
public test's values and output; a hidden test's grader-chosen words only); and one submission's
verdicts as its tests end (:class:`Verdicts`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import pytest

from grader.errors import StudentError
from grader.feedback.figures import Figures
from grader.feedback.mismatch import Diagnosis, Evidence, Mismatch, family
from grader.grading.results import TestResult


@dataclass(frozen=True)
class Test:
    """What the runner knows of a collected test before it runs.

    :param public: the student may see its values and output (a public suite's, or a hidden one's
        when the course releases hidden details), unless it runs beside the reference's
        ``components``.
    :param uses: the other problems' modules its problem uses; ``components``: those that are the
        reference's in the worker that runs it (:mod:`grader.grading.phases`).
    """

    name: str
    problem: str
    module: str
    points: float
    visibility: str
    public: bool
    property: bool
    uses: tuple[str, ...] = ()
    components: tuple[str, ...] = ()


MAX_SHOWN_OUTPUT = 2000


def verdict(exc: BaseException, public: bool, function_output: str) -> tuple[str, str, str]:
    """(status, kind, output) for a test that raised ``exc``."""
    if isinstance(exc, Mismatch):
        status, kind, text = "failed", "mismatch", exc.full if public else exc.public
    elif isinstance(exc, StudentError):
        status, kind = "error", exc.kind
        text = exc.public + (f"\n{exc.detail}" if exc.detail else "") if public else exc.message
    elif isinstance(exc, AssertionError):
        status, kind, text = (
            "failed",
            "assertion",
            (str(exc) or "assertion failed") if public else "assertion failed",
        )
    elif isinstance(exc, pytest.fail.Exception):
        status, kind, text = "failed", "assertion", (exc.msg or "failed") if public else "failed"
    elif isinstance(exc, pytest.skip.Exception):
        status, kind, text = "failed", "skipped", "skipped: a skipped test earns no points"
    else:
        status, kind = (
            "error",
            "grader_error",
        )  # a suite's own error: its text may hold a student value
        text = (
            f"error in the test itself: {type(exc).__name__}: {exc}"
            if public
            else "error in the test itself"
        )
    if public and function_output.strip():
        shown = (
            function_output
            if len(function_output) <= MAX_SHOWN_OUTPUT
            else (function_output[:MAX_SHOWN_OUTPUT] + "\n[... output cut ...]")
        )
        text += f"\nyour code printed:\n{shown.rstrip()}"
    return status, kind, text


def components_note(
    problem: str,
    reference: tuple[str, ...],
    uses: tuple[str, ...],
    public: bool,
    failing: tuple[str, ...] = (),
) -> str:
    """What a dependent problem's failed test ran with: the reference's modules (``reference``: in a
    public test it says why its values and output are not shown), or the student's own (``uses``,
    where no reference is; ``failing``: those of them that fail their own tests)."""
    if reference:
        return (
            (
                f"\n(your {problem} ran with the course's own {_listed(reference)}, so that only "
                "its own lines "
                "are graded here; what it printed and its own numbers are not shown: grade check "
                "shows them with "
                "yours)"
            )
            if public
            else ""
        )
    if failing:
        return (
            f"\n(checked here with your own {_listed(uses)}; your {_listed(failing)} "
            f"{'fails its' if len(failing) == 1 else 'fail their'} own tests, which may be all "
            "that is "
            "wrong here: "
            f"fix {'it' if len(failing) == 1 else 'them'} first. When graded, {problem} runs with "
            "the course's.)"
        )
    if uses:
        return (
            f"\n(checked here with your own {_listed(uses)}; when graded, {problem} runs with the "
            "course's, "
            "so that only its own lines count)"
        )
    return ""


def _listed(names: tuple[str, ...]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


class Verdicts:
    """One submission's verdicts, kept as its tests end: each test's first, with the feedback (diff,
    diagnosis, figures) the student may see.

    A test run beside the reference's components shows the grader's words only, as a hidden test
    does: what the student's code printed, raised or returned there could carry the reference's
    source or values. A test of a problem run with the student's own components, one of which failed
    its own tests, names no mistake: its output may be that component's mistake seen through this
    problem's lines (the block around a LayerNorm that ignores gamma matches a block that does not
    pass gamma on).

    A known mistake is named for a problem (:meth:`_named`) only when

    - the student's output matches it on every failed check of the problem that the catalogue judges
      (a :func:`~grader.feedback.mistakes.fit` family: one of its members on all of them), and no
      test of the problem failed otherwise than by a wrong value (an exception, a timeout, a
      component's failure);
    - at least one of those checks tells it apart beyond doubt: there the mistake's output is far,
      many tolerances, from the correct one and from every other catalogued mistake's
      (:class:`Evidence`);
    - it is the problem's own mistake, or that of a component whose own tests named it.

    Else its tests keep only the facts a test's own hint states ("right with 1 head, wrong with
    2")."""

    def __init__(self, tests: Mapping[str, Test]):
        self.tests = tests
        self.verdicts: dict[str, tuple[str, str, str]] = {}
        self.feedback: dict[str, dict] = {}
        self.figures: dict[str, Figures] = {}
        self._failed: dict[
            str, tuple[Mismatch, bool, str, str]
        ] = {}  # the failed checks: to name again
        self._silenced: set[str] = set()  # tests run with a student's component that failed
        self._raised: dict[str, Evidence] = {}  # tests whose exception known mistakes raise too

    def record(
        self,
        nodeid: str,
        exc: BaseException | None,
        output: str,
        used: tuple[str, ...] | None = None,
    ) -> None:
        """A test's verdict; ``used``: the modules of ``test.uses`` its calls ran code of, where the
        worker said (else all of them). Only a component the test used, and that failed its own
        tests, withholds its diagnosis and is named in its note."""
        if nodeid in self.verdicts:
            return
        test = self.tests[nodeid]
        public = test.public and not test.components
        if exc is None:
            self.verdicts[nodeid] = ("passed", "", "")
        else:
            own = test.uses if used is None else tuple(m for m in test.uses if m in used)
            failing = () if test.components else tuple(m for m in own if m in self._failing())
            if failing:
                self._silenced.add(nodeid)
                if isinstance(exc, Mismatch):
                    exc.diagnosis = None
            status, kind, text = verdict(exc, public, output)
            note = components_note(test.problem, test.components, own, test.public, failing)
            self.verdicts[nodeid] = (status, kind, text + note)
            if isinstance(exc, Mismatch):
                self.feedback[nodeid] = exc.feedback(public)
                self._failed[nodeid] = (exc, public, output, note)
            elif (
                isinstance(exc, StudentError) and exc.kind == "raised" and hasattr(exc, "diagnose")
            ):
                self._raised[nodeid] = exc.diagnose.raising()
        if public and nodeid in self.figures:
            self.feedback.setdefault(nodeid, {})["figures"] = self.figures[nodeid].items

    def _failing(self) -> set[str]:
        """The modules of the problems with a failed test so far."""
        return {
            self.tests[n].module for n, (status, *_) in self.verdicts.items() if status != "passed"
        }

    def _named(self, problem: str, named: Mapping[str, str | None]) -> str | None:
        """The one known mistake (family) this submission's failed tests of ``problem`` name, or
        None (see the class's rules). ``named``: what the problems it uses named, decided before
        it."""
        nodeids = [n for n, t in self.tests.items() if t.problem == problem]
        # a test that used a component failing its own tests is left out: no mistake is named there
        # (_diagnose), and what it saw may be the component's
        failed = [
            n
            for n in nodeids
            if self.verdicts.get(n, ("error",))[0] != "passed" and n not in self._silenced
        ]
        # a test not run, a timeout, a crash, a stub, an exception: no mistake's value explains
        # those, unless the test says which call raised and the mistake raises there too
        # (compare.raising)
        errors = [n for n in failed if self.verdicts.get(n, ("error",))[0] == "error"]
        if any(n not in self._raised for n in errors):
            return None
        judged = [
            self._failed[n][0].evidence
            for n in failed
            if n in self._failed and self._failed[n][0].evidence is not None
        ]
        judged += [self._raised[n] for n in failed if n in self._raised]
        if not judged:
            return None
        common = frozenset.intersection(*(e.matched for e in judged))
        owners = {f: home for e in judged for f, home in e.owners.items()}
        strong = {family(mid) for e in judged for mid in e.strong & common}
        candidates = {family(mid) for mid in common}
        candidates = {
            f for f in candidates if owners.get(f, problem) == problem or named.get(owners[f]) == f
        }
        return next(iter(candidates)) if len(candidates) == 1 and candidates <= strong else None

    def _diagnose(self) -> None:
        """Name each problem's known mistake on its failed checks that match it, and no other: the
        problems that use others last, so that a component's mistake is known to its own tests
        first."""
        uses = {t.problem: len(t.uses) for t in self.tests.values()}
        named: dict[str, str | None] = {}
        problems = dict.fromkeys(t.problem for t in self.tests.values())
        for problem in sorted(problems, key=lambda p: uses[p]):
            named[problem] = self._named(problem, named)
        for nodeid, (exc, public, output, note) in self._failed.items():
            mistake, before = named.get(self.tests[nodeid].problem), exc.diagnosis
            evidence = exc.evidence
            if (
                mistake is not None
                and evidence is not None
                and nodeid not in self._silenced
                and mistake in evidence.families()
            ):
                exc.diagnosis = Diagnosis(mistake, evidence.best.get(mistake, ""))
            elif before is not None and not before.mistake.startswith("hint."):
                exc.diagnosis = None  # the catalogue's per-check guess, not borne out
            if exc.diagnosis == before:
                continue
            status, kind, text = verdict(exc, public, output)
            self.verdicts[nodeid] = (status, kind, text + note)
            self.feedback[nodeid] = {**self.feedback[nodeid], **exc.feedback(public)}
            if exc.diagnosis is None:
                self.feedback[nodeid].pop("diagnosis", None)

    def grader_error(self) -> str | None:
        """The name of the first test that raised an error of its own (the suite's, not the
        student's)."""
        return next(
            (self.tests[n].name for n, v in self.verdicts.items() if v[1] == "grader_error"), None
        )

    def results(self, nodeids: Sequence[str], error: str) -> tuple[TestResult, ...]:
        """Every test's result, in ``nodeids``' order; a test that did not run says why
        (``error``)."""
        self._diagnose()
        results = []
        for nodeid in nodeids:
            test = self.tests[nodeid]
            status, kind, output = self.verdicts.get(
                nodeid, ("error", "not_run", f"not run: {error}")
            )
            results.append(
                TestResult(
                    name=test.name,
                    problem=test.problem,
                    points=test.points,
                    status=status,
                    output=output,
                    visibility=test.visibility,
                    kind=kind,
                    feedback=self.feedback.get(nodeid, {}),
                    property=test.property,
                )
            )
        return tuple(results)
