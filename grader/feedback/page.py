"""One self-contained HTML feedback page per student (``grade check --html``, ``grade autograde --html``).

The page holds the score table; each failed test with its message, its diagnosis and, where values may be
shown, heat maps of the expected values, the student's and the difference; and the figures tests attach
(e.g. the student's attention pattern beside the reference's). Heat maps are HTML tables with inline
background colours. Inline CSS only: no script, no link, no image, nothing fetched when the page is viewed.
Every text from a test or a student is escaped with :func:`html.escape`.
"""
from __future__ import annotations

import html
from typing import Iterable, Mapping

import numpy as np

from grader.feedback.mismatch import split_diagnosis

MAX_ROWS, MAX_COLUMNS = 12, 16      # cells shown per heat map; larger arrays are cut, and the page says so

CSS = """
body { font: 15px/1.45 system-ui, sans-serif; color: #1d2330; margin: 2em auto; max-width: 68em; padding: 0 1em; }
h1 { font-size: 1.5em; margin-bottom: .2em; } h2 { margin-top: 1.8em; border-bottom: 1px solid #d5d9e0; }
h3 { font-size: 1.05em; margin: 0 0 .4em; }
.score { font-size: 1.3em; } .bar { background: #e6e8ec; height: .7em; border-radius: .35em; max-width: 30em; }
.bar div { background: #2f8a4c; height: 100%; border-radius: .35em; }
table.scores { border-collapse: collapse; margin: 1em 0; } table.scores td, table.scores th { padding: .3em .9em;
  border-bottom: 1px solid #e6e8ec; text-align: right; } table.scores td:first-child, table.scores th:first-child {
  text-align: left; }
.full { color: #2f8a4c; } .part { color: #b26a00; } .none { color: #c0392b; }
article { border: 1px solid #d5d9e0; border-left: 5px solid #c0392b; border-radius: 4px; padding: .8em 1em;
  margin: 1em 0; }
article.figure { border-left-color: #3b6fb6; }
.tag { font-size: .8em; font-weight: normal; background: #eef0f3; border-radius: 3px; padding: .1em .4em; }
.diagnosis { background: #fff4d6; border: 1px solid #f0c96a; border-radius: 4px; padding: .5em .7em; }
pre { background: #f6f7f9; padding: .6em .8em; overflow-x: auto; font-size: .85em; white-space: pre-wrap; }
.maps { display: flex; flex-wrap: wrap; gap: 1.2em; } figure { margin: 0; } figcaption { font-size: .85em;
  color: #555; margin-bottom: .2em; }
table.heat { border-collapse: collapse; font: 11px/1.2 ui-monospace, monospace; }
table.heat td { width: 3.6em; height: 1.9em; text-align: center; border: 1px solid #fff; }
.passed { color: #555; font-size: .9em; } .note { color: #555; font-size: .85em; }
.legend { margin-right: 1.5em; } .legend span { font: 11px/1.2 ui-monospace, monospace; padding: .2em .5em;
  border: 1px solid #e6e8ec; }
"""


def _rgb(t: float, high: tuple[int, int, int], low: tuple[int, int, int] = (255, 255, 255)) -> str:
    r, g, b = (round(lo + (hi - lo) * t) for lo, hi in zip(low, high))
    return f"#{r:02x}{g:02x}{b:02x}"


def _colour(value: float, scale: float, sequential: bool) -> tuple[str, str]:
    """A value's background and ink: white at 0, red for positive, blue for negative (or, for ``sequential``
    values from 0 to ``scale``, white to blue)."""
    t = min(abs(value) / scale, 1.0) if scale > 0 else 0.0
    colour = _rgb(t, (49, 99, 173)) if sequential or value < 0 else _rgb(t, (192, 57, 43))
    return colour, "#fff" if t > 0.6 else "#1d2330"


def _cell(value: float, scale: float, sequential: bool) -> str:
    """A <td> whose background says the value (see :func:`_colour`); NaN and inf are dark."""
    if not np.isfinite(value):
        return f'<td style="background:#333;color:#fff">{html.escape(str(value))}</td>'
    colour, ink = _colour(value, scale, sequential)
    # values all below 0.0005 (a near miss's differences) would all read 0.000: write them in e-notation
    text = f"{round(value, 3) + 0.0:.3f}" if scale >= 5e-4 else f"{value:.1e}" if value else "0"
    return f'<td style="background:{colour};color:{ink}">{text}</td>'


def legend(caption: str, scale: float, sequential: bool = False) -> str:
    """The colour scale of heat maps drawn with ``scale``: swatches from -scale (blue) through 0 (white) to
    +scale (red), or from 0 to scale for ``sequential`` ones, each with its value (3 significant digits, so that
    a scale of 2e-05 reads as one)."""
    values = np.linspace(0.0 if sequential else -scale, scale, 3 if sequential else 5)
    swatches = "".join(f'<span style="background:{c};color:{ink}">{v + 0.0:.3g}</span>'
                       for v in values for c, ink in [_colour(v, scale, sequential)])
    return f'<span class="legend">{html.escape(caption)} {swatches}</span>'


def heatmap(array: np.ndarray, caption: str, scale: float, sequential: bool = False) -> str:
    """An HTML table of ``array`` (1-D as one row; more than 2-D as rows of its last axis), one coloured cell
    per value, cut to :data:`MAX_ROWS` × :data:`MAX_COLUMNS`."""
    rows = np.asarray(array, dtype=np.float64)
    rows = rows.reshape(1, -1) if rows.ndim < 2 else rows.reshape(-1, rows.shape[-1])
    cut = rows.shape[0] > MAX_ROWS or rows.shape[1] > MAX_COLUMNS
    body = "".join("<tr>" + "".join(_cell(v, scale, sequential) for v in row[:MAX_COLUMNS]) + "</tr>"
                   for row in rows[:MAX_ROWS])
    note = f' <span class="note">(first {MAX_ROWS} × {MAX_COLUMNS} of {rows.shape[0]} × {rows.shape[1]})</span>' \
        if cut else ""
    return f'<figure><figcaption>{html.escape(caption)}{note}</figcaption><table class="heat">{body}</table></figure>'


def _scale(*arrays: np.ndarray) -> float:
    finite = [np.abs(a[np.isfinite(a)]) for a in arrays]
    return max((float(f.max()) for f in finite if f.size), default=0.0)


def _diff_maps(feedback: Mapping) -> str:
    expected, got = np.asarray(feedback["expected"]), np.asarray(feedback["got"])
    scale = _scale(expected, got)
    with np.errstate(invalid="ignore"):
        difference = got - expected
    return ('<div class="maps">' + heatmap(expected, "expected", scale) + heatmap(got, "yours", scale)
            + heatmap(difference, "yours − expected", _scale(difference)) + "</div>"
            + f'<p class="note">colour scales: {legend("expected and yours", scale)} '
              f'{legend("yours − expected", _scale(difference))}</p>')


def _figure(figure: Mapping) -> str:
    panels = figure["panels"]
    values = [np.asarray(a, dtype=np.float64) for a in panels.values()]
    sequential = all(np.nanmin(a) >= 0 for a in values if np.isfinite(a).any())
    scale = _scale(*values)
    maps = "".join(heatmap(a, name, scale, sequential) for name, a in zip(panels, values))
    return (f'<h3>{html.escape(figure["title"])}</h3><div class="maps">{maps}</div>'
            f'<p class="note">colour scale: {legend("", scale, sequential)}</p>')


def _output(test: Mapping, shown: set[tuple[str, str]]) -> str:
    """The test's message, with the grader's diagnosis (never a line the student printed) in a highlighted
    box, once per problem: a later test with the same diagnosis refers to it (``shown``: the diagnoses boxed;
    one mistake fitted to other numbers, say another count, is shown again)."""
    diagnosis, rest = split_diagnosis(test)
    box = ""
    if diagnosis is not None and (test["diagnosis"], diagnosis) in shown:
        box = '<p class="note">Diagnosis: the same as above.</p>'
    elif diagnosis is not None:
        shown.add((test["diagnosis"], diagnosis))
        box = f'<p class="diagnosis"><strong>Diagnosis:</strong> {html.escape(diagnosis)}</p>'
    return box + f"<pre>{html.escape(rest)}</pre>"


def _points(x: float) -> str:
    return f"{x:g}"


def render(doc: dict, feedback: Mapping[tuple[str, str], Mapping]) -> str:
    """The page for one score document.

    :param doc: the student's score document (see ``grade schema``).
    :param feedback: (problem, test name) -> that test's feedback (``TestResult.feedback``): ``expected`` and
        ``got`` arrays, ``figures``; hidden tests carry none of these unless the course releases them.
    :returns: the HTML text.
    """
    e = html.escape
    share = doc["score"] / doc["max_score"] if doc["max_score"] else 0.0
    rows = "".join(
        f'<tr><td>{e(p["name"])}</td><td>{p.get("passed", 0)}/{len(p["tests"])}</td>'
        f'<td class="{_grade_class(p)}">{_points(p["score"])}/{_points(p["max_score"])}</td></tr>'
        for p in doc["problems"])
    sections = []
    for problem in doc["problems"]:
        tests = [t for t in doc["tests"] if t["problem"] == problem["name"]]
        parts = [f'<h2>{e(problem["name"])} <span class="{_grade_class(problem)}">'
                 f'{_points(problem["score"])}/{_points(problem["max_score"])}</span></h2>']
        for t in tests:
            for figure in feedback.get((t["problem"], t["name"]), {}).get("figures", ()):
                parts.append(f'<article class="figure">{_figure(figure)}</article>')
        shown: set[tuple[str, str]] = set()
        for t in tests:
            if t["status"] == "passed":
                continue
            data = feedback.get((t["problem"], t["name"]), {})
            hidden = t["visibility"] != "visible"
            tag = '<span class="tag">hidden test: no inputs or values shown</span>' if hidden else ""
            maps = _diff_maps(data) if "expected" in data and "got" in data else ""
            parts.append(f'<article><h3>✗ {e(t["name"])} {tag}</h3>{_output(t, shown)}{maps}</article>')
        passed = [t["name"] for t in tests if t["status"] == "passed"]
        if passed:
            parts.append(f'<p class="passed">✓ passed: {e(", ".join(passed))}</p>')
        sections.append("<section>" + "".join(parts) + "</section>")
    title = f'{doc["assignment"]}: feedback for {doc["student"]}'
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1"><title>{e(title)}</title>'
            f"<style>{CSS}</style></head><body>"
            f"<h1>{e(title)}</h1>"
            f'<p class="score" id="score">Score: <strong>{_points(doc["score"])} / {_points(doc["max_score"])}'
            f'</strong></p><div class="bar"><div style="width:{100 * share:.1f}%"></div></div>'
            f'<table class="scores"><tr><th>problem</th><th>tests passed</th><th>points</th></tr>{rows}'
            f'<tr><th>total</th><th></th><th>{_points(doc["score"])}/{_points(doc["max_score"])}</th></tr></table>'
            + _intake(doc)
            + "".join(sections)
            + f'<p class="note">Graded {e(doc["graded_at"])} by grader {e(doc["grader_version"])} '
              f'(sandbox: {e(doc["sandbox"])}).</p></body></html>\n')


def _intake(doc: Mapping) -> str:
    """What the grader did with the files handed in (the folder graded, what it left out, a blank), if anything."""
    notes = ([doc["error"]] if doc.get("error") else []) + doc.get("submission_notes", [])
    if not notes:
        return ""
    items = "".join(f"<li>{html.escape(note)}</li>" for note in notes)
    return f'<section id="intake"><h2>Your hand-in</h2><ul>{items}</ul></section>'


def _grade_class(problem: Mapping) -> str:
    return "full" if problem["score"] == problem["max_score"] else ("none" if problem["score"] == 0 else "part")


def feedback_of(results: Iterable) -> dict[tuple[str, str], Mapping]:
    """(problem, test name) -> feedback, from a submission's ``TestResult`` objects."""
    return {(r.problem, r.name): r.feedback for r in results}
