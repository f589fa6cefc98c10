"""The only reader of course.json: returns a frozen :class:`Course` or raises a one-line error.

course.json lists a course's assignments (docs/reference/course-json.md has a full one); a
course.json of one assignment may be just that assignment's object, as a student's release holds it
(no ``solutions``, no ``hidden`` suites)::

    {"course": "GPT-2 from scratch", "limits": {"call_timeout": 5, "memory_mb": 1024},
     "assignments": [{"assignment": "the-block", "exercises": "exercises/the-block", "solutions":
     "solutions/the-block",
                      "problems": [{"name": "gelu", "module": "gelu", "functions": ["gelu"],
                      "points": 15,
                                    "public": "tests/the-block/public/test_gelu.py",
                                    "hidden": "tests/the-block/hidden/test_gelu.py"}]}]}

``imports`` (optional, default ``["numpy"]``) lists the packages the student's code may import
besides the Python standard library; any other import raises ModuleNotFoundError in the worker, on
every install alike. Paths are relative to the folder holding course.json. ``points`` are the
problem's maximum: the denominator of every score, whatever the tests report. ``feedback``
(optional, every field optional) names the course's files behind the teaching feedback: see
:class:`Feedback`. ``due`` (ISO 8601 with a time zone) and ``late_policy``
(:class:`~grader.course.late.LatePolicy`) are optional, and ``missing_timestamp`` (what a submission
without a time counts as); so are the LMS ids used by ``grade export`` and ``overrides``, the
instructor's CSV of extensions and adjustments (:mod:`grader.course.overrides`).
"""

from __future__ import annotations

import difflib
import hashlib
import json
from dataclasses import dataclass, field, fields
from datetime import datetime
from pathlib import Path

from grader.course.fields import _fail, _get, _identifier, _name, _only_known
from grader.course.late import LatePolicy, from_settings
from grader.course.limits import Limits
from grader.course.limits import checked as _limits
from grader.errors import GradeError

MAX_POINTS = 1e6


@dataclass(frozen=True)
class Problem:
    """One graded problem: a student module, the functions in it, its points and suites."""

    name: str
    module: str
    functions: tuple[str, ...]
    points: float
    public: Path
    hidden: Path | None


@dataclass(frozen=True)
class Feedback:
    """The course's files behind the teaching feedback (course.json ``feedback``); a file may be
    absent.

    :param mistakes: the catalogue of known mistakes, a module next to the solutions (instructors
        only).
    :param mistakes_data: a release's only: the mistakes' outputs on the public suites' inputs.
    :param trace: the module that runs the worked example step by step (``grade trace``).
    :param trace_data: a release's only: the reference's value at every step of the worked example.

    The two data files are computed by ``grade release`` into the release, never kept beside the
    solutions: there the catalogue and the worked example run live.
    """

    mistakes: Path | None = None
    mistakes_data: Path | None = None
    trace: Path | None = None
    trace_data: Path | None = None


@dataclass(frozen=True)
class LmsIds:
    """Where the assignment lives in each LMS (course.json ``lms``): used by ``grade export``."""

    canvas_assignment_id: str | None = None  # digits: the number in the Canvas assignment's URL
    blackboard_column_id: str | None = (
        None  # the Grade Center column id after "|" in a downloaded file
    )


@dataclass(frozen=True)
class Course:
    """A loaded course.json. ``sha256`` fingerprints course.json, the suites and the solutions."""

    path: Path
    assignment: str
    title: str
    problems: tuple[Problem, ...]
    limits: Limits
    exercises: Path
    solutions: Path | None
    release_hidden_details: bool
    sha256: str
    feedback: Feedback = Feedback()
    due: datetime | None = None
    late_policy: LatePolicy | None = None
    missing_timestamp: str = "refuse"
    overrides: Path | None = None  # instructors only: never released, never in the fingerprint
    lms: LmsIds = field(default_factory=LmsIds)

    @property
    def root(self) -> Path:
        return self.path.parent

    @property
    def max_score(self) -> float:
        return sum(p.points for p in self.problems)

    @property
    def modules(self) -> list[str]:
        """The student modules, in the order of the problems."""
        return list(dict.fromkeys(p.module for p in self.problems))

    @property
    def functions(self) -> dict[str, str]:
        """Every student function name -> its module name."""
        return {f: p.module for p in self.problems for f in p.functions}

    def problem(self, name: str) -> Problem:
        for p in self.problems:
            if p.name == name:
                return p
        raise GradeError(
            f"{self.path}: no problem named {name!r} (known: {', '.join(self.problem_names)})"
        )

    @property
    def problem_names(self) -> list[str]:
        return [p.name for p in self.problems]


TOP_LEVEL = (
    "assignment",
    "title",
    "exercises",
    "solutions",
    "limits",
    "imports",
    "release_hidden_details",
    "feedback",
    "problems",
    "due",
    "late_policy",
    "missing_timestamp",
    "overrides",
    "lms",
)
PROBLEM = ("name", "module", "functions", "points", "public", "hidden")


def _suite(root: Path, value: str | None, path: Path, field: str) -> Path | None:
    if value is None:
        return None
    suite = (root / value).resolve()
    if not suite.is_file():
        raise _fail(path, field, f"suite file {value} does not exist")
    return suite


@dataclass(frozen=True)
class CourseFile:
    """course.json and the assignment asked for (``--course`` and ``--assignment``): what
    :func:`load` reads."""

    path: Path
    assignment: str | None = None


def load(path: "str | Path | CourseFile" = "course.json", assignment: str | None = None) -> Course:
    """Load and check one assignment of course.json.

    course.json is one assignment (the fields below), or a course: ``{"course": title,
    "assignments": [...]}`` with course-wide ``limits``, ``imports`` and ``lms`` that each
    assignment's own settings override key by key.

    :param assignment: the assignment's name; optional when course.json holds one.
    :raises GradeError: a one-line message naming the file and the field, e.g.
        ``course.json: field 'problems[2].points': must be a number >= 0, got "ten"``.
    """
    if isinstance(path, CourseFile):
        path, assignment = path.path, path.assignment
    path = Path(path)
    data, at = settings(path, assignment)
    # this assignment's settings (another's edits leave it be), but for where its overrides live:
    # they are
    # applied to the grading, never part of it (and the Gradescope autograder ships without them)
    raw = json.dumps({k: v for k, v in data.items() if k != "overrides"}, sort_keys=True).encode()
    return _assignment(data, raw, path, at)


def settings(path: Path, assignment: str | None = None) -> tuple[dict, str]:
    """One assignment's settings as course.json gives them, with the course-wide ones merged in, and
    their field prefix in the file (``assignments[1].``). Written alone as a course.json, they load
    as the same assignment, with the same fingerprint (the Gradescope autograder ships them so)."""
    try:
        data = json.loads(Path(path).read_bytes())
    except FileNotFoundError:
        raise GradeError(
            f"{path}: not found (run in the assignment folder, or pass --course)"
        ) from None
    except (OSError, ValueError) as err:
        raise GradeError(f"{path}: not valid JSON: {err}") from None
    if not isinstance(data, dict):
        raise GradeError(f"{path}: must hold a JSON object")
    if "assignments" in data:
        return _one_of(data, path, assignment)
    if assignment is not None and assignment != data.get("assignment"):
        raise GradeError(
            f"{path}: no assignment named {assignment!r} (it holds one: {data.get('assignment')!r})"
        )
    return data, ""


COURSE = ("course", "limits", "imports", "lms", "assignments")


def _one_of(data: dict, path: Path, name: str | None) -> tuple[dict, str]:
    """The assignment ``name`` of a course, with the course-wide settings under its own, and its
    field prefix."""
    _only_known(data, COURSE, path)
    entries = _get(data, "assignments", list, path, "")
    _get(data, "course", str, path, "", "")
    names = []
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise _fail(path, f"assignments[{i}]", "must be an object")
        names.append(_name(entry, path, f"assignments[{i}]."))
    if not names:
        raise _fail(path, "assignments", "must list at least one assignment")
    if len(set(names)) != len(names):
        raise _fail(path, "assignments", "assignment names must be unique")
    if name is None and len(names) > 1:
        raise GradeError(
            f"{path}: holds {len(names)} assignments: pass --assignment with one of "
            f"{', '.join(names)}"
        )
    if name is not None and name not in names:
        close = difflib.get_close_matches(name, names, n=1)
        raise GradeError(
            f"{path}: no assignment named {name!r}"
            + (f" (did you mean {close[0]!r}?)" if close else "")
            + f"; its assignments: {', '.join(names)}"
        )
    i = names.index(name) if name is not None else 0
    entry = dict(entries[i])
    _limits(_get(data, "limits", dict, path, "", {}), path, "")  # named where written, not merged
    for key in ("limits", "lms"):
        shared = _get(data, key, dict, path, "", {})
        entry[key] = {**shared, **_get(entry, key, dict, path, f"assignments[{i}].", {})}
        if not entry[key]:
            del entry[key]
    if "imports" in data and "imports" not in entry:
        entry["imports"] = data["imports"]
    return entry, f"assignments[{i}]."


def _assignment(data: dict, raw: bytes, path: Path, at: str) -> Course:
    """The Course of one assignment's settings ``data`` (``at``: their field prefix in
    course.json)."""
    root = path.resolve().parent
    _only_known(data, TOP_LEVEL, path, at)
    limits_data = _limits(_get(data, "limits", dict, path, at, {}), path, at)
    imports = _get(data, "imports", list, path, at, list(Limits.imports))
    for i, name in enumerate(imports):
        if not _identifier(name):
            raise _fail(
                path, f"{at}imports[{i}]", f"{name!r} is not the name of a top-level package"
            )
    limits = Limits(**limits_data, imports=tuple(imports))
    problems = []
    for i, entry in enumerate(_get(data, "problems", list, path, at)):
        where = f"{at}problems[{i}]."
        if not isinstance(entry, dict):
            raise _fail(path, f"{at}problems[{i}]", "must be an object")
        _only_known(entry, PROBLEM, path, where)
        name = _get(entry, "name", str, path, where)
        module = _get(entry, "module", str, path, where)
        functions = _get(entry, "functions", list, path, where)
        for key, value in [("name", name), ("module", module)] + [
            ("functions", f) for f in functions
        ]:
            if not _identifier(value):
                raise _fail(path, where + key, f"{value!r} is not a Python identifier")
        if not functions:
            raise _fail(path, where + "functions", "must list at least one function")
        points = _get(entry, "points", float, path, where)
        if not 0 < points <= MAX_POINTS:  # 0: a problem nobody can score
            raise _fail(
                path,
                where + "points",
                f"must be a number above 0 and at most {MAX_POINTS:g}, got {points:g}",
            )
        problems.append(
            Problem(
                name=name,
                module=module,
                functions=tuple(functions),
                points=points,
                public=_suite(
                    root, _get(entry, "public", str, path, where), path, where + "public"
                ),
                hidden=_suite(
                    root, _get(entry, "hidden", str, path, where, None), path, where + "hidden"
                ),
            )
        )
    if not problems:
        raise _fail(path, at + "problems", "must list at least one problem")
    names = [p.name for p in problems]
    if len(set(names)) != len(names):
        raise _fail(path, at + "problems", "problem names must be unique")
    all_functions = [f for p in problems for f in p.functions]
    if len(set(all_functions)) != len(all_functions):
        raise _fail(path, at + "problems", "a function name appears in two problems")
    solutions = _get(data, "solutions", str, path, at, None)
    if solutions and not (root / solutions).is_dir():  # else every submission a grader error
        raise _fail(path, at + "solutions", f"folder {solutions} does not exist")
    feedback_data = _get(data, "feedback", dict, path, at, {})
    _only_known(feedback_data, {f.name for f in fields(Feedback)}, path, at + "feedback.")
    feedback = Feedback(
        **{
            key: root / _get(feedback_data, key, str, path, at + "feedback.")
            for key in feedback_data
        }
    )
    for key in ("mistakes_data", "trace_data"):  # beside the solutions: stale unseen
        if solutions and key in feedback_data:
            raise _fail(
                path,
                f"{at}feedback.{key}",
                "computed data belongs in a student's release "
                "(grade release writes it there); with the solutions it is computed live: "
                "remove the field",
            )
    for key in feedback_data:  # by hand, or by grade release (the data)
        if not getattr(feedback, key).is_file():
            raise _fail(path, f"{at}feedback.{key}", f"file {feedback_data[key]} does not exist")
    due, late_policy, missing_timestamp = from_settings(data, path, at)
    overrides = _get(data, "overrides", str, path, at, None)
    if overrides and not (root / overrides).is_file():  # a typo would silently drop every override
        raise _fail(
            path, at + "overrides", f"file {overrides} does not exist (a header line is enough)"
        )
    course = Course(
        path=path.resolve(),
        assignment=_name(data, path, at),
        title=_get(data, "title", str, path, at, ""),
        problems=tuple(problems),
        limits=limits,
        exercises=root / _get(data, "exercises", str, path, at, "exercises"),
        solutions=(root / solutions) if solutions else None,
        release_hidden_details=_get(data, "release_hidden_details", bool, path, at, False),
        sha256="",
        feedback=feedback,
        due=due,
        late_policy=late_policy,
        missing_timestamp=missing_timestamp,
        overrides=root / overrides if overrides else None,
        lms=_lms(data, path, at),
    )
    return Course(**{**course.__dict__, "sha256": _fingerprint(raw, course)})


def _lms(data: dict, path: Path, at: str = "") -> LmsIds:
    entries = _get(data, "lms", dict, path, at, {})
    _only_known(entries, {f.name for f in fields(LmsIds)}, path, at + "lms.")
    for key, value in entries.items():
        if type(value) is int and value >= 0:
            entries = {**entries, key: str(value)}
        elif (
            not isinstance(value, str)
            or not value.strip()
            or any(c.isspace() or c == "|" for c in value)
        ):
            raise _fail(
                path,
                f"{at}lms.{key}",
                f"must be an id without spaces or '|', got {json.dumps(value)[:60]}",
            )
    canvas = entries.get("canvas_assignment_id")
    if canvas is not None and not canvas.isdigit():
        raise _fail(
            path,
            at + "lms.canvas_assignment_id",
            f"must be digits (the number in the assignment's URL), got {canvas!r}",
        )
    return LmsIds(**entries)


def _fingerprint(raw: bytes, course: Course) -> str:
    """sha256 over course.json, every suite and every solution file: changes when grading would."""
    digest = hashlib.sha256(raw)
    suites = [p.public for p in course.problems] + [p.hidden for p in course.problems if p.hidden]
    folders = {s.parent for s in suites} | ({course.solutions} if course.solutions else set())
    files = sorted({f for folder in folders if folder.is_dir() for f in folder.glob("*.py")})
    for file in files:
        digest.update(str(file.relative_to(course.root)).encode() + b"\0" + file.read_bytes())
    return digest.hexdigest()
