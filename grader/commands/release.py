"""``grade release``: the student release (stubs, public suites, a student course.json and README,
and the grader itself) and the nbgrader source folder around the assignment's notebook
(:mod:`grader.commands.nbsource`).

Nothing from the solutions or the hidden suites goes in: the student course.json is built from the
loaded course without them, and only the files listed here are copied. What the feedback needs in
their place, the known mistakes' outputs and the worked example's reference values, is computed
here, on this machine (:mod:`grader.commands.feedback_data`), into ``tests/public/``. A release
folder is written whole (in a temporary folder, then renamed) and carries a marker, so a rerun
replaces it and nothing else is ever overwritten.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import asdict
from pathlib import Path, PurePosixPath
from typing import Mapping, Union

from grader.course.manifest import Course
from grader.errors import ExitStatus, GradeError

MARKER = ".grade-generated"
PACKAGE = (
    Path(__file__).resolve().parents[1]
)  # grader/, this module being grader/commands/release.py
Content = Union[Path, str, bytes]  # a file to copy, or the text or bytes to write


def _relative(course: Course, path: Path, what: str) -> PurePosixPath:
    """Where ``path`` goes in the release: the flat layout a student gets whatever the course's (an
    assignment's ``exercises/<assignment>/`` is the release's ``exercises/``, the folder of its
    public suites ``tests/public/``)."""
    path = path.resolve()
    publics = {p.public.resolve().parent for p in course.problems}
    homes = [(course.exercises.resolve(), PurePosixPath("exercises"))]
    if len(publics) == 1:
        homes.append((publics.pop(), PurePosixPath("tests", "public")))
    for folder, home in homes:
        if path == folder or folder in path.parents:
            return home / path.relative_to(folder).as_posix()
    try:
        return PurePosixPath(path.relative_to(course.root).as_posix())
    except ValueError:
        raise GradeError(f"{course.path}: {what} {path} is outside the course folder") from None


def student_manifest(course: Course) -> dict:
    """course.json for students: no solutions, no hidden suites, no LMS ids."""
    manifest: dict = {"assignment": course.assignment}
    if course.title:
        manifest["title"] = course.title
    manifest["exercises"] = str(_relative(course, course.exercises, "the exercises folder"))
    limits = asdict(course.limits)
    manifest["imports"] = list(limits.pop("imports"))  # the same import policy as at grading
    manifest["limits"] = limits
    shipped = _feedback_paths(course)
    if shipped:
        manifest["feedback"] = {key: str(rel) for key, rel in shipped.items()}
    if course.due:
        manifest["due"] = course.due.isoformat()
    if course.late_policy:
        manifest["late_policy"] = asdict(course.late_policy)
    manifest["problems"] = [
        {
            "name": p.name,
            "module": p.module,
            "functions": list(p.functions),
            "points": p.points,
            "public": str(_relative(course, p.public, "the public suite")),
        }
        for p in course.problems
    ]
    return manifest


# Where a release keeps the data computed in place of the solutions, and what each is computed from.
DATA_FILES = {
    "mistakes_data": (PurePosixPath("tests", "public", "mistakes.json"), "mistakes"),
    "trace_data": (PurePosixPath("tests", "public", "trace.json"), "trace"),
}


def _feedback_paths(course: Course) -> dict[str, PurePosixPath]:
    """course.json ``feedback`` key -> its path in the release: the worked example's module and the
    data computed from the catalogue and the worked example, never the catalogue's variants
    (course.json ``feedback.mistakes`` sits beside the solutions)."""
    paths = {
        key: rel
        for key, (rel, source) in DATA_FILES.items()
        if getattr(course.feedback, source) is not None
    }
    if course.feedback.trace is not None:
        paths["trace"] = _relative(course, course.feedback.trace, "feedback.trace")
    return paths


def public_files(course: Course, data: Mapping[str, dict]) -> dict[PurePosixPath, Content]:
    """The public suites with the modules beside them (e.g. a worked example), the feedback
    ``data`` (:func:`grader.commands.feedback_data.feedback_data`) and the student course.json."""
    from grader.commands.feedback_data import dumps

    hidden = {p.hidden.resolve() for p in course.problems if p.hidden}
    folders = {p.public.resolve().parent for p in course.problems}
    files: dict[PurePosixPath, Content] = {
        PurePosixPath("course.json"): json.dumps(
            student_manifest(course), indent=2, ensure_ascii=False
        )
        + "\n"
    }
    for folder in sorted(folders):
        for path in sorted(folder.glob("*.py")):
            if path.resolve() not in hidden:
                files[_relative(course, path, "the public suite")] = path
    for key, rel in _feedback_paths(course).items():
        files[rel] = dumps(data[key]) if key in DATA_FILES else course.feedback.trace
    return files


def syntax_errors(course: Course) -> list[str]:
    """One line per stub or solution module of the course that does not compile: its file, line
    and Python's words."""
    found = []
    for folder, what in [(course.exercises, "stub"), (course.solutions, "solution")]:
        for module in dict.fromkeys(p.module for p in course.problems):
            path = None if folder is None else folder / f"{module}.py"
            if path is None or not path.is_file():
                continue
            try:
                compile(path.read_bytes(), str(path), "exec", dont_inherit=True)
            except (SyntaxError, ValueError) as exc:  # (ValueError: a null byte)
                if path.resolve().is_relative_to(course.root.resolve()):
                    path = path.resolve().relative_to(course.root.resolve())
                line = getattr(exc, "lineno", None)
                words = getattr(exc, "msg", None) or str(exc)
                found.append(
                    f"{path}{f':{line}' if line else ''}: the {what} does not compile: {words}"
                )
    return found


def stub_files(course: Course) -> dict[PurePosixPath, Content]:
    """Every problem's stub module from the exercises folder."""
    files: dict[PurePosixPath, Content] = {}
    for module in dict.fromkeys(p.module for p in course.problems):
        stub = course.exercises / f"{module}.py"
        if not stub.is_file():
            raise GradeError(f"{course.path}: field 'exercises': no stub {stub}")
        files[_relative(course, stub, "the stub")] = stub
    return files


def package_files() -> dict[PurePosixPath, Content]:
    """The grader package's files (sources and data, no caches), as ``grader/...``."""
    return {
        PurePosixPath(path.relative_to(PACKAGE.parent).as_posix()): path
        for path in sorted(PACKAGE.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc"
    }


def grader_files() -> dict[PurePosixPath, Content]:
    """The grader package and its pyproject.toml, so that ``pip install .`` in the release gives
    ``grade``."""
    pyproject = PACKAGE.parent / "pyproject.toml"
    if not pyproject.is_file():
        raise GradeError(
            f"{pyproject}: not found: grade release bundles the grader from its source tree"
        )
    return {PurePosixPath("pyproject.toml"): pyproject, **package_files()}


def _allowed(course: Course) -> str:
    return " and ".join(
        [", ".join(course.limits.imports)] * bool(course.limits.imports)
        + ["the Python standard library"]
    )


def student_readme(course: Course) -> str:
    """The student README: set up, ``grade check``, the problems and their points, the due date."""
    manifest = student_manifest(course)
    rows = "\n".join(
        f"| `{p.name}` | `{manifest['exercises']}/{p.module}.py` | "
        f"{', '.join(f'`{f}`' for f in p.functions)} | {p.points:g} |"
        for p in course.problems
    )
    due = f"\nDue: **{course.due.isoformat()}**." if course.due else ""
    if course.late_policy:
        due += f" Late work loses {course.late_policy.describe()}."
    first = course.problems[0].name
    traced = "trace" in manifest.get(
        "feedback", {}
    )  # the worked example ships: `grade trace` works
    trace_sh = (
        "\n.venv/bin/grade trace                  # the course's worked example through your "
        "functions, "
        "step by step"
        if traced
        else ""
    )
    trace_bat = "\n.venv\\Scripts\\grade trace" if traced else ""
    return f"""# {course.title or course.assignment}

Write the functions below in `{manifest["exercises"]}/`, then check them with the public tests.
The hidden tests run when your work is graded: they check more cases of the same rules.{due}

| problem | file | functions | points |
|---|---|---|---|
{rows}

## Set up (once; Python 3.10 or newer)

In this folder, on macOS or Linux:

```sh
python3 -m venv .venv
.venv/bin/pip install .
```

On Windows (Command Prompt or PowerShell):

```bat
py -m venv .venv
.venv\\Scripts\\pip install .
```

## Check your work

On macOS or Linux:

```sh
.venv/bin/grade check                  # every problem
.venv/bin/grade check {first}        # just this one
.venv/bin/grade check --json me.json   # also write the result as a score file{trace_sh}
```

On Windows, the same commands with `.venv\\Scripts\\grade`:

```bat
.venv\\Scripts\\grade check
.venv\\Scripts\\grade check {first}{trace_bat}
```

It prints one row per problem (tests passed, points) and one line per failing test saying what was
checked and what is wrong, and exits 0 only when every public test passes. Its points are
those of the public tests only, a share of each problem's points: hidden tests of the same rules,
run when your work is graded after the deadline, carry the rest. Your modules import each
other by plain name (`from {course.problems[0].module} import {course.problems[0].functions[0]}`).
You may import {_allowed(course)}: nothing else is available to your code, here or when it is graded
(`import scipy` raises ModuleNotFoundError).
The public tests are in `tests/`: read them to see exactly what is checked.

## Hand in

Your `{manifest["exercises"]}/*.py` files (a zip of them, or a notebook whose cells define the
functions, works too).
Make the zip and check it exactly as it will be graded (on Windows, with `.venv\\Scripts\\grade`):

```sh
.venv/bin/grade pack                       # writes hand-in.zip and says what will be graded
.venv/bin/grade check --path hand-in.zip   # the public tests on the hand-in, as the grader reads it
```

Working in a notebook? In a cell: `from grader import check; check()` (or
`check("{course.problems[0].name}")`) runs the same public tests on the saved notebook, as it
will be graded.
"""


def replaceable(out: Path) -> None:
    """:raises GradeError: ``out`` exists, is not empty and was not generated by the grader."""
    out = Path(out)
    if out.exists() and (not out.is_dir() or (any(out.iterdir()) and not (out / MARKER).is_file())):
        raise GradeError(
            f"{out}: exists and was not written by grade release: "
            "remove it or choose another folder"
        )


def write_tree(files: Mapping[PurePosixPath, Content], out: Path) -> None:
    """Write ``files`` as the whole content of ``out``, replacing an earlier generated ``out`` in
    one rename.

    :raises GradeError: ``out`` exists, is not empty and was not generated by the grader.
    """
    out = Path(out)
    replaceable(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        for rel, content in files.items():
            target = tmp.joinpath(*rel.parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, Path):
                shutil.copyfile(content, target)
            elif isinstance(content, bytes):
                target.write_bytes(content)
            else:
                target.write_text(content, encoding="utf-8")
        (tmp / MARKER).write_text(
            "Generated by the grader; the whole folder is replaced on the next run.\n"
        )
        for folder, _, names in os.walk(tmp):  # readable by all who can read out's parent, whatever
            for path in [
                folder,
                *(os.path.join(folder, n) for n in names),
            ]:  # the umask (mkdtemp: 0700)
                os.chmod(path, 0o755 if os.path.isdir(path) else 0o644)
        if out.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old.", dir=out.parent))
            os.replace(out, old / out.name)
            os.replace(tmp, out)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def build(
    course: Course, out: Path, public: Mapping[PurePosixPath, Content]
) -> list[PurePosixPath]:
    """Write the student release into ``out``, with :func:`public_files` ``public``.

    :returns: the release's files, relative to ``out``.
    :raises GradeError: a stub or suite is missing or outside the course folder, or ``out`` is not
        ours to replace.
    """
    files = {
        **grader_files(),
        **stub_files(course),
        **public,
        PurePosixPath("README.md"): student_readme(course),
    }
    write_tree(files, out)
    return sorted(files)


CONFIG = f"""\
# nbgrader settings written once by `grade release` (never overwritten: edit freely).
c = get_config()  # noqa: F821 (nbgrader provides it)
c.CourseDirectory.ignore = [".ipynb_checkpoints", "*.pyc", "__pycache__", "feedback", "{MARKER}"]
# Seconds per cell; a test cell grades its problem with the course's own time limits.
c.Execute.timeout = 300
"""


def write_nbgrader_source(
    course: Course, course_dir: Path, public: Mapping[PurePosixPath, Content]
) -> Path:
    """Write ``source/<assignment>/`` (the notebook, the student course.json, the public suites and
    the feedback data) into an nbgrader course folder, and its ``nbgrader_config.py`` when there is
    none.

    :param public: :func:`public_files`.
    :returns: the notebook's path.
    :raises GradeError: as :func:`grader.commands.nbsource.notebook`, or ``source/<assignment>``
        exists and was not generated.
    """
    import nbformat

    from grader.commands.nbsource import notebook

    name = f"{course.assignment}.ipynb"
    files = {**public, PurePosixPath(name): nbformat.writes(notebook(course)) + "\n"}
    folder = Path(course_dir) / "source" / course.assignment
    write_tree(files, folder)
    config = Path(course_dir) / "nbgrader_config.py"
    if not config.exists():
        config.write_text(CONFIG, encoding="utf-8")
    return folder / name


def main(*, out_dir: Path, nbgrader_dir: Path, course_path: Path) -> ExitStatus:
    """Write the student release into ``out_dir`` and the nbgrader source into ``nbgrader_dir``,
    saying so."""
    import click

    from grader.commands.feedback_data import coinciding, describe, feedback_data
    from grader.course import manifest as course_mod

    course = course_mod.load(course_path)
    if errors := syntax_errors(course):
        raise GradeError(errors[0])
    replaceable(out_dir)  # before the seconds that computing the data takes
    replaceable(Path(nbgrader_dir) / "source" / course.assignment)
    data = feedback_data(course)
    public = public_files(course, data)
    files = build(course, out_dir, public)
    click.echo(
        f"{out_dir}: {len(files)} files (stubs, public suites, course.json, README, the grader)"
    )
    if data:
        click.echo(f"{out_dir}: feedback data computed: {describe(data)}")
    for line in coinciding(course):  # for the author: where the suites' inputs fall short
        click.echo(f"mistakes that coincide: {line}")
    notebook = write_nbgrader_source(course, nbgrader_dir, public)
    click.echo(f"{notebook}: the nbgrader source notebook")
    return ExitStatus.OK
