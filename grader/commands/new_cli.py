"""``grade new``'s click group: options only, each command calling :mod:`grader.commands.new`
(beside term_cli.py, which lists it among the instructor's commands: term_cli.py is near the
320-line limit of a module)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from grader.commands.options import course_option


@click.group()
def new() -> None:
    """Write a working skeleton to start from: grade validate accepts it at once.

    \b
    Nothing is written over an existing file (one line names it, and nothing is written);
    course.json gains one entry, its other text kept as it was.
    """


@new.command("assignment")
@click.argument("name")
@click.option("--problem", default=None, help="Its first problem (default: NAME as a Python name).")
@click.option("--title", default=None, help="Its title in course.json (default: NAME).")
@click.option(
    "--course",
    "course_path",
    default="course.json",
    show_default=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="The course manifest (written when missing).",
)
def new_assignment(name: str, problem: str | None, title: str | None, course_path: Path) -> None:
    """Assignment NAME, of one problem: its course.json entry, the stub, the reference, a known
    mistake, a public and a hidden suite, and an example class of three in examples/NAME/.

    \b
    Examples:
      grade new assignment softmax-temperature --problem softmax
      grade validate -a softmax-temperature
    """
    from grader.commands import new as command

    sys.exit(command.assignment(name, course_path, problem, title))


@new.command("problem")
@click.argument("name")
@course_option
def new_problem(name: str, course_path) -> None:
    """Problem NAME in assignment -a ASSIGNMENT: its course.json entry, the stub, the reference, a
    public and a hidden suite, and its file for each student of the example class.

    \b
    Examples:
      grade new problem temperature -a softmax-temperature
    """
    from grader.commands import new as command

    sys.exit(command.problem(name, course_path))
