"""``grade new assignment NAME`` and ``grade new problem NAME -a ASSIGNMENT``: a working skeleton
to start from, which ``grade validate`` accepts at once (the reference full marks, the stubs zero).

A problem's files come from the templates beside this module (``templates/*.py.tmpl``, filled in
with :class:`string.Template`): its stub, its reference, a public and a hidden suite, and an
example class of three (``ada_correct``, the reference; ``alan_axis0``, a known mistake;
``grace_blank``, the stub). A new assignment also gets its catalogue of known mistakes. Nothing is
written over an existing file, and course.json gains the one entry: the rest of its text is kept
as it was.
"""

from __future__ import annotations

import json
import keyword
import re
import sys
from pathlib import Path
from string import Template

import click

from grader.course.manifest import CourseFile
from grader.errors import ExitStatus, GradeError

TEMPLATES = Path(__file__).with_name("templates")
POINTS = {"public": 4, "hidden": 6}  # what the templates' tests add up to, each suite
CLASS = {"ada_correct": "solution", "alan_axis0": "wrong", "grace_blank": "stub"}
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*$")  # course.json's rule for an assignment's name


def _fill(template: str, **names: str) -> str:
    text = (TEMPLATES / f"{template}.py.tmpl").read_text(encoding="utf-8")
    return Template(text).substitute(names)


def _problem_files(root: Path, assignment: str, problem: str, title: str, folders: dict) -> dict:
    """Path (under ``root``) -> text of one problem's files, the example class's included."""
    names = dict(
        assignment=assignment,
        problem=problem,
        title=title,
        tests=folders["tests"],
        mistakes=folders["mistakes"],
    )
    files = {
        f"{folders['exercises']}/{problem}.py": _fill("stub", **names),
        f"{folders['solutions']}/{problem}.py": _fill("solution", **names),
        f"{folders['tests']}/public/test_{problem}.py": _fill("public", **names),
        f"{folders['tests']}/hidden/test_{problem}.py": _fill("hidden", **names),
    }
    for student, template in CLASS.items():
        files[f"examples/{assignment}/{student}/{problem}.py"] = _fill(template, **names)
    for suite in ("public", "hidden"):  # each suite a package: both may hold test_<problem>.py
        if not (root / folders["tests"] / suite / "__init__.py").exists():
            files[f"{folders['tests']}/{suite}/__init__.py"] = ""
    return files


def _entry(problem: str, tests: str) -> dict:
    return {
        "name": problem,
        "module": problem,
        "functions": [problem],
        "points": sum(POINTS.values()),
        "public": f"{tests}/public/test_{problem}.py",
        "hidden": f"{tests}/hidden/test_{problem}.py",
    }


def _write(root: Path, files: dict, course_json: Path, course_text: str) -> None:
    """Write every file, or none: the first that exists stops it, named in one line."""
    for relative in files:
        if (root / relative).exists():
            raise GradeError(
                f"{root / relative}: already exists: grade new writes over nothing "
                "(nothing was written)"
            )
    for relative, text in files.items():
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(text, encoding="utf-8")
    course_json.write_text(course_text, encoding="utf-8")
    for relative in [course_json.name, *files]:
        click.echo(f"wrote {relative}")


def _inserted(text: str, after: dict, item: object) -> str:
    """course.json's text with ``item`` appended to one of its arrays, every other byte as it was.
    The array is found by trying each closing bracket from the end until the text parses to
    ``after`` (json decides what the text means; only where the item goes is looked for), and the
    item is written as the array's last item is (on one line, or one key a line). Where none does,
    the whole document as json writes it."""
    for at in (m.start() for m in reversed(list(re.finditer(r"\]", text)))):
        head = text[:at].rstrip()
        line = head.rsplit("\n", 1)[-1]
        indent = " " * (len(line) - len(line.lstrip()))
        alone = line.lstrip()[:1] in "{[" and line.rstrip()[-1:] in "}]"  # its neighbour: one line
        body = json.dumps(item, ensure_ascii=False) if alone else _pretty(item, len(indent))
        comma = "" if head.endswith("[") else ","
        candidate = head + comma + "\n" + indent + body + text[len(head) :]
        try:
            if json.loads(candidate) == after:
                return candidate
        except ValueError:
            pass
    return _pretty(after) + "\n"


def _pretty(value: object, indent: int = 0) -> str:
    """JSON as course.json is written by hand: an object or array on one line where it fits in 100
    columns, else one item a line."""
    one = json.dumps(value, ensure_ascii=False)
    if not isinstance(value, (dict, list)) or not value or indent + len(one) <= 96:
        return one
    pad = " " * (indent + 2)
    items = (
        [f"{pad}{json.dumps(k)}: {_pretty(v, indent + 2)}" for k, v in value.items()]
        if isinstance(value, dict)
        else [pad + _pretty(v, indent + 2) for v in value]
    )
    ends = "{}" if isinstance(value, dict) else "[]"
    return ends[0] + "\n" + ",\n".join(items) + "\n" + " " * indent + ends[1]


def _python_name(name: str, what: str) -> str:
    """``name``, a problem's and its module's: a Python name hiding no module grading uses."""
    if not name.isidentifier() or keyword.iskeyword(name):
        raise GradeError(
            f"{what} {name!r}: must be a Python name (letters, digits, _): its module's"
        )
    if name in sys.stdlib_module_names or name in ("numpy", "pytest", "grader", "conftest"):
        raise GradeError(
            f"{what} {name!r}: its module would hide Python's or the grader's own "
            f"{name}: choose another name"
        )
    return name


def assignment(
    name: str, course_json: Path, problem: str | None = None, title: str | None = None
) -> ExitStatus:
    """Write assignment ``name`` with one problem (``problem``, default: ``name`` as a Python name)
    into the course at ``course_json`` (made when missing).

    :raises GradeError: a bad name, the assignment already in course.json, or a file already there.
    """
    if not NAME.match(name):
        raise GradeError(
            f"assignment {name!r}: letters, digits, '.', '-' and '_' only (it is a path)"
        )
    problem = _python_name(problem or name.replace("-", "_").replace(".", "_"), "problem")
    title = title or name
    root = course_json.resolve().parent
    folders = {
        "exercises": f"exercises/{name}",
        "solutions": f"solutions/{name}",
        "tests": f"tests/{name}",
        "mistakes": f"solutions/{name}/mistakes.py",
    }
    if course_json.exists():
        text = course_json.read_text(encoding="utf-8")
        before = _read(course_json, text)
        if "assignments" not in before:
            raise GradeError(
                f"{course_json}: holds one assignment's object: make it a course, "
                '{"course": ..., "assignments": [...]}, to add another'
            )
        if any(isinstance(a, dict) and a.get("assignment") == name for a in before["assignments"]):
            raise GradeError(f"{course_json}: assignment {name!r} is already there")
    else:
        text, before = None, {"course": title, "assignments": []}
    entry = {
        "assignment": name,
        "title": title,
        "exercises": folders["exercises"],
        "solutions": folders["solutions"],
        "feedback": {"mistakes": folders["mistakes"]},
        "problems": [_entry(problem, folders["tests"])],
    }
    after = {**before, "assignments": [*before["assignments"], entry]}
    course_text = _inserted(text, after, entry) if text is not None else _pretty(after) + "\n"
    files = _problem_files(root, name, problem, title, folders)
    files[folders["mistakes"]] = _fill("mistakes", assignment=name) + _fill(
        "mistake", problem=problem
    )
    _write(root, files, course_json, course_text)
    _next_steps(course_json, name)
    return ExitStatus.OK


def problem(name: str, course: CourseFile) -> ExitStatus:
    """Add problem ``name`` to the assignment ``course.assignment`` of course.json.

    :raises GradeError: a bad name, no such assignment, the problem or its module already there,
        or a file already there.
    """
    from grader.course.manifest import load

    name = _python_name(name, "problem")
    loaded = load(course)  # checks the file, and picks the assignment
    text = course.path.read_text(encoding="utf-8")
    before = _read(course.path, text)
    if any(p.name == name or p.module == name for p in loaded.problems):
        raise GradeError(
            f"{course.path}: assignment {loaded.assignment!r} already has a problem "
            f"or module {name!r}"
        )
    entries = before["assignments"] if "assignments" in before else [before]
    index = next(i for i, a in enumerate(entries) if a.get("assignment") == loaded.assignment)
    root = course.path.resolve().parent
    public = loaded.problems[0].public.parent  # tests/<assignment>/public, or where it is

    def relative(path: Path | None, default: str) -> str:
        return path.resolve().relative_to(root).as_posix() if path is not None else default

    folders = {
        "exercises": relative(loaded.exercises, f"exercises/{loaded.assignment}"),
        "solutions": relative(loaded.solutions, f"solutions/{loaded.assignment}"),
        "tests": relative(public.parent, f"tests/{loaded.assignment}"),
        "mistakes": relative(loaded.feedback.mistakes, "its catalogue of known mistakes"),
    }
    entry = _entry(name, folders["tests"])
    changed = json.loads(json.dumps(before))
    target = changed["assignments"][index] if "assignments" in changed else changed
    target["problems"] = [*target.get("problems", []), entry]
    course_text = _inserted(text, changed, entry)
    title = loaded.title or loaded.assignment
    files = _problem_files(root, loaded.assignment, name, title, folders)
    _write(root, files, course.path, course_text)
    click.echo(
        f"known mistakes of {name}: add them to {folders['mistakes']}, e.g.\n"
        + _fill("mistake", problem=name).strip()
    )
    _next_steps(course.path, loaded.assignment)
    return ExitStatus.OK


def _read(path: Path, text: str) -> dict:
    try:
        data = json.loads(text)
    except ValueError as err:
        raise GradeError(f"{path}: not valid JSON: {err}") from None
    if not isinstance(data, dict):
        raise GradeError(f"{path}: must hold a JSON object")
    return data


def _next_steps(course_json: Path, name: str) -> None:
    course = (
        ""
        if course_json.name == "course.json" and course_json.parent == Path(".")
        else f" --course {course_json}"
    )
    click.echo(
        f"next: grade validate -a {name}{course}\n"
        f"      grade autograde examples/{name} -a {name}{course} --out scores/{name}\n"
        f"      grade check -a {name}{course} --path examples/{name}/ada_correct"
    )
