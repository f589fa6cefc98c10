"""The class report as one self-contained HTML page (``grade report --html``): the template
``classreport.html.j2`` (autoescaped) and matplotlib's SVG histograms inline; no script, no link,
nothing fetched when it is viewed.

Each diagnosis links to its students' rows in the page's students table (anchors made from
positions, never from a student id, which may hold any character); a list longer than
:data:`NAMES_SHOWN` is collapsed with its count. A student's row links to their feedback page when
``grade autograde --html`` wrote one (a relative, percent-encoded link: nothing is fetched until it
is followed).
"""

from __future__ import annotations

from typing import Sequence

from grader.feedback.classreport import Assignment
from grader.feedback.plots import histogram_svg
from grader.feedback.templates import render as render_template

TEMPLATE = "classreport.html.j2"
NAMES_SHOWN = 10  # students named in a list before the rest is collapsed (<details>: no script)


def _assignment(index: int, report: Assignment) -> dict:
    from markupsafe import Markup

    anchors = {s.student: f"a{index}-s{i}" for i, s in enumerate(report.students)}
    # matplotlib writes these from numbers and course.json's problem names (it escapes them): safe
    # to inline
    plots = [Markup(histogram_svg(report.totals, report.max_score, f"{report.name}: total"))]
    plots += [Markup(histogram_svg(p.scores, p.max_score, p.name)) for p in report.problems]
    zeros: dict[tuple[str, str], list[str]] = {}
    for s in report.students:
        for problem, why in s.zeros:
            zeros.setdefault((problem, why.split(":")[0]), []).append(s.student)
    rows = [
        {"problem": p, "kind": k, "students": who}
        for (p, k), who in sorted(zeros.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    ]
    return {
        "report": report,
        "anchor": f"a{index}",
        "anchors": anchors,
        "plots": plots,
        "zeros": rows,
        "problems_by_loss": sorted(report.problems, key=lambda p: -p.lost),
        "public": [r for r in report.tests if r.public],
        "hidden": [r for r in report.tests if not r.public],
    }


def render(reports: Sequence[Assignment], course_title: str) -> str:
    """The page of ``reports`` (one per assignment, in the order given)."""
    return render_template(
        TEMPLATE,
        title=f"{course_title}: class report",
        css_name="classreport.css",
        names_shown=NAMES_SHOWN,
        assignments=[_assignment(i, r) for i, r in enumerate(reports)],
    )
