"""What a notebook's test cell calls: grade one problem on the functions the notebook defines.

In the kernel, :func:`points` reads the cells that ran (IPython's input history), builds the
course's modules from them with :mod:`grader.intake.extract` (nothing is executed), and grades that
folder in a fresh Python process (``python -m grader.commands.nbcheck``) with the course's runner,
scoring and sandboxed worker: the suites never run in the student's kernel, where the student's code
could reach them. The points earned are the cell's value, which nbgrader reads as partial credit;
nothing is written to stderr, which nbgrader reads as a failure.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Sequence


def _history() -> list[str]:
    try:
        from IPython import get_ipython
    except ImportError:
        get_ipython = None
    shell = get_ipython() if get_ipython else None
    if shell is None:
        raise RuntimeError(
            "points() grades a notebook's cells: run it in Jupyter (elsewhere, use `grade check`)"
        )
    return list(shell.history_manager.input_hist_raw)


def points(
    problem: str,
    hidden_tests: str | tuple[str, str] | None = None,
    *,
    course: str | Path = "course.json",
    cells: Sequence[str] | None = None,
) -> float:
    """Grade ``problem`` on the notebook's functions, print each test's result, return the points
    earned.

    :param hidden_tests: the instructor's course.json, or (course.json, assignment) for a course of
        several: run the public and the hidden suites (autograding); None runs the public suites of
        ``course`` (a student's notebook).
    :param cells: the code that ran, in order (default: this kernel's input history).
    :returns: points, between 0 and the problem's points (public suites only: their points).
    :raises GradeError: unknown problem or a bad course.json; RuntimeError when the grading process
        fails.
    """
    from grader.course.manifest import load
    from grader.intake.extract import modules_from_cells

    path, assignment = (
        (hidden_tests, None)
        if isinstance(hidden_tests, (str, Path))
        else hidden_tests or (course, None)
    )
    grading = load(path, assignment)
    chosen = grading.problem(problem)
    sources = list(cells) if cells is not None else _history()
    extracted = modules_from_cells(
        [(f"cell run {i}", s) for i, s in enumerate(sources) if s.strip()], grading.functions
    )
    with tempfile.TemporaryDirectory(prefix="grade-notebook-") as tmp:
        folder = Path(tmp) / "notebook"
        folder.mkdir()
        for module, source in extracted.modules.items():
            (folder / f"{module}.py").write_text(source, encoding="utf-8")
        result = Path(tmp) / "score.json"
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "grader.commands.nbcheck",
                str(grading.path),
                grading.assignment,
                str(folder),
                str(result),
            ]
            + (["--hidden"] if hidden_tests else []),
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=grading.limits.submission_budget + 120,
        )
        if proc.returncode != 0 or not result.is_file():
            last = (proc.stderr.strip().splitlines() or ["no message"])[-1]
            raise RuntimeError(f"the grader could not grade {problem}: {last}")
        doc = json.loads(result.read_text(encoding="utf-8"))
    entry = next(p for p in doc["problems"] if p["name"] == problem)
    kind = "public and hidden tests" if hidden_tests else "public tests"
    print(f"{problem}: {entry['score']:g}/{entry['max_score']:g} points ({kind})")
    for test in doc["tests"]:
        if test["problem"] == problem:
            mark = "✓" if test["status"] == "passed" else "✗"
            line = f"  {mark} {test['name']} ({test['max_score']:g})"
            print(
                line
                if test["status"] == "passed"
                else f"{line}: {test['output']}".replace("\n", "\n      ")
            )
    for note in extracted.notes:
        if any(f"{f}()" in note for f in chosen.functions):
            print(f"  note: {note}")
    return float(entry["score"])


def main(argv: list[str]) -> int:
    """``python -m grader.commands.nbcheck COURSE_JSON ASSIGNMENT FOLDER RESULT_JSON [--hidden]``:
    grade FOLDER, write its score."""
    from grader.course.manifest import load
    from grader.grading.executors import run
    from grader.grading.results import Job
    from grader.sandbox.policy import available_levels, fallback_note
    from grader.scoring import score

    course_path, assignment, folder, result = argv[:4]
    hidden = "--hidden" in argv[4:]
    course = load(course_path, assignment)
    graded: list = []
    if note := fallback_note():
        print(note, file=sys.stderr)
    run(
        course,
        [Job("notebook", Path(folder))],
        graded.append,
        hidden=hidden,
        level=available_levels()[0],
        warm=False,
    )
    Path(result).write_text(json.dumps(score(course, graded[0], hidden=hidden)), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
