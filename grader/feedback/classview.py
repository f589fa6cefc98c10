"""The class report on the terminal (``grade report``): rich tables, one set per assignment.

Off a terminal (CI logs, a file) rich writes plain text: no colour codes, and bars of ``#`` that any
encoding prints. Long lists (the students with a diagnosis) are cut to a few names; the HTML page
has them all.
"""

from __future__ import annotations

from typing import Sequence

from grader.feedback.classreport import Assignment, histogram

NAMES_SHOWN = 8  # students named per diagnosis on the terminal
TESTS_SHOWN = 15  # most failed tests listed, public and hidden each
BAR_WIDTH = 30


def _g(x: float) -> str:
    return f"{x:.4g}"


def _pct(x: float) -> str:
    return f"{100 * x:.1f} %"


def _names(students: Sequence[str], shown: int = NAMES_SHOWN) -> str:
    more = len(students) - shown
    return ", ".join(students[:shown]) + (f" and {more} more" if more > 0 else "")


def _bars(values: Sequence[float], top: float) -> list[str]:
    rows = histogram(values, top)
    most = max((c for _, _, c in rows), default=0) or 1
    return [
        f"{low:6.4g}-{high:<6.4g} {'#' * round(BAR_WIDTH * c / most):<{BAR_WIDTH}} {c}"
        for low, high, c in rows
    ]


def show(report: Assignment, console) -> None:
    """Print one assignment's report on ``console`` (a rich Console)."""
    from rich.markup import escape
    from rich.table import Table

    def line(text: str = "") -> None:
        console.print(escape(text), highlight=False, soft_wrap=True)

    line(
        f"{report.name}: {report.counted} students graded, mean {_g(report.mean)} / "
        f"{_g(report.max_score)}, "
        f"median {_g(report.median)}; {len(report.grader_errors)} grader errors (not counted), "
        f"{len(report.refused)} refused, {len(report.blank)} blank, {len(report.missing)} missing, "
        f"{len(report.late)} late"
    )
    line()
    line("total points (students per bin):")
    for bar in _bars(report.totals, report.max_score):
        line("  " + bar)

    table = Table(title=f"{report.name}: problems, most points lost first", title_justify="left")
    for header in (
        "problem",
        "mean",
        "max",
        "full marks",
        "zero",
        "points lost",
        "share of points lost",
    ):
        table.add_column(header, justify="left" if header == "problem" else "right")
    for p in sorted(report.problems, key=lambda p: -p.lost):
        full = sum(1 for s in p.scores if s == p.max_score)
        zero = sum(1 for s in p.scores if s == 0)
        table.add_row(
            p.name,
            _g(p.mean),
            _g(p.max_score),
            str(full),
            str(zero),
            _g(p.lost),
            _pct(p.lost_share),
        )
    console.print(table)
    for p in report.problems:
        line(f"{p.name} (students per bin of points):")
        for bar in _bars(p.scores, p.max_score):
            line("  " + bar)

    for public in (True, False):
        rates = [r for r in report.tests if r.public == public and r.failed][:TESTS_SHOWN]
        table = Table(
            title=f"{report.name}: {'public' if public else 'hidden'} tests, most failed first",
            title_justify="left",
        )
        for header in ("problem", "test", "failed", "rate"):
            table.add_column(header, justify="right" if header in ("failed", "rate") else "left")
        for r in rates:
            table.add_row(r.problem, r.name, f"{r.failed}/{r.taken}", _pct(r.rate))
        console.print(
            table if rates else f"{report.name}: no {'public' if public else 'hidden'} test failed"
        )

    table = Table(
        title=f"{report.name}: diagnoses (known mistakes), most students first",
        title_justify="left",
    )
    for header in ("mistake", "students", "share", "who"):
        table.add_column(header, justify="right" if header in ("students", "share") else "left")
    for d in report.diagnoses:
        table.add_row(d.mistake, str(len(d.students)), _pct(d.share), escape(_names(d.students)))
    console.print(table if report.diagnoses else f"{report.name}: no known mistake diagnosed")

    for title, rows in (
        (
            "grader errors (no grade: not counted, not exported; rerun grade autograde)",
            [f"{s}: {why}" for s, why in report.grader_errors],
        ),
        (
            "refused (left out, as grade export leaves them out)",
            [f"{s}: {why}" for s, why in report.refused],
        ),
        ("blank submissions", list(report.blank)),
        ("missing (no score file)", list(report.missing)),
        (
            "late, extended or without a submission time",
            [
                f"{x.student}: {x.flag or f'{x.days_late} day(s)'}, {_g(x.penalty)} points off "
                f"{_g(x.raw_score)}" + (f" (extended to {x.extension})" if x.extension else "")
                for x in report.late
            ],
        ),
        (
            "adjusted by hand (overrides)",
            [
                f"{x.student}: {x.problem} {x.applied:+g}: {x.reason} ({x.by})"
                for x in report.adjusted
            ],
        ),
    ):
        if rows:
            line(f"{report.name}: {title}: {len(rows)}")
            for row in rows:
                line(f"  {row}")
    zeros: dict[tuple[str, str], list[str]] = {}
    for s in report.students:
        for problem, why in s.zeros:
            zeros.setdefault((problem, why.split(":")[0]), []).append(s.student)
    if zeros:
        line(f"{report.name}: zeros, by problem and why (each student's reason is on the page):")
        for (problem, kind), who in sorted(zeros.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            line(f"  {problem}: {kind}: {len(who)} ({_names(who)})")
    if report.similar is not None:
        sim = report.similar
        line(
            f"{report.name}: similar code (instructors only): top {len(sim.pairs)} of {sim.total} "
            f"pairs at least {_pct(sim.threshold)} alike, of {sim.compared} compared; the class's "
            f"baseline (median of all pairs): {_pct(sim.baseline)}"
        )
        for pair in sim.pairs:
            line(
                f"  {pair.a} ~ {pair.b}: {_pct(pair.similarity)} "
                f"({_pct(pair.share_a)} of {pair.a}'s code, {_pct(pair.share_b)} of {pair.b}'s)"
            )
    line()
