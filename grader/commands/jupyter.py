"""``grade check`` from a notebook: ``from grader import check; check("layernorm")``, or ``%grade
check``.

It grades what ``grade autograde`` will: the notebook **as saved** (Jupyter autosaves every two
minutes; save with Ctrl+S before checking), read with :func:`grader.intake.collect.one`, which keeps
the exercise functions and what they need and runs nothing. The grading is ``grade check`` itself,
run in a fresh process (``python -m grader check --path <the extracted modules> --json ...``): the
student's code runs in its worker process, never in this kernel, and the kernel's state (a patched
numpy) never reaches the tests. When the code this kernel last ran for a function differs from the
saved file, a note says so. The magic is registered when :func:`check` first runs in IPython, or by
``%load_ext grader``; IPython is never needed otherwise.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

from grader.commands.check import Checked, full_points
from grader.errors import GradeError


def _shell():
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    return get_ipython()


def find_notebook(course, notebook: str | Path | None = None, shell=None) -> Path:
    """The notebook to check: ``notebook``; else the one this kernel runs (``__session__``, which
    ipykernel sets from Jupyter's ``JPY_SESSION_NAME``); else ``<assignment>.ipynb`` or the only
    notebook in the current folder.

    :raises GradeError: none of these names a notebook that exists.
    """
    if notebook is not None:
        path = Path(notebook)
        if not path.is_file():
            raise GradeError(f"{path}: notebook not found")
        return path
    session = (shell.user_ns.get("__session__") if shell is not None else None) or os.environ.get(
        "JPY_SESSION_NAME"
    )
    if session and str(session).endswith(".ipynb") and Path(session).is_file():
        return Path(session)
    own = Path(f"{course.assignment}.ipynb")
    if own.is_file():
        return own
    found = sorted(Path().glob("*.ipynb"))
    if len(found) == 1:
        return found[0]
    raise GradeError(
        f"cannot tell which notebook this is ({len(found)} in {Path.cwd()}): "
        'pass it, e.g. check(notebook="the-block.ipynb")'
    )


def _unsaved(course, folder: Path, shell, problems) -> list[str]:
    """The modules whose code this kernel last ran differs from the saved notebook's (``In``, its
    history)."""
    from grader.intake.extract import modules_from_cells

    if shell is None:
        return []
    history = [
        (f"cell run {i}", s)
        for i, s in enumerate(shell.history_manager.input_hist_raw)
        if s.strip()
    ]
    ran = modules_from_cells(history, course.functions).modules
    modules = [p.module for p in course.problems if not problems or p.name in problems]
    return [m for m in dict.fromkeys(modules) if m in ran and ran[m] != _read(folder / f"{m}.py")]


def _read(path: Path) -> str | None:
    return path.read_text(encoding="utf-8") if path.is_file() else None


def check(
    *problems: str,
    notebook: str | Path | None = None,
    course: str | Path = "course.json",
    quiet: bool = False,
) -> Checked:
    """Run the public tests on the functions the saved notebook defines, print ``grade check``'s
    table.

    :param problems: the problems to check (default: every one).
    :param notebook: the notebook file (default: the one this kernel runs, see
        :func:`find_notebook`).
    :param course: the student course.json (beside the released notebook).
    :returns: the result; it is true (``.ok``) when every public test of those problems passes, as
        ``grade check`` exits 0.
    :raises GradeError: no course.json, an unknown problem, no notebook, or the grader failed.
    """
    from grader import report
    from grader.course import manifest as course_mod
    from grader.intake import collect

    shell = _shell()
    if shell is not None:
        load_ipython_extension(shell)
    loaded = course_mod.load(Path(course))
    for name in problems:
        loaded.problem(name)
    path = find_notebook(loaded, notebook, shell)
    with tempfile.TemporaryDirectory(prefix="grade-check-") as tmp:
        submission = collect.one(loaded, "you", path.resolve(), Path(tmp))
        if submission.error:
            raise GradeError(f"{path}: {submission.error}")
        unsaved = _unsaved(loaded, submission.folder, shell, problems)
        out = Path(tmp) / "score.json"
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "grader",
                "check",
                *problems,
                "--course",
                str(loaded.path),
                "--path",
                str(submission.folder),
                "--json",
                str(out),
            ],
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=loaded.limits.submission_budget + 120,
        )
        if proc.returncode not in (0, 1) or not out.is_file():
            last = (proc.stderr.strip().splitlines() or ["no message"])[-1]
            raise GradeError(f"grade check could not check {path.name}: {last}")
        doc = json.loads(out.read_text(encoding="utf-8"))
    notes = tuple(
        n for n in submission.notes if not n.startswith("graded the code cells of")
    ) + tuple(
        f"{m}.py: what this kernel last ran differs from the saved {path.name}, which is what was "
        "checked (and "
        "what autograde grades): save the notebook (Ctrl+S) and check again"
        for m in unsaved
    )
    result = Checked(doc, full_points(loaded, problems), notes=notes)
    if not quiet:
        from rich.console import Console

        console = Console()
        report.problem_table(doc, console, full_points=result.full_points)
        for note in notes:
            console.print(f"note: {note}", markup=False, highlight=False)
    return result


def _grade_magic(line: str) -> Checked | None:
    """``%grade check [PROBLEM ...] [--notebook FILE]``: :func:`check` from a cell, as in a
    terminal."""
    words = shlex.split(line)
    if not words or words[0] != "check" or words[-1] == "--notebook":
        print("usage: %grade check [PROBLEM ...] [--notebook FILE]")
        return None
    notebook = None
    if "--notebook" in words:
        i = words.index("--notebook")
        notebook, words = words[i + 1], words[:i] + words[i + 2 :]
    try:
        check(*words[1:], notebook=notebook)
    except GradeError as err:
        print(f"Error: {err}")
    return None  # the table says it all: no Out[] repr under it


def load_ipython_extension(ipython) -> None:
    """``%load_ext grader``: registers the ``%grade`` line magic (once)."""
    if "grade" not in ipython.magics_manager.magics["line"]:
        ipython.register_magic_function(_grade_magic, magic_kind="line", magic_name="grade")
