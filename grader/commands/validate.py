"""``grade validate``: the course is consistent: every problem has its stub, solution and hidden
suite, the reference scores full marks and the stubs zero on every suite.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import click

from grader import report, scoring
from grader.commands.release import syntax_errors
from grader.course import manifest as course_mod
from grader.errors import ExitStatus, GradeError
from grader.feedback.glyphs import console
from grader.grading import executors
from grader.grading.results import Job
from grader.sandbox.policy import available_levels, fallback_note


def main(*, course_path: Path) -> ExitStatus:
    """Validate the course at ``course_path``, printing what is wrong; the exit status."""
    course = course_mod.load(course_path)
    problems_ok = True
    for problem in course.problems:
        for folder, what in [(course.exercises, "stub"), (course.solutions, "solution")]:
            if folder is None or not (folder / f"{problem.module}.py").is_file():
                click.echo(f"{problem.name}: no {what} module {problem.module}.py", err=True)
                problems_ok = False
        if problem.hidden is None:
            click.echo(f"{problem.name}: no hidden suite", err=True)
            problems_ok = False
    for line in syntax_errors(course):
        click.echo(line, err=True)
        problems_ok = False
    if course.solutions is None:
        raise GradeError(f"{course.path}: field 'solutions': needed to validate the course")
    docs: list = []
    jobs = [Job("reference", course.solutions), Job("stubs", course.exercises)]
    if note := fallback_note():
        click.echo(note, err=True)
    # the author is shown why a hidden test failed the reference, as a public test's failure is
    # shown
    shown = dataclasses.replace(course, release_hidden_details=True)
    executors.run(
        shown,
        jobs,
        lambda g: docs.append(scoring.score(course, g, hidden=True)),
        hidden=True,
        level=available_levels()[0],
    )
    reference, stubs = docs
    report.summary_table(docs, console(), title=f"{course.assignment}: validation")
    for problem in reference["problems"]:
        share = sum(
            t["max_score"]
            for t in reference["tests"]
            if t["problem"] == problem["name"] and t.get("property")
        )
        click.echo(
            f"{problem['name']}: property tests {share:g} of {problem['max_score']:g} points "
            f"({share / problem['max_score']:.0%})"
            if problem["max_score"]
            else f"{problem['name']}: no points"
        )
    for ref_p, stub_p in zip(reference["problems"], stubs["problems"]):
        if ref_p["score"] != ref_p["max_score"]:
            click.echo(
                f"{ref_p['name']}: the reference scores {ref_p['score']:g}/{ref_p['max_score']:g}",
                err=True,
            )
            for t in reference["tests"]:
                if t["problem"] == ref_p["name"] and t["status"] != "passed":
                    click.echo(f"  {t['name']}: {t['output']}", err=True)
            problems_ok = False
        if stub_p["score"] != 0:
            click.echo(f"{stub_p['name']}: the stubs score {stub_p['score']:g}", err=True)
            problems_ok = False
    click.echo("course is valid" if problems_ok else "course is NOT valid")
    return ExitStatus.OK if problems_ok else ExitStatus.FAILED
