"""Find the submissions to grade and turn each into a folder of the course's modules, in the grader.

A submission is a student folder, a zip, a notebook or a single ``.py`` file; or a student's folder in an
nbgrader course (``submitted/<student>/<assignment>/``). From a folder or a zip only what grading needs is
taken, wherever it sits (:mod:`grader.intake.files` chooses it: the course's modules and the files beside them);
notebooks and loose ``.py`` files are converted statically by :mod:`grader.intake.extract`; zips are unpacked by
:mod:`grader.intake.safezip`. Student code is never run here: the runner grades the resulting folder as usual.
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
from grader.intake import pysource
from grader.intake.extract import modules_from_cells
from grader.intake.safezip import extract as unzip
from grader.intake.stubs import untouched

MAX_NOTEBOOK_BYTES = 20 << 20
IGNORED = {".ipynb_checkpoints", "__pycache__", "__MACOSX", "feedback"}


@dataclass(frozen=True)
class Submission:
    """One student's submission, ready for the runner.

    :param folder: the folder of modules to grade (the student's own, or one the grader wrote).
    :param notes: what the grader did with the files (see the score file's ``submission_notes``).
    :param submitted_at: from ``timestamp.txt``, when there is one.
    :param timestamp: ``missing`` or ``unreadable`` when an nbgrader submission has no usable ``timestamp.txt``
        (course.json's ``missing_timestamp`` decides what it counts as); empty otherwise.
    :param error: set when nothing could be graded (an unreadable zip); the score file's ``error``.
    :param blank: no exercise function is more than the released stub's placeholder (see :func:`is_blank`).
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
        """The submission time, the ``timestamp`` flag, or None where no time is read (see ``scoring.finish``)."""
        return self.submitted_at or self.timestamp or None


def _visible(path: Path) -> bool:
    return not path.name.startswith((".", "_")) and path.name not in IGNORED


def _notebook_cells(path: Path) -> list[tuple[str, str]]:
    """``("<file> cell <n>", source)`` for each code cell; raises ValueError when it is not a notebook."""
    import nbformat                                      # imported here: slow, and only notebooks need it

    if path.stat().st_size > MAX_NOTEBOOK_BYTES:
        raise ValueError(f"larger than {MAX_NOTEBOOK_BYTES >> 20} MiB")
    try:
        notebook = nbformat.read(path, as_version=4)
        cells = [(i, c) for i, c in enumerate(notebook.cells, 1) if c.get("cell_type") == "code"]
        return [(f"{path.name} cell {i}", c["source"]) for i, c in cells if isinstance(c.get("source"), str)]
    except Exception as err:                             # nbformat raises many kinds on a broken file
        said = " ".join(f"{type(err).__name__}: {err}".split())[:200]      # one line
        raise StudentError("unreadable", f"{path.name}: not a notebook nbformat reads ({said})" + (
            "; save it as UTF-8" if isinstance(err, UnicodeDecodeError) else "")) from None


def _convert(course: Course, sources: list[Path], target: Path, notes: list[str],
             unreadable: list[str]) -> Path:
    """Write the course's modules, built from ``sources`` (notebooks and .py files), into
    ``target``; a line in ``unreadable`` for each source Python or nbformat cannot read."""
    cells: list[tuple[str, str]] = []
    if sum(path.stat().st_size for path in sources) > MAX_SOURCE_BYTES:
        raise StudentError("too_large", f"more than {MAX_SOURCE_BYTES >> 20} MiB of notebooks and .py files")
    for path in sources:
        try:
            if path.suffix == ".ipynb":
                cells += _notebook_cells(path)
            else:
                cells.append((path.name, pysource.read(path)))        # its coding line honoured
        except StudentError as err:
            unreadable.append(err.message)
        except (OSError, ValueError) as err:
            unreadable.append(f"{path.name} could not be read: {err}")
    extracted = modules_from_cells(cells, course.functions)
    notes += extracted.notes
    target.mkdir(parents=True)
    for module, source in extracted.modules.items():
        # UTF-8, what the import reads: the header is line 1, so no student's coding line counts
        (target / f"{module}.py").write_text(source, encoding="utf-8")
    return target


def _descend(folder: Path) -> Path:
    """Go down through folders that hold nothing but one folder (a zip of a folder)."""
    while True:
        entries = [p for p in folder.iterdir() if _visible(p)]
        if len(entries) != 1 or not entries[0].is_dir() or entries[0].is_symlink():
            return folder
        folder = entries[0]


def _from_folder(course: Course, student: str, folder: Path, work: Path, notes: list[str],
                 unreadable: list[str], notebook: str | None = None) -> Path:
    """The folder of modules for a student folder: itself when it holds a module, else a converted copy.

    :param unreadable: gets a line per file converted that could not be read (see :func:`_convert`).
    :param notebook: the notebook's expected file name (nbgrader), which then wins over any .py file.
    """
    folder = _descend(folder)
    modules = {f"{p.module}.py" for p in course.problems}
    files = sorted(p for p in folder.iterdir() if p.is_file() and not p.is_symlink() and _visible(p))
    notebooks = [p for p in files if p.suffix == ".ipynb"]
    if notebook is None and any(p.name in modules for p in files):
        missing = sorted(modules - {p.name for p in files})
        if missing:
            notes.append(f"no {', '.join(missing)} in the submission")
        return folder
    if notebooks:
        if notebook is not None and any(p.name == notebook for p in notebooks):
            used = [p for p in notebooks if p.name == notebook]
            notes += [f"{p.name} left out: the notebook graded is {notebook}" for p in notebooks if p not in used]
        else:
            used = notebooks
            if notebook is not None:
                notes.append(f"no {notebook} (renamed?): graded {', '.join(p.name for p in used)} instead")
        notes.append(f"graded the code cells of {', '.join(p.name for p in used)}")
        return _convert(course, used, work / "converted" / student, notes, unreadable)
    scripts = [p for p in files if p.suffix == ".py"]
    if not scripts:
        notes.append("nothing to grade: no course module, notebook or .py file")
    else:
        notes.append(f"graded the functions in {', '.join(p.name for p in scripts)}")
    return _convert(course, scripts, work / "converted" / student, notes, unreadable)


def _take_folder(course: Course, folder: Path, dest: Path, notes: list[str]) -> Path:
    """Copy what grading needs from a student's folder into ``dest``; the copy's folder to grade."""
    choice = intake.in_folder(folder, course.functions)
    notes += choice.notes
    for rel in choice.files:
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        # O_NOFOLLOW: a file the listing saw as regular is never read through a link put there since.
        with os.fdopen(os.open(folder / rel, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)), "rb") as src, \
                open(dest / rel, "wb") as out:
            shutil.copyfileobj(src, out)
    (dest / choice.root).mkdir(parents=True, exist_ok=True)
    links = [f"{m}.py" for m in course.modules if (folder / choice.root / f"{m}.py").is_symlink()]
    if links:
        notes.append(f"left out {', '.join(links)}: a link, never followed (hand in the file itself)")
    return dest / choice.root


def _take_zip(course: Course, archive: Path, dest: Path, notes: list[str]) -> Path:
    """Unpack what grading needs from a student's zip into ``dest``; the folder to grade."""
    choice = intake.in_zip(archive, course.functions)
    unzipped = unzip(archive, dest, only=set(choice.files))
    notes += list(choice.notes) + list(unzipped.notes)
    (dest / choice.root).mkdir(parents=True, exist_ok=True)
    return dest / choice.root


def is_blank(course: Course, folder: Path) -> bool:
    """Whether no exercise function in ``folder`` is more than a placeholder (every module missing, empty or still
    the released stub: see :func:`grader.intake.stubs.untouched`). Read statically: nothing is run."""
    for module in course.modules:
        path = folder / f"{module}.py"
        try:
            source = path.read_bytes() if path.is_file() else b""
        except OSError:                                  # unreadable: graded (and failed) as it is, not blank
            return False
        if not untouched(source, [f for f, m in course.functions.items() if m == module]):
            return False
    return True


def _timestamp(folder: Path, notes: list[str]) -> tuple[datetime | None, str]:
    """The submission time, or None and why not (``missing``, ``unreadable``): never on time by default."""
    try:
        when = late.read_timestamp(folder)
    except GradeError as err:                            # graded all the same; course.json says what it counts as
        notes.append(f"{err}: lateness as course.json's missing_timestamp says")
        return None, "unreadable"
    if when is None:
        notes.append(f"no {late.TIMESTAMP_FILE}: lateness as course.json's missing_timestamp says")
    return when, "" if when else "missing"


def one(course: Course, student: str, path: Path, work: Path, notebook: str | None = None) -> Submission:
    """Prepare one submission: a folder, ``.zip``, ``.ipynb`` or ``.py`` at ``path``.

    :param work: a private folder for whatever the grader has to write (unzipped and converted files).
    :param notebook: the notebook's expected name (nbgrader): it wins over other files in a folder.
    """
    notes: list[str] = []
    unreadable: list[str] = []          # files Python or nbformat cannot read: the student's error
    submitted_at, flag, error = None, "", ""
    try:
        if path.is_dir() and notebook is not None:      # nbgrader wrote it; in a student's own files it is
            if course.due is not None:                   # whatever the student wrote, so it is not read there
                submitted_at, flag = _timestamp(path, notes)
            folder = _from_folder(course, student, path, work, notes, unreadable, notebook)
        elif path.is_dir():
            folder = _from_folder(course, student, _take_folder(course, path, work / "taken" / student, notes),
                                  work, notes, unreadable)
        elif path.suffix == ".zip":
            folder = _from_folder(course, student, _take_zip(course, path, work / "unzipped" / student, notes),
                                  work, notes, unreadable, notebook)
        else:
            notes.append(f"graded the {'code cells' if path.suffix == '.ipynb' else 'functions'} of {path.name}")
            folder = _convert(course, [path], work / "converted" / student, notes, unreadable)
        if unreadable:              # what can be read is graded; this is the error (never "blank")
            error, notes = unreadable[0], notes + unreadable[1:]
    except StudentError as err:
        error = err.message
        folder = work / "empty" / student
        folder.mkdir(parents=True, exist_ok=True)
    except (Exception, RecursionError) as err:            # a file that breaks the parser costs only its student
        error = f"the submission could not be read: {type(err).__name__}"
        folder = work / "empty" / student
        folder.mkdir(parents=True, exist_ok=True)
    blank = not error and is_blank(course, folder)
    if blank:
        notes.append("blank: every exercise function is missing or still the released stub")
    return Submission(student, folder, tuple(notes), submitted_at, error, blank, flag,
                      (str(path.resolve()), notebook is not None))


SUFFIXES = (".zip", ".ipynb", ".py")
MAX_SOURCE_BYTES = 4 << 20   # notebooks and .py files read for one submission


def from_path(course: Course, submissions: Path, work: Path) -> tuple[list[Submission], list[str]]:
    """Every submission in ``submissions``: a folder of them (one per student, named after the student), or one file.

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
        if not _visible(entry):
            continue
        if entry.is_symlink() or not (entry.is_dir() or entry.suffix in SUFFIXES):
            skipped.append(f"{entry}: left out (not a folder, .zip, .ipynb or .py)")
            continue
        student = entry.name if entry.is_dir() else entry.stem
        if student in chosen:
            raise GradeError(f"{entry}: a second submission for {student!r} (the other is {chosen[student].name})")
        chosen[student] = entry
    if not chosen:
        raise GradeError(f"{submissions}: no student folders in it")
    times = collected.read(submissions)       # grade collect's record of the LMS's times
    return [_with_lms_time(one(course, student, path, work), times.get(student), course)
            for student, path in chosen.items()], skipped


def _with_lms_time(submission: Submission, entry: "collected.Entry | None",
                   course: Course) -> Submission:
    """The submission with the time ``grade collect`` recorded from the LMS's download (its
    notes too): the record sits at the top of SUBMISSIONS, where no student's file lands, so
    the time is the LMS's, not one a student wrote (a ``timestamp.txt`` inside a folder or zip
    is never read)."""
    if entry is None:
        return submission
    from dataclasses import replace

    notes = submission.notes + entry.notes
    if course.due is None:                               # no late policy: the time changes nothing
        return replace(submission, notes=notes)
    return replace(submission, notes=notes, submitted_at=entry.submitted_at,
                   timestamp="" if entry.submitted_at else entry.timestamp)


def from_nbgrader(course: Course, course_dir: Path, assignment: str, work: Path) -> list[Submission]:
    """Every ``submitted/<student>/<assignment>/`` of an nbgrader course; the notebook wins over .py files.

    :raises GradeError: no ``submitted`` folder, or no student submitted ``assignment``.
    """
    submitted = course_dir / "submitted"
    if not submitted.is_dir():
        raise GradeError(f"{course_dir}: not an nbgrader course (no submitted/ folder)")
    folders = sorted(p / assignment for p in submitted.iterdir() if _visible(p) and (p / assignment).is_dir())
    if not folders:
        raise GradeError(f"{submitted}: no student submitted {assignment!r}")
    return [one(course, folder.parent.name, folder, work, notebook=f"{assignment}.ipynb") for folder in folders]


def gather(course: Course, work: Path, *, submissions: Path | None = None, nbgrader: Path | None = None,
           assignment: str | None = None) -> tuple[list[Submission], list[str]]:
    """The submissions of ``submissions`` (:func:`from_path`) or of an nbgrader course (:func:`from_nbgrader`).

    :param work: a folder to create for unzipped and converted files; the caller deletes it after grading.
    :returns: the submissions, and one line per entry left out.
    :raises GradeError: not exactly one source, or as the functions above (``work`` is then deleted).
    """
    try:
        if (submissions is None) == (nbgrader is None) or (nbgrader is None) != (assignment is None):
            raise GradeError("give SUBMISSIONS, or --nbgrader COURSE_DIR (its submitted/<student>/<assignment>/ folders)")
        work.mkdir(parents=True, exist_ok=True)
        if nbgrader is not None:
            return from_nbgrader(course, nbgrader, assignment, work), []
        return from_path(course, submissions, work)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise


def annotate(doc: dict, submission: Submission, course: Course) -> dict:
    """The score document with what collecting found: its notes, an error, blankness (lateness and the
    overrides: :func:`grader.scoring.finish`, from ``submission.when``)."""
    doc = dict(doc)
    if submission.error and "error" not in doc:
        doc["error"] = submission.error
    if submission.notes:
        doc["submission_notes"] = list(submission.notes)
    if submission.blank:
        doc["blank"] = True
    return doc
