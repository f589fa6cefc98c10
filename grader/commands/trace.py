"""``grade trace``: the course's worked example through the student's functions, step by step,
beside the reference (:mod:`grader.feedback.trace` computes it, :mod:`grader.feedback.traceview`
prints it; the reference's values: :func:`grader.commands.feedback_data.trace_cases`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence

import click

from grader.commands.feedback_data import trace_cases
from grader.course import manifest as course_mod
from grader.errors import ExitStatus, GradeError
from grader.feedback import trace as trace_mod
from grader.feedback import traceview
from grader.feedback.glyphs import console
from grader.grading.phases import plan


def main(
    *, course_path: Path, path: Path | None, settings: Sequence[str], list_cases: bool
) -> ExitStatus:
    """Trace the modules at ``path`` (default: the course's exercises/) on the case ``settings``
    pick (or list the cases); the exit status (0 only when every step matches)."""
    course = course_mod.load(course_path)
    if list_cases:
        for key, (default, what) in trace_mod.case_options(course).items():
            click.echo(
                f"--case {key}=VALUE  (default {json.dumps(default)}){': ' + what if what else ''}"
            )
        return ExitStatus.OK
    case = trace_mod.case_from(course, settings)
    folder = path or course.exercises
    if not folder.is_dir():
        raise GradeError(f"{folder}: folder not found (pass --path with your modules' folder)")
    result = trace_mod.run(course, folder, case, trace_cases(course), plan(course))
    asked = ", ".join(settings)
    traceview.trace_table(
        result,
        console(),
        title=f"The worked example through your functions in {folder} "
        f"({asked or 'as in the course'})",
    )
    return ExitStatus.OK if result.matches else ExitStatus.FAILED
