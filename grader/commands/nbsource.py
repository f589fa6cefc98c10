"""The nbgrader source notebook of an assignment, made with nbformat (``grade release`` writes it).

One notebook, ``source/<assignment>/<assignment>.ipynb``: an introduction, then for each problem a
markdown cell (the stub's text and what the public tests check), a solution cell
(:mod:`grader.intake.solution_cell`) and a locked autograder test cell worth the problem's points.
The test cell's public part grades the notebook's functions with the public suites; its hidden part,
between ``### BEGIN HIDDEN TESTS`` and ``### END HIDDEN TESTS``, names the instructor's course.json
so that the hidden suites run too. Both go through
:func:`grader.commands.nbcheck.points`: the same suites, scoring and sandbox as ``grade autograde``.
"""

from __future__ import annotations

import ast

from grader.course.manifest import Course
from grader.errors import GradeError
from grader.intake.solution_cell import weave

TEST_CELL = """\
# The tests of {name} ({points:g} points): they grade the functions this notebook defines,
# in a separate process.
from grader.commands.nbcheck import points

hidden_tests = None
### BEGIN HIDDEN TESTS
hidden_tests = ({course!r}, {assignment!r})
### END HIDDEN TESTS
points({name!r}, hidden_tests)"""


def _fenced(text: str) -> str:
    return f"```text\n{text.strip()}\n```" if text.strip() else ""


def _problem_text(course: Course, index: int) -> str:
    problem = course.problems[index]
    stub = (course.exercises / f"{problem.module}.py").read_text(encoding="utf-8")
    tree = ast.parse(stub)
    signatures = [
        f"`{n.name}({ast.unparse(n.args)})`"
        for n in tree.body
        if isinstance(n, ast.FunctionDef) and n.name in problem.functions
    ]
    public = ast.get_docstring(ast.parse(problem.public.read_text(encoding="utf-8"))) or ""
    parts = [
        f"## {index + 1}. {problem.name} ({problem.points:g} points)",
        f"Write {', '.join(signatures)} in the cell below: replace each `raise "
        "NotImplementedError()`.",
        _fenced(ast.get_docstring(tree) or ""),
    ]
    if public:
        parts += ["**What the public tests check**", _fenced(public)]
    return "\n\n".join(p for p in parts if p)


def notebook(course: Course):
    """The source notebook (an ``nbformat`` v4 notebook).

    :raises GradeError: a problem has 0 points (nbgrader cannot grade a 0-point cell), or no
        solutions/stubs.
    """
    import nbformat  # imported here: slow, and only releases need it

    if course.solutions is None:
        raise GradeError(
            f"{course.path}: field 'solutions': the source notebook needs the reference solutions"
        )
    modules = {p.module for p in course.problems}
    v4 = nbformat.v4
    cells = [
        v4.new_markdown_cell(
            f"# {course.title or course.assignment}\n\n"
            "**Set up once.** The test cells and `check` need the course's grader in the Python "
            "this notebook "
            "runs: in a new cell, run `%pip install <the course's release folder>` (the folder "
            "with "
            "`pyproject.toml` your instructor gives you; `%pip` installs into this kernel's "
            "environment, "
            "whatever the terminal's Python is), then restart the kernel.\n\n"
            "Write each function in the cell after its description. The test cell below it grades "
            "your functions "
            "with the public tests and shows the points (run it as often as you like); the hidden "
            "tests run when "
            "your notebook is graded.\n\n"
            "**Check your work** from any cell, with the same tests, diagnoses and verdict as "
            "`grade check`: "
            "`from grader import check; check()` (every problem) or "
            f'`check("{course.problems[0].name}")`; or '
            f"`%load_ext grader` once, then `%grade check {course.problems[0].name}`. It checks "
            "the notebook **as "
            "saved**, which is what is graded: "
            "save it (Ctrl+S) first."
        )
    ]
    for index, problem in enumerate(course.problems):
        if problem.points <= 0:
            raise GradeError(
                f"{course.path}: field 'problems[{index}].points': nbgrader needs points > 0"
            )
        stub = course.exercises / f"{problem.module}.py"
        reference = course.solutions / f"{problem.module}.py"
        for path in (stub, reference):
            if not path.is_file():
                raise GradeError(f"{course.path}: {path} is missing")
        code = weave(
            stub.read_text(encoding="utf-8"),
            reference.read_text(encoding="utf-8"),
            problem.functions,
            modules,
            where=f"{problem.module}.py",
        )
        cells += [
            v4.new_markdown_cell(_problem_text(course, index)),
            v4.new_code_cell(
                code,
                metadata={
                    "nbgrader": {
                        "schema_version": 3,
                        "grade": False,
                        "solution": True,
                        "locked": False,
                        "task": False,
                        "grade_id": f"{problem.name}_solution",
                    }
                },
            ),
            v4.new_code_cell(
                TEST_CELL.format(
                    name=problem.name,
                    points=problem.points,
                    course=str(course.path),
                    assignment=course.assignment,
                ),
                metadata={
                    "nbgrader": {
                        "schema_version": 3,
                        "grade": True,
                        "solution": False,
                        "locked": True,
                        "task": False,
                        "grade_id": f"{problem.name}_tests",
                        "points": problem.points,
                    }
                },
            ),
        ]
    nb = v4.new_notebook(
        cells=cells,
        metadata={
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
            "language_info": {"name": "python"},
        },
    )
    nbformat.validate(nb)
    return nb
