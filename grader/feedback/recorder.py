"""What ``grade release`` computes from the catalogue of known mistakes: the :class:`Recorder` notes
every call the suites ask the catalogue about while they grade the reference; :func:`precompute`
stores the mistakes' outputs on those calls for a student's copy (which has no solutions);
:func:`coincidences` tells the course's author which mistakes a test's inputs cannot tell apart."""

from __future__ import annotations

import copy
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from grader.feedback.matching import coincide, matches
from grader.feedback.mismatch import Same, family
from grader.feedback.mistakes import Call, Catalogue, Mistake, run_variants
from grader.feedback.outputs import call_key, encode


class Recorder(Catalogue):
    """A catalogue that notes every call a check asks it about, passed or failed, in ``calls``: the
    ``mistakes`` fixture while ``grade release`` grades the reference with the suites (a
    reference that fails a test is diagnosed as a student would be). With no variants, it diagnoses
    nothing.

    For each call it also notes which tests made it (``origins``: the suite file and the test's
    name, read off the caller's frames) and how their checks compare (``tolerances``, told by the
    check, pass or fail): what :func:`coincidences` needs to say which mistakes the suites' inputs
    cannot tell apart."""

    def __init__(
        self,
        data: Path | None = None,
        variants: Path | None = None,
        search: Sequence[Path] = (),
        problems: Mapping[str, str] | None = None,
    ):
        super().__init__(data, variants, search, problems)
        self.calls: dict[str, tuple[str, tuple, dict]] = {}
        self.origins: dict[str, set[tuple[str, str]]] = {}
        self.tolerances: dict[str, Same] = {}

    def diagnose(self, function: str, *args: Any, **kwargs: Any) -> Call:
        key = call_key(function, args, kwargs)
        self.calls[key] = (function, copy.deepcopy(args), copy.deepcopy(kwargs))
        self.origins.setdefault(key, set()).add(_test_frame())
        return _Recorded(self, function, args, kwargs, key)


@dataclass
class _Recorded(Call):
    """A call the :class:`Recorder` noted: its check tells it how it compares."""

    key: str = ""

    def compared(self, same: Same) -> None:
        self.catalogue.tolerances.setdefault(self.key, same)


def _test_frame() -> tuple[str, str]:
    """(file, name) of the test function that is asking, read off the stack: the nearest caller
    named test_..."""
    frame = sys._getframe(2)
    while frame is not None and not frame.f_code.co_name.startswith("test"):
        frame = frame.f_back
    return (frame.f_code.co_filename, frame.f_code.co_name) if frame is not None else ("", "")


def coincidences(
    recorder: Recorder,
    reference: Callable[[str, tuple, dict], Any],
    where: Callable[[str, str], str] = lambda path, name: name,
) -> list[str]:
    """One line for each group of a problem's own mistakes that give the same output, within the
    check's own tolerance, on a test's inputs (and differ from the reference's there): that test can
    name none of them, and another test must tell them apart (``grade release`` says so to the
    course's author).

    :param where: (suite file, test name) -> how a line names the test.
    """
    lines = []
    owners = recorder.owners
    for key, (function, args, kwargs) in sorted(recorder.calls.items()):
        same = recorder.tolerances.get(key)
        if same is None:  # a check never reached (the call raised first)
            continue
        right = reference(function, args, kwargs)
        home = recorder.problems.get(function)
        outputs = {
            mid: outs
            for mid, outs in run_variants(recorder.mistakes, function, args, kwargs).items()
            if owners.get(family(mid)) == home
        }
        live, _ = matches(outputs, right, [right], same)
        live = {mid: outs for mid, outs in live.items() if outs}
        groups: list[set[str]] = []
        for mid, outs in live.items():
            joined = {family(mid)} | {
                family(other)
                for other, theirs in live.items()
                if family(other) != family(mid)
                and any(coincide(same, a, b) for a in outs for b in theirs)
            }
            if len(joined) > 1:
                for group in [g for g in groups if g & joined]:
                    groups.remove(group)
                    joined |= group
                groups.append(joined)
        tests = sorted({where(path, name) for path, name in recorder.origins.get(key, ())})
        for group in groups:
            lines.append(
                f"{', '.join(tests) or function}: {' = '.join(sorted(group))} "
                f"(the same output of {function}() on its inputs: it cannot tell them apart)"
            )
    return sorted(set(lines))


def precompute(
    catalogue: Sequence[Mistake],
    calls: Mapping[str, tuple[str, tuple, dict]],
    reference: Callable[[str, tuple, dict], Any],
    owners: Mapping[str, str] | None = None,
) -> dict:
    """The JSON data for ``feedback.mistakes_data`` (what a release carries): messages, each
    mistake's problem (``owners``), and for each call the outputs of the variants that differ from
    the reference's own output (the others are never a diagnosis) and the mistakes whose variants
    all raise there (``raised``)."""
    stored, raised = {}, {}
    for key, (function, args, kwargs) in sorted(calls.items()):
        right = reference(function, args, kwargs)
        gave = run_variants(catalogue, function, args, kwargs)
        outputs = {mid: [o for o in outs if not _identical(o, right)] for mid, outs in gave.items()}
        outputs = {mid: outs for mid, outs in outputs.items() if outs}
        if outputs:
            stored[key] = encode(outputs)
        failed = sorted(m.id for m in catalogue if m.variants.get(function) and m.id not in gave)
        if failed:
            raised[key] = failed
    return {
        "messages": {m.id: m.message for m in catalogue},
        "owners": dict(owners or {}),
        "calls": stored,
        "raised": raised,
    }


def _identical(a: Any, b: Any) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        try:
            return np.array_equal(
                np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64), equal_nan=True
            )
        except (TypeError, ValueError):
            return False
    return type(a) is type(b) and a == b
