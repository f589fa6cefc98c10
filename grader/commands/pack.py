"""``grade pack``: write the student's hand-in and read it back as ``grade autograde`` will
(:func:`grader.intake.handin.pack`), saying what will be graded and what is left out.
"""

from __future__ import annotations

from pathlib import Path

import click

from grader.course import manifest as course_mod
from grader.errors import ExitStatus
from grader.intake import handin


def main(*, source: Path | None, out: Path | None, course_path: Path) -> ExitStatus:
    """Pack ``source`` (default: the course's exercises/) into ``out``; the exit status (0 when it
    is ready)."""
    course = course_mod.load(course_path)
    packed = handin.pack(course, source or course.exercises, out)
    for note in packed.notes:
        click.echo(f"note: {note}")
    if packed.error:
        click.echo(f"{packed.path}: cannot be graded: {packed.error}", err=True)
    else:
        click.echo(
            f"{packed.path}: will be graded from {', '.join(packed.modules) or 'no course module'}"
            + (f"; missing {', '.join(packed.missing)}" if packed.missing else "")
        )
    if packed.ready:
        click.echo(f"check it as it will be graded: grade check --path {packed.path}")
    return ExitStatus.OK if packed.ready else ExitStatus.FAILED
