"""Find the submissions to grade and turn each into a folder of the course's modules, in the grader.

A submission is a student folder, a zip, a notebook or a single ``.py`` file; or a student's folder
in an nbgrader course (``submitted/<student>/<assignment>/``). From a folder or a zip only what
grading needs is taken, wherever it sits (:mod:`grader.intake.files` chooses it: the course's
modules and the files beside them); notebooks and loose ``.py`` files are converted statically by
:mod:`grader.intake.convert`; zips are unpacked by
:mod:`grader.intake.safezip`. Student code is never run here: the runner grades the resulting folder
as usual.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from grader.course import late
from grader.course.manifest import Course
from grader.errors import GradeError, StudentError
from grader.intake import collected
from grader.intake import files as intake
from grader.intake.convert import convert, from_folder, visible
from grader.intake.safezip import extract as unzip
from grader.intake.stubs import untouched


@dataclass(frozen=True)
class Submission:
    """One student's submission, ready for the runner.

    :param folder: the folder of modules to grade (the student's own, or one the grader wrote).
    :param notes: what the grader did with the files (see the score file's ``submission_notes``).
    :param submitted_at: from ``timestamp.txt``, when there is one.
    :param timestamp: ``missing`` or ``unreadable`` when an nbgrader submission has no usable
        ``timestamp.txt`` (course.json's ``missing_timestamp`` decides what it counts as); empty
        otherwise.
    :param error: set when nothing could be graded (an unreadable zip); the score file's ``error``.
    :param blank: no exercise function is more than the released stub's placeholder (see
        :func:`is_blank`).
    :param handed_in: where it was handed in (absolute), and whether as an nbgrader folder: recorded
        beside the score files, for export to collect it again (:mod:`grader.commands.provenance`).
    """

    student: str
    folder: Path
    notes: tuple[str, ...] = ()
    submitted_at: datetime | None = None
    error: str = ""
    blank: bool = False
    timestamp: str = ""
    handed_in: tuple[str, bool] | None = None

    @property
    def when(self) -> "datetime | str | None":
        """The submission time, the ``timestamp`` flag, or None where no time is read (see
        ``scoring.finish``)."""
        return self.submitted_at or self.timestamp or None


def _take_folder(course: Course, folder: Path, dest: Path, notes: list[str]) -> Path:
    """Copy what grading needs from a student's folder into ``dest``; the copy's folder to grade."""
    choice = intake.in_folder(folder, course.functions)
    notes += choice.notes
    for rel in choice.files:
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        # O_NOFOLLOW: a file the listing saw as regular is never read through a link put there
        # since.
        # O_BINARY: the bytes as written, not Windows' text mode (CR LF as LF, nothing after a
        # Ctrl+Z).
        flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
        with os.fdopen(os.open(folder / rel, flags), "rb") as src, open(dest / rel, "wb") as out:
            shutil.copyfileobj(src, out)
    (dest / choice.root).mkdir(parents=True, exist_ok=True)
    links = [f"{m}.py" for m in course.modules if (folder / choice.root / f"{m}.py").is_symlink()]
    if links:
        notes.append(
            f"left out {', '.join(links)}: a link, never followed (hand in the file itself)"
        )
    return dest / choice.root


def _take_zip(course: Course, archive: Path, dest: Path, notes: list[str]) -> Path:
    """Unpack what grading needs from a student's zip into ``dest``; the folder to grade."""
    choice = intake.in_zip(archive, course.functions)
    unzipped = unzip(archive, dest, only=set(choice.files))
    notes += list(choice.notes) + list(unzipped.notes)
    (dest / choice.root).mkdir(parents=True, exist_ok=True)
    return dest / choice.root


def is_blank(course: Course, folder: Path) -> bool:
    """Whether no exercise function in ``folder`` is more than a placeholder (every module missing,
    empty or still the released stub: see :func:`grader.intake.stubs.untouched`). Read statically:
    nothing is run."""
    for module in course.modules:
        path = folder / f"{module}.py"
        try:
            source = path.read_bytes() if path.is_file() else b""
        except OSError:  # unreadable: graded (and failed) as it is, not blank
            return False
        if not untouched(source, [f for f, m in course.functions.items() if m == module]):
            return False
    return True


def _timestamp(folder: Path, notes: list[str]) -> tuple[datetime | None, str]:
    """The submission time, or None and why not (``missing``, ``unreadable``): never on time by
    default."""
    try:
        when = late.read_timestamp(folder)
    except GradeError as err:  # graded all the same; course.json says what it counts as
        notes.append(f"{err}: lateness as course.json's missing_timestamp says")
        return None, "unreadable"
    if when is None:
        notes.append(f"no {late.TIMESTAMP_FILE}: lateness as course.json's missing_timestamp says")
    return when, "" if when else "missing"


def one(
    course: Course, student: str, path: Path, work: Path, notebook: str | None = None
) -> Submission:
    """Prepare one submission: a folder, ``.zip``, ``.ipynb`` or ``.py`` at ``path``.

    :param work: a private folder for whatever the grader has to write (unzipped and converted
        files).
    :param notebook: the notebook's expected name (nbgrader): it wins over other files in a folder.
    """
    notes: list[str] = []
    unreadable: list[str] = []  # files Python or nbformat cannot read: the student's error
    submitted_at, flag, error = None, "", ""
    try:
        if (
            path.is_dir() and notebook is not None
        ):  # nbgrader wrote it; in a student's own files it is
            if course.due is not None:  # whatever the student wrote, so it is not read there
                submitted_at, flag = _timestamp(path, notes)
            folder = from_folder(course, student, path, work, notes, unreadable, notebook)
        elif path.is_dir():
            folder = from_folder(
                course,
                student,
                _take_folder(course, path, work / "taken" / student, notes),
                work,
                notes,
                unreadable,
            )
        elif path.suffix == ".zip":
            folder = from_folder(
                course,
                student,
                _take_zip(course, path, work / "unzipped" / student, notes),
                work,
                notes,
                unreadable,
                notebook,
            )
        else:
            notes.append(
                f"graded the {'code cells' if path.suffix == '.ipynb' else 'functions'} of "
                f"{path.name}"
            )
            folder = convert(course, [path], work / "converted" / student, notes, unreadable)
        if unreadable:  # what can be read is graded; this is the error (never "blank")
            error, notes = unreadable[0], notes + unreadable[1:]
    except StudentError as err:
        error = err.message
        folder = work / "empty" / student
        folder.mkdir(parents=True, exist_ok=True)
    except (
        Exception,
        RecursionError,
    ) as err:  # a file that breaks the parser costs only its student
        error = f"the submission could not be read: {type(err).__name__}"
        folder = work / "empty" / student
        folder.mkdir(parents=True, exist_ok=True)
    blank = not error and is_blank(course, folder)
    if blank:
        notes.append("blank: every exercise function is missing or still the released stub")
    return Submission(
        student,
        folder,
        tuple(notes),
        submitted_at,
        error,
        blank,
        flag,
        (str(path.resolve()), notebook is not None),
    )


SUFFIXES = (".zip", ".ipynb", ".py")


def from_path(course: Course, submissions: Path, work: Path) -> tuple[list[Submission], list[str]]:
    """Every submission in ``submissions``: a folder of them (one per student, named after the
    student), or one file.

    :returns: the submissions, and one line for each entry that is not a submission (left out).
    :raises GradeError: the folder does not exist, is empty, or two entries are the same student.
    """
    if submissions.is_file():
        if submissions.suffix not in SUFFIXES:
            raise GradeError(f"{submissions}: not a submission (a folder, .zip, .ipynb or .py)")
        return [one(course, submissions.stem, submissions, work)], []
    if not submissions.is_dir():
        raise GradeError(f"{submissions}: submissions folder not found")
    chosen: dict[str, Path] = {}
    skipped = []
    for entry in sorted(submissions.iterdir()):
        if not visible(entry):
            continue
        if entry.is_symlink() or not (entry.is_dir() or entry.suffix in SUFFIXES):
            skipped.append(f"{entry}: left out (not a folder, .zip, .ipynb or .py)")
            continue
        student = entry.name if entry.is_dir() else entry.stem
        if student in chosen:
            raise GradeError(
                f"{entry}: a second submission for {student!r} (the other is "
                f"{chosen[student].name})"
            )
        chosen[student] = entry
    if not chosen:
        raise GradeError(f"{submissions}: no student folders in it")
    times = collected.read(submissions)  # grade collect's record of the LMS's times
    return [
        _with_lms_time(one(course, student, path, work), times.get(student), course)
        for student, path in chosen.items()
    ], skipped


def _with_lms_time(
    submission: Submission, entry: "collected.Entry | None", course: Course
) -> Submission:
    """The submission with the time ``grade collect`` recorded from the LMS's download (its
    notes too): the record sits at the top of SUBMISSIONS, where no student's file lands, so
    the time is the LMS's, not one a student wrote (a ``timestamp.txt`` inside a folder or zip
    is never read)."""
    if entry is None:
        return submission
    from dataclasses import replace

    notes = submission.notes + entry.notes
    if course.due is None:  # no late policy: the time changes nothing
        return replace(submission, notes=notes)
    return replace(
        submission,
        notes=notes,
        submitted_at=entry.submitted_at,
        timestamp="" if entry.submitted_at else entry.timestamp,
    )


def from_nbgrader(
    course: Course, course_dir: Path, assignment: str, work: Path
) -> list[Submission]:
    """Every ``submitted/<student>/<assignment>/`` of an nbgrader course; the notebook wins over .py
    files.

    :raises GradeError: no ``submitted`` folder, or no student submitted ``assignment``.
    """
    submitted = course_dir / "submitted"
    if not submitted.is_dir():
        raise GradeError(f"{course_dir}: not an nbgrader course (no submitted/ folder)")
    folders = sorted(
        p / assignment for p in submitted.iterdir() if visible(p) and (p / assignment).is_dir()
    )
    if not folders:
        raise GradeError(f"{submitted}: no student submitted {assignment!r}")
    return [
        one(course, folder.parent.name, folder, work, notebook=f"{assignment}.ipynb")
        for folder in folders
    ]


def gather(
    course: Course,
    work: Path,
    *,
    submissions: Path | None = None,
    nbgrader: Path | None = None,
    assignment: str | None = None,
) -> tuple[list[Submission], list[str]]:
    """The submissions of ``submissions`` (:func:`from_path`) or of an nbgrader course
    (:func:`from_nbgrader`).

    :param work: a folder to create for unzipped and converted files; the caller deletes it after
        grading.
    :returns: the submissions, and one line per entry left out.
    :raises GradeError: not exactly one source, or as the functions above (``work`` is then
        deleted).
    """
    try:
        if (submissions is None) == (nbgrader is None) or (nbgrader is None) != (
            assignment is None
        ):
            raise GradeError(
                "give SUBMISSIONS, or --nbgrader COURSE_DIR (its submitted/<student>/<assignment>/ "
                "folders)"
            )
        work.mkdir(parents=True, exist_ok=True)
        if nbgrader is not None:
            return from_nbgrader(course, nbgrader, assignment, work), []
        return from_path(course, submissions, work)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise


def annotate(doc: dict, submission: Submission, course: Course) -> dict:
    """The score document with what collecting found: its notes, an error, blankness (lateness and
    the overrides: :func:`grader.scoring.finish`, from ``submission.when``)."""
    doc = dict(doc)
    if submission.error and "error" not in doc:
        doc["error"] = submission.error
    if submission.notes:
        doc["submission_notes"] = list(submission.notes)
    if submission.blank:
        doc["blank"] = True
    return doc
