"""Failed tests by cause, for ``grade check``'s output (:func:`grader.report.problem_table`) and the
feedback page (:mod:`grader.feedback.page`): one import error, one missing function, one stub still
raising fails many tests alike, and is said once with the tests it fails listed under it; a
diagnosed mistake is boxed once with the tests it explains."""

from __future__ import annotations

from typing import Iterable, Mapping, Sequence

from grader.feedback.mismatch import split_diagnosis

GROUPED = ("import_error", "missing_function", "not_implemented", "not_run", "budget")
"""The kinds of failure whose one cause fails many tests alike: said once, with the tests it
fails."""


def cause_of(test: Mapping) -> tuple | None:
    """What a failed test shares with the others of one cause (problem, kind and the cause's words),
    or None when its failure is its own. A hidden test's words are the coarse part of a public one's
    ("importing attention.py failed", beside "importing attention.py failed: NameError: ..."): the
    part before the detail."""
    if test.get("status") != "error" or test.get("kind") not in GROUPED:
        return None
    first = test.get("output", "").partition("\n")[0]
    return (
        test["problem"],
        test["kind"],
        first.split(": ", 1)[0] if test["kind"] == "import_error" else first,
    )


def causes(failed: Iterable[Mapping]) -> list[list[Mapping]]:
    """The failed tests in their order, those of one cause (:func:`cause_of`) together where its
    first is."""
    groups: list[list[Mapping]] = []
    where: dict[tuple, int] = {}
    for test in failed:
        key = cause_of(test)
        if key is None:
            groups.append([test])
        elif key in where:
            groups[where[key]].append(test)
        else:
            where[key] = len(groups)
            groups.append([test])
    return groups


def cause_words(group: Sequence[Mapping]) -> tuple[str, str]:
    """The cause of a group's tests, said once: (its first line, the rest), from a public test where
    there is one (a hidden test's words are the coarser, grader-only words of the same cause), the
    longest."""
    first = max(group, key=lambda t: (t["visibility"] == "visible", len(t.get("output", ""))))
    cause, _, rest = first.get("output", "").partition("\n")
    return cause, rest


def test_names(group: Iterable[Mapping]) -> list[str]:
    """The tests of a group, a hidden one said so."""
    return [t["name"] + (" (hidden)" if t["visibility"] != "visible" else "") for t in group]


def explained(failed: Iterable[Mapping]) -> dict[tuple[str, str], list[str]]:
    """(problem, diagnosis message) -> the failed tests that diagnosis explains."""
    found: dict[tuple[str, str], list[str]] = {}
    for t in failed:
        diagnosis, _ = split_diagnosis(t)
        if diagnosis is not None:
            found.setdefault((t["problem"], diagnosis), []).append(t["name"])
    return found
