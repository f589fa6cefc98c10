"""Options every command shares, for cli.py and the command groups declared beside it
(push_cli.py)."""

from __future__ import annotations

import functools
from pathlib import Path

import click


def course_option(command=None, *, help: str = "The course manifest."):
    """``--course FILE`` and ``--assignment NAME``, handed to the command as one ``course_path``
    (:class:`grader.course.manifest.CourseFile`) that ``load`` reads: every command takes both
    alike."""

    def decorate(command):
        @click.option(
            "--course",
            "course_path",
            default="course.json",
            show_default=True,
            type=click.Path(dir_okay=False, path_type=Path),
            help=help,
        )
        @click.option(
            "--assignment",
            "-a",
            "assignment",
            default=None,
            metavar="NAME",
            help="The assignment of course.json (needed when it lists several).",
        )
        @functools.wraps(command)
        def with_course(*args, course_path: Path, assignment: str | None, **kwargs):
            from grader.course.manifest import CourseFile

            return command(*args, course_path=CourseFile(course_path, assignment), **kwargs)

        return with_course

    return decorate(command) if command is not None else decorate
