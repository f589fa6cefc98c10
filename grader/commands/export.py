"""``grade export``: read and validate the score files, match them with the roster, hand a gradebook
(a column of rows per assignment: one score folder each) to an exporter.

Every score file is checked against the schema before anything is written; the exporter then writes
its file atomically, so a bad input costs nothing already written. Then each file must be one to
trust (:func:`refusal`): graded (not a grader error), signed with the course's key, its total the
sum of its problems, not without a submission time that course.json's ``missing_timestamp`` refuses,
with the adjustments and extension the overrides CSV gives now, and graded with this course and
grader; one that is not is refused: left out and listed, never sent as a grade (an LMS would show a
grader's failure as a 0). Students without a score file, score files without a roster row, refused
files and rows the format cannot key (no LMS id) are all reported, never dropped silently. With
several folders each is one column, checked alike with its own assignment's fingerprint, and
reported under the assignment's name; a student refused or missing in one gets an empty cell.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

import click

from grader import __version__
from grader.commands import provenance
from grader.course import overrides as overrides_mod
from grader.course.manifest import Course, CourseFile
from grader.course.manifest import load as load_course
from grader.errors import GradeError
from grader.grading.signature import load_key, verify
from grader.lms.exporters import EXPORTERS
from grader.lms.exporters.common import Assignment, Column, Gradebook, Options, Row, UnsafeKey
from grader.lms.roster import Person
from grader.lms.roster import load as load_roster
from grader.report import validate
from grader.scoring import points


@dataclass(frozen=True)
class Result:
    """What ``grade export`` wrote and what it could not: ``missing`` and ``refused`` make the exit
    status 1."""

    out: Path
    rows: int
    missing: list[str]
    warnings: list[str]
    refused: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Trust:
    """What a score file must match to be exported: the course's key (its signature), and the
    course's ``sha256`` and the grader's version it was graded with, and the overrides CSV as it is
    now (``overrides``, read from ``overrides_file``; None: not checked) (``allow_stale``: not these
    three); and the hash of its submission as collected now (``submissions``: student -> (sha256,
    path); one not in it is not checked)."""

    key: bytes
    course_sha256: str
    grader_version: str
    allow_stale: bool = False
    overrides: Mapping[str, overrides_mod.StudentOverrides] | None = None
    overrides_file: Path | None = None
    submissions: Mapping[str, tuple[str, str]] | None = None


def trust_of(
    course: Course,
    key: bytes,
    allow_stale: bool = False,
    folder: Path | None = None,
    docs: Sequence[dict] = (),
) -> Trust:
    """What ``course``'s score files must match now (its overrides CSV read as it is; the
    submissions of ``docs``, the score files of ``folder``, collected again where autograde
    recorded them, :mod:`grader.commands.provenance`): one way for export, push and report alike.
    A submission no longer there is said on stderr, in one line.

    :raises GradeError: ``folder``'s record of the submissions was edited."""
    table = overrides_mod.load(
        course.overrides, {p.name: p.points for p in course.problems}, course.due
    )
    now = provenance.current(course, key, folder, docs)
    if now.warning():
        click.echo(f"warning: {now.warning()}", err=True)
    return Trust(key, course.sha256, __version__, allow_stale, table, course.overrides, now.found)


def refusal(doc: dict, trust: Trust) -> str | None:
    """Why the (schema-valid) score file ``doc`` must not be exported, in one line; None when it may
    be."""
    if doc["status"] == "grader_error":
        return (
            f"the grader failed on it, not the student ({doc.get('error') or 'no message'}): "
            "rerun grade autograde to regrade it"
        )
    if "signature" not in doc:
        return (
            "not signed (only grade autograde's score files are exported; grade check --json "
            "writes none)"
        )
    if not verify(doc, trust.key):
        return "its signature does not match its content (edited after grading?)"
    total = points(sum(p["score"] for p in doc["problems"]))
    late = doc.get("late")
    if late is None and doc["score"] != total:
        return f"score {doc['score']:g} is not the sum of its problems' scores ({total:g})"
    if late is not None and late["raw_score"] != total:
        return (
            f"late.raw_score {late['raw_score']:g} is not the sum of its problems' scores "
            f"({total:g})"
        )
    if late is not None and doc["score"] != points(late["raw_score"] - late["penalty"]):
        return (
            f"score {doc['score']:g} is not late.raw_score - late.penalty "
            f"({points(late['raw_score'] - late['penalty']):g})"
        )
    if late is not None and late.get("counted_as") == "refuse":
        return (
            f"no submission time (timestamp.txt {late['timestamp']}) and course.json's "
            "missing_timestamp is "
            "'refuse': restore timestamp.txt (or set missing_timestamp to on_time or late) and "
            "rerun grade "
            "autograde (it re-scores without regrading)"
        )
    sha256, where = (trust.submissions or {}).get(doc["student"], (None, ""))
    if sha256 is not None and sha256 != doc["submission_sha256"]:  # signed: put back, not edited
        return (
            f"it graded another submission than {where} holds now (an earlier attempt's score "
            "file put back?): rerun grade autograde, which regrades it"
        )
    if trust.allow_stale:
        return None
    if trust.overrides is not None and (
        overrides_mod.recorded(doc)
        != overrides_mod.expected(doc, trust.overrides.get(doc["student"]))
    ):
        where = trust.overrides_file or "course.json's overrides (it names no file)"
        return (
            f"its adjustments or extension are not those of {where} now (changed since grading): "
            "rerun "
            "grade autograde, which re-applies them without regrading (or pass --allow-stale)"
        )
    if doc["grader_version"] != trust.grader_version:
        return (
            f"graded by grader {doc['grader_version']}, this is {trust.grader_version}: rerun "
            "grade autograde "
            "(or pass --allow-stale)"
        )
    if doc["course_sha256"] != trust.course_sha256:
        return (
            "graded with another version of the course (course_sha256 differs: course.json, a "
            "suite or a "
            "solution changed): rerun grade autograde (or pass --allow-stale)"
        )
    return None


def load_scores(folder: Path) -> list[tuple[Path, dict]]:
    """Every ``*.json`` score file in ``folder`` (its path and content), each checked against the
    schema.

    :raises GradeError: one line naming the file and the field; or two files for one student.
    """
    import json

    folder = Path(folder)
    if not folder.is_dir():
        raise GradeError(f"{folder}: scores folder not found")
    docs, where = [], {}
    for path in sorted(folder.glob("*.json")):
        if path.name.startswith("."):
            continue
        try:
            doc = json.loads(path.read_text(encoding="utf-8-sig"))
        except (OSError, ValueError) as err:
            raise GradeError(f"{path}: not valid JSON: {err}") from None
        validate(doc, str(path))
        if doc["student"] in where:
            raise GradeError(
                f"{path}: field 'student': {doc['student']!r} also has {where[doc['student']].name}"
            )
        where[doc["student"]] = path
        docs.append((path, doc))
    if not docs:
        raise GradeError(f"{folder}: no score files (*.json) in it")
    names = {d["assignment"] for _, d in docs}
    if len(names) > 1:
        raise GradeError(
            f"{folder}: field 'assignment': the score files mix {', '.join(sorted(names))}"
        )
    return docs


def exported_score(doc: dict, late_by_lms: bool) -> float:
    """The points to send: the score, or with ``late_by_lms`` the score before the grader's late
    penalty."""
    return doc["late"]["raw_score"] if late_by_lms and "late" in doc else doc["score"]


def match(
    docs: list[dict],
    roster: dict[str, Person] | None,
    late_by_lms: bool,
    refused: frozenset[str] = frozenset(),
) -> tuple[list[Row], list[str]]:
    """Rows in roster order (or by student id without a roster), and one line per student left out
    (the ``refused`` students are listed apart: not again as having no score file)."""
    by_student = {d["student"]: d for d in docs}
    if roster is None:
        return [
            Row(s, None, d, exported_score(d, late_by_lms)) for s, d in sorted(by_student.items())
        ], []
    rows = [
        Row(s, p, by_student[s], exported_score(by_student[s], late_by_lms))
        for s, p in roster.items()
        if s in by_student
    ]
    missing = [
        f"{s}: in the roster, no score file"
        for s in roster
        if s not in by_student and s not in refused
    ]
    missing += [
        f"{s}: has a score file, not in the roster" for s in sorted(by_student) if s not in roster
    ]
    return rows, missing


def checked(
    loaded: list[tuple[Path, dict]],
    trust: Trust,
    roster: dict[str, Person] | None,
    late_by_lms: bool,
) -> tuple[list[Row], list[str], list[str]]:
    """One folder's rows to export, the lines of its refused files, and those of its missing
    students."""
    docs, refused = [], []
    for path, doc in loaded:
        why = refusal(doc, trust)
        if why is None:
            docs.append(doc)
        else:
            refused.append(f"{doc['student']} ({path.name}): {why}")
    rows, missing = match(
        docs,
        roster,
        late_by_lms,
        frozenset(d["student"] for _, d in loaded) - {d["student"] for d in docs},
    )
    return rows, refused, missing


def export(
    folders: Sequence[Path],
    fmt: str,
    out: Path | None,
    roster_path: Path | None,
    options: Options,
    course: CourseFile,
    allow_stale: bool = False,
) -> Result:
    """Write the trusted files of ``folders`` in format ``fmt`` to ``out``, a column per folder; the
    others are left out and listed in ``Result.refused``.

    Each folder's assignment is the one its score files name (``course``'s ``--assignment``, if
    given, must be that one); with several, ``out`` defaults to ``gradebook-<fmt><suffix>`` (else
    ``<assignment>-<fmt><suffix>``). ``allow_stale``: see :class:`Trust`.

    :raises GradeError: unknown format, a bad score file, roster or course, a field the format needs
        is missing, or several folders for a format of one assignment (or with a flag that names
        one).
    """
    exporter = EXPORTERS.get(fmt)
    if exporter is None:
        raise GradeError(f"unknown format {fmt!r} (known: {', '.join(sorted(EXPORTERS))})")
    several = len(folders) > 1
    if several:
        _refuse_one_assignment_flags(fmt, exporter.MANY_COLUMNS, course, options)
    key = load_key(course.path)
    if roster_path is None and exporter.NEEDS_ROSTER:
        raise GradeError(f"--roster is needed for {fmt}: it maps student ids to the LMS's user ids")
    loaded = [load_scores(folder) for folder in folders]
    courses = _courses(folders, loaded, course.path)
    if course.assignment is not None and courses[0].assignment != course.assignment:
        # never another assignment's scores under this one's LMS column, --allow-stale or not
        raise GradeError(
            f"{folders[0]}: field 'assignment': its score files are {courses[0].assignment!r}'s, "
            f"not {course.assignment!r}'s"
        )
    roster = (
        load_roster(roster_path, exporter.roster_columns(options), fmt) if roster_path else None
    )
    everyone = {d["student"] for docs in loaded for _, d in docs}
    columns, refused, missing = [], [], []
    for folder, docs, graded_with in zip(folders, loaded, courses):
        trust = trust_of(graded_with, key, allow_stale, folder, [d for _, d in docs])
        rows, refused_here, missing_here = checked(docs, trust, roster, options.late_by_lms)
        if roster is None:  # without a roster, whoever another folder has is expected here
            missing_here += [
                f"{s}: no score file (another assignment has one)"
                for s in sorted(everyone - {d["student"] for _, d in docs})
            ]
        prefix = f"{graded_with.assignment}: " if several else ""
        refused += [prefix + line for line in refused_here]
        missing += [prefix + line for line in missing_here]
        columns.append(
            Column(
                Assignment(
                    docs[0][1]["assignment"],
                    max(d["max_score"] for _, d in docs),
                    options.canvas_assignment_id or graded_with.lms.canvas_assignment_id,
                    options.blackboard_column_id or graded_with.lms.blackboard_column_id,
                    graded_with.release_hidden_details,
                ),
                {r.student: r for r in rows},
            )
        )
    graded = {s for column in columns for s in column.rows}
    book = Gradebook(
        tuple(columns), tuple(s for s in roster if s in graded) if roster else tuple(sorted(graded))
    )
    name = "gradebook" if several else columns[0].assignment.name
    out = Path(out) if out else Path(f"{name}-{fmt}{exporter.SUFFIX}")
    _check_out(out, fmt, exporter.SUFFIX, name)
    (out if not exporter.SUFFIX else out.parent).mkdir(
        parents=True, exist_ok=True
    )  # no suffix: a folder
    try:
        written = exporter.export(book, options, out)
    except UnsafeKey as err:
        raise GradeError(f"{roster_path}: {err}") from None
    return Result(
        out,
        len(book.students) - len(written.unkeyed),
        missing + written.unkeyed,
        written.warnings,
        refused,
    )


def _check_out(out: Path, fmt: str, suffix: str, name: str) -> None:
    """--out must be what the format writes: a file (not a folder), or for a format of folders
    (gradescope) a folder (not a file); and a file's folder must not be a file. One line, before
    anything is written."""
    if suffix and out.is_dir():
        raise GradeError(
            f"--out {out}: is a folder, and --format {fmt} writes one file (e.g. --out "
            f"{out / f'{name}-{fmt}{suffix}'})"
        )
    if not suffix and out.exists() and not out.is_dir():
        raise GradeError(
            f"--out {out}: is a file, and --format {fmt} writes a folder (a file per student)"
        )
    for parent in (out if not suffix else out.parent, *out.parent.parents):
        if parent.exists() and not parent.is_dir():
            raise GradeError(f"--out {out}: {parent} is a file, not a folder")


def _refuse_one_assignment_flags(
    fmt: str, many_columns: bool, course: CourseFile, options: Options
) -> None:
    """Several folders: refuse a format of one assignment, and the flags that name one
    assignment."""
    if not many_columns:
        raise GradeError(
            f"--format {fmt}: one assignment per file: export each score folder on its own "
            "(canvas, moodle, blackboard and csv take several, a column each)"
        )
    if course.assignment is not None:
        raise GradeError(
            "--assignment: not with several score folders (each one's assignment is the one its "
            "score files name)"
        )
    for flag, value in (
        ("canvas-assignment-id", options.canvas_assignment_id),
        ("blackboard-column-id", options.blackboard_column_id),
    ):
        if value:
            raise GradeError(
                f"--{flag}: not with several score folders (it is one assignment's): give each "
                f"assignment's lms.{flag.replace('-', '_')} in course.json"
            )


def _courses(
    folders: Sequence[Path], loaded: list[list[tuple[Path, dict]]], path: Path
) -> list[Course]:
    """Each folder's assignment, loaded from course.json by the name its score files carry.

    :raises GradeError: two folders of one assignment, or a name course.json does not hold.
    """
    seen: dict[str, Path] = {}
    for folder, docs in zip(folders, loaded):
        name = docs[0][1]["assignment"]
        if name in seen:
            raise GradeError(
                f"{folder}: field 'assignment': {name!r} is also the assignment of {seen[name]}"
            )
        seen[name] = folder
    return [load_course(CourseFile(path, name)) for name in seen]


@dataclass(frozen=True)
class Folder:
    """One score folder read and checked as ``grade export`` checks it (for ``grade push``): its
    assignment, the rows to send, the refused lines (``grader_errors``: the students whose file is a
    grader error) and the missing lines."""

    assignment: Course
    rows: list[Row]
    refused: list[str]
    missing: list[str]
    grader_errors: frozenset[str]


def read_folder(
    folder: Path,
    roster_path: Path,
    course: CourseFile,
    late_by_lms: bool,
    allow_stale: bool = False,
) -> Folder:
    """Read, validate and check one score folder against the roster, with the course's key and
    fingerprint.

    :raises GradeError: a bad score file, roster or course, or score files of another assignment
        than ``course``'s ``--assignment``.
    """
    key = load_key(course.path)
    loaded = load_scores(folder)
    graded_with = _courses([folder], [loaded], course.path)[0]
    if course.assignment is not None and graded_with.assignment != course.assignment:
        raise GradeError(
            f"{folder}: field 'assignment': its score files are {graded_with.assignment!r}'s, "
            f"not {course.assignment!r}'s"
        )
    trust = trust_of(graded_with, key, allow_stale, folder, [d for _, d in loaded])
    rows, refused, missing = checked(loaded, trust, load_roster(roster_path), late_by_lms)
    errors = frozenset(d["student"] for _, d in loaded if d["status"] == "grader_error")
    return Folder(graded_with, rows, refused, missing, errors)
