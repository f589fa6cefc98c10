"""The ``grade`` command: click options only; each command calls plain functions from the
modules."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from grader import __version__
from grader.commands.options import course_option
from grader.commands.push_cli import push
from grader.commands.term_cli import COMMANDS
from grader.errors import ExitStatus, GradeError


class _Group(click.Group):
    """Turns a :class:`GradeError` into a one-line message and exit status 2, in one place."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except GradeError as err:
            click.echo(f"Error: {err}", err=True)
            ctx.exit(ExitStatus.ERROR)


@click.group(cls=_Group)
@click.version_option(__version__, prog_name="grade")
def main() -> None:
    """Grade the transformer-block exercises: students run `grade check`, instructors `grade
    autograde`."""


main.add_command(push)  # grade push canvas|lti: its options are in grader/commands/push_cli.py
for _command in COMMANDS:  # the instructor's: grader/commands/term_cli.py
    main.add_command(_command)


@main.command()
@click.argument("problems", nargs=-1)
@course_option
@click.option(
    "--path",
    type=click.Path(path_type=Path),
    default=None,
    help="Folder with your modules (default: the course's exercises/ folder), or your hand-in: a "
    ".zip "
    "(grade pack writes one) or a notebook, read as grade autograde reads it.",
)
@click.option(
    "--json",
    "json_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Also write the result as a score file (JSON).",
)
@click.option(
    "--html",
    "html_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Also write a feedback page (self-contained HTML).",
)
def check(
    problems: tuple[str, ...],
    course_path: Path,
    path: Path | None,
    json_path: Path | None,
    html_path: Path | None,
) -> None:
    """Run the public tests on your code and print what passed.

    \b
    Examples:
      grade check                   # every problem, on ./exercises
      grade check layernorm gelu    # just these problems
      grade check --json me.json    # also write the result
      grade check --html me.html    # also write a feedback page
      grade check --path hand-in.zip   # your hand-in, as it will be graded
    Exits 0 only when every test passes.
    """
    from grader.commands import check as command

    sys.exit(
        command.main(
            problems=problems,
            course_path=course_path,
            path=path,
            json_path=json_path,
            html_path=html_path,
        )
    )


@main.command()
@click.argument("source", type=click.Path(exists=True, path_type=Path), required=False)
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="The hand-in to write (default: hand-in.zip; for a notebook, the notebook itself).",
)
@course_option
def pack(source: Path | None, out: Path | None, course_path: Path) -> None:
    """Write your hand-in and read it back as grade autograde will: what will be graded, what is
    left out.

    \b
    SOURCE is the folder with your modules (default: the course's exercises/) or your notebook
    (.ipynb). From a folder, the hand-in is a zip of your modules and the small files beside them.
    Examples:
      grade pack                          # exercises/ -> hand-in.zip
      grade pack --out ada.zip
      grade pack my-notebook.ipynb
    Then check it as it will be graded: grade check --path hand-in.zip
    Exits 0 when every module is there and not the released stub.
    """
    from grader.commands import pack as command

    sys.exit(command.main(source=source, out=out, course_path=course_path))


@main.command()
def schema() -> None:
    """Print the score file's JSON Schema."""
    from grader.report import SCHEMA_PATH

    click.echo(SCHEMA_PATH.read_text(), nl=False)


@main.command()
@course_option
@click.option(
    "--path",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Folder with your modules (default: the course's exercises/ folder).",
)
@click.option(
    "--case",
    "settings",
    multiple=True,
    metavar="KEY=VALUE",
    help="A case of the worked example, as its trace module declares them (--cases lists them); "
    "repeat for several.",
)
@click.option(
    "--cases", "list_cases", is_flag=True, help="List the worked example's cases and exit."
)
def trace(
    course_path: Path, path: Path | None, settings: tuple[str, ...], list_cases: bool
) -> None:
    """Run the course's worked example through your functions, step by step, beside the reference.

    \b
    Each step is computed by your functions from the reference's previous step, so each step that
    differs judges its own function (two faults show at two steps), and beside it from your own
    previous step (where your block ends up). Exits 0 only when every step matches.
    Examples:
      grade trace
      grade trace --cases              # what this assignment's worked example offers
      grade trace --case random        # one of them (NAME, or NAME=VALUE as --cases says)
    """
    from grader.commands import trace as command

    sys.exit(
        command.main(course_path=course_path, path=path, settings=settings, list_cases=list_cases)
    )


def run() -> None:
    """The ``grade`` program (its console script and ``python -m grader``): :func:`main`, then its
    exit handlers, then an exit that skips the interpreter's teardown, which frees numpy's and
    pytest's modules object by object (about 40 ms of CPU, a tenth of a grade check) and does
    nothing a finished command needs. With another thread still running, the usual exit."""
    import atexit
    import threading

    try:
        main(prog_name="grade")
    except SystemExit as exc:
        if threading.active_count() > 1:
            raise
        code = exc.code
    else:
        code = 0
    if code is not None and not isinstance(code, int):  # as sys.exit("message") does
        print(code, file=sys.stderr)
        code = 1
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe (grade check | head)
            pass
    os._exit(code or 0)
