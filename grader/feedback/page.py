"""One self-contained HTML feedback page per student (``grade check --html``, ``grade autograde
--html``).

The page holds the score table; each failed test with its message, its diagnosis and, where values
may be shown, heat maps of the expected values, the student's and the difference; and the figures
tests attach (e.g. the student's attention pattern beside the reference's). Heat maps are HTML
tables with inline background colours. Inline CSS only: no script, no link, no image, nothing
fetched when the page is viewed. This module prepares plain data (colours, texts, what to show); the
templates ``page.html.j2`` and ``macros.html.j2`` write it, autoescaped, so every text from a test
or a student is escaped.
"""

from __future__ import annotations

from typing import Iterable, Mapping

import numpy as np

from grader.feedback.causes import cause_words, causes, explained, test_names
from grader.feedback.mismatch import split_diagnosis
from grader.feedback.templates import macro
from grader.feedback.templates import render as render_template

MAX_ROWS, MAX_COLUMNS = (
    12,
    16,
)  # cells shown per heat map; larger arrays are cut, and the page says so

PAGE, TEMPLATES = "page.html.j2", "macros.html.j2"


def _rgb(t: float, high: tuple[int, int, int], low: tuple[int, int, int] = (255, 255, 255)) -> str:
    r, g, b = (round(lo + (hi - lo) * t) for lo, hi in zip(low, high))
    return f"#{r:02x}{g:02x}{b:02x}"


def _colour(value: float, scale: float, sequential: bool) -> tuple[str, str]:
    """A value's background and ink: white at 0, red for positive, blue for negative (or, for
    ``sequential`` values from 0 to ``scale``, white to blue)."""
    t = min(abs(value) / scale, 1.0) if scale > 0 else 0.0
    colour = _rgb(t, (49, 99, 173)) if sequential or value < 0 else _rgb(t, (192, 57, 43))
    return colour, "#fff" if t > 0.6 else "#1d2330"


def _cell(value: float, scale: float, sequential: bool) -> tuple[str, str, str]:
    """A heat-map cell: (background, ink, text); the background says the value (see
    :func:`_colour`); NaN and inf are dark."""
    if not np.isfinite(value):
        return "#333", "#fff", str(value)
    colour, ink = _colour(value, scale, sequential)
    # values all below 0.0005 (a near miss's differences) would all read 0.000: write them in
    # e-notation
    text = f"{round(value, 3) + 0.0:.3f}" if scale >= 5e-4 else f"{value:.1e}" if value else "0"
    return colour, ink, text


def _legend(caption: str, scale: float, sequential: bool = False) -> dict:
    values = np.linspace(0.0 if sequential else -scale, scale, 3 if sequential else 5)
    return {
        "caption": caption,
        "swatches": [(*_colour(v, scale, sequential), f"{v + 0.0:.3g}") for v in values],
    }


def _heatmap(array: np.ndarray, caption: str, scale: float, sequential: bool = False) -> dict:
    rows = np.asarray(array, dtype=np.float64)
    rows = rows.reshape(1, -1) if rows.ndim < 2 else rows.reshape(-1, rows.shape[-1])
    cut = rows.shape[0] > MAX_ROWS or rows.shape[1] > MAX_COLUMNS
    note = f"(first {MAX_ROWS} × {MAX_COLUMNS} of {rows.shape[0]} × {rows.shape[1]})" if cut else ""
    return {
        "caption": caption,
        "note": note,
        "rows": [
            [_cell(v, scale, sequential) for v in row[:MAX_COLUMNS]] for row in rows[:MAX_ROWS]
        ],
    }


def legend(caption: str, scale: float, sequential: bool = False) -> str:
    """The colour scale of heat maps drawn with ``scale``: swatches from -scale (blue) through 0
    (white) to +scale (red), or from 0 to scale for ``sequential`` ones, each with its value (3
    significant digits, so that a scale of 2e-05 reads as one)."""
    return str(macro(TEMPLATES, "legend")(_legend(caption, scale, sequential)))


def heatmap(array: np.ndarray, caption: str, scale: float, sequential: bool = False) -> str:
    """An HTML table of ``array`` (1-D as one row; more than 2-D as rows of its last axis), one
    coloured cell per value, cut to :data:`MAX_ROWS` × :data:`MAX_COLUMNS`."""
    return str(macro(TEMPLATES, "heatmap")(_heatmap(array, caption, scale, sequential)))


def _scale(*arrays: np.ndarray) -> float:
    finite = [np.abs(a[np.isfinite(a)]) for a in arrays]
    return max((float(f.max()) for f in finite if f.size), default=0.0)


def _diff_maps(feedback: Mapping) -> dict:
    expected, got = np.asarray(feedback["expected"]), np.asarray(feedback["got"])
    scale = _scale(expected, got)
    with np.errstate(invalid="ignore"):
        difference = got - expected
    return {
        "maps": [
            _heatmap(expected, "expected", scale),
            _heatmap(got, "yours", scale),
            _heatmap(difference, "yours − expected", _scale(difference)),
        ],
        "legends": [
            _legend("expected and yours", scale),
            _legend("yours − expected", _scale(difference)),
        ],
    }


def _figure(figure: Mapping) -> dict:
    panels = figure["panels"]
    values = [np.asarray(a, dtype=np.float64) for a in panels.values()]
    sequential = all(np.nanmin(a) >= 0 for a in values if np.isfinite(a).any())
    scale = _scale(*values)
    return {
        "title": figure["title"],
        "maps": [_heatmap(a, name, scale, sequential) for name, a in zip(panels, values)],
        "legend": _legend("", scale, sequential),
    }


def _failure(
    test: Mapping,
    data: Mapping,
    shown: set[tuple[str, str]],
    explains: Mapping[tuple[str, str], list[str]],
) -> dict:
    """A failed test's article: its message, with the grader's diagnosis (never a line the student
    printed) in a highlighted box, once per problem, listing every failed test it explains: a later
    test with the same diagnosis refers to it (``shown``: the diagnoses boxed; one mistake fitted to
    other numbers, say another count, is shown again)."""
    diagnosis, rest = split_diagnosis(test)
    box = None
    if diagnosis is not None and (test["diagnosis"], diagnosis) in shown:
        box = "same"
    elif diagnosis is not None:
        shown.add((test["diagnosis"], diagnosis))
        box = "new"
    return {
        "group": False,
        "name": test["name"],
        "hidden": test["visibility"] != "visible",
        "box": box,
        "diagnosis": diagnosis,
        "explains": explains.get((test["problem"], diagnosis or ""), []) if box == "new" else [],
        "rest": rest,
        "diff": _diff_maps(data) if "expected" in data and "got" in data else None,
    }


def _group(tests: list[Mapping]) -> dict:
    """One article for the failed tests of one cause (:mod:`grader.feedback.causes`): the cause's
    words once, the tests it fails listed under them."""
    cause, rest = cause_words(tests)
    return {"group": True, "cause": cause, "rest": rest, "tests": test_names(tests)}


def _failures(tests: list[Mapping], feedback: Mapping[tuple[str, str], Mapping]) -> list[dict]:
    """A problem's failed tests: one article per cause that explains several (an import error, a
    missing function, a stub still raising), one per other test; a diagnosis boxed once with the
    tests it explains."""
    failed = [t for t in tests if t["status"] != "passed"]
    explains = explained(failed)
    shown: set[tuple[str, str]] = set()
    articles = []
    for group in causes(failed):
        if len(group) > 1:
            articles.append(_group(group))
        else:
            t = group[0]
            data = feedback.get((t["problem"], t["name"]), {})
            articles.append(_failure(t, data, shown, explains))
    return articles


def _points(x: float) -> str:
    return f"{x:g}"


def render(doc: dict, feedback: Mapping[tuple[str, str], Mapping]) -> str:
    """The page for one score document.

    :param doc: the student's score document (see ``grade schema``).
    :param feedback: (problem, test name) -> that test's feedback (``TestResult.feedback``):
        ``expected`` and ``got`` arrays, ``figures``; hidden tests carry none of these unless the
        course releases them.
    :returns: the HTML text.
    """
    sections = []
    for problem in doc["problems"]:
        tests = [t for t in doc["tests"] if t["problem"] == problem["name"]]
        sections.append(
            {
                "name": problem["name"],
                "grade": _grade_class(problem),
                "points": f"{_points(problem['score'])}/{_points(problem['max_score'])}",
                "figures": [
                    _figure(f)
                    for t in tests
                    for f in feedback.get((t["problem"], t["name"]), {}).get("figures", ())
                ],
                "failures": _failures(tests, feedback),
                "passed": ", ".join(t["name"] for t in tests if t["status"] == "passed"),
            }
        )
    share = doc["score"] / doc["max_score"] if doc["max_score"] else 0.0
    rows = [
        {
            "name": p["name"],
            "passed": f"{p.get('passed', 0)}/{len(p['tests'])}",
            "grade": _grade_class(p),
            "points": f"{_points(p['score'])}/{_points(p['max_score'])}",
        }
        for p in doc["problems"]
    ]
    notes = ([doc["error"]] if doc.get("error") else []) + doc.get("submission_notes", [])
    return render_template(
        PAGE,
        title=f"{doc['assignment']}: feedback for {doc['student']}",
        score=f"{_points(doc['score'])} / {_points(doc['max_score'])}",
        total=f"{_points(doc['score'])}/{_points(doc['max_score'])}",
        width=f"{100 * share:.1f}",
        rows=rows,
        notes=notes,
        sections=sections,
        graded_at=doc["graded_at"],
        version=doc["grader_version"],
        sandbox=doc["sandbox"],
    )


def _grade_class(problem: Mapping) -> str:
    return (
        "full"
        if problem["score"] == problem["max_score"]
        else ("none" if problem["score"] == 0 else "part")
    )


def feedback_of(results: Iterable) -> dict[tuple[str, str], Mapping]:
    """(problem, test name) -> feedback, from a submission's ``TestResult`` objects."""
    return {(r.problem, r.name): r.feedback for r in results}
