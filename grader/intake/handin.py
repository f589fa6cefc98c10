"""`grade pack`: write a student's hand-in, then read it back exactly as `grade autograde` will.

The hand-in is a zip of what the intake takes from the student's folder (the course's modules and
the small files beside them, at the zip's top), or the student's notebook as it is. Reading it back
goes through
:func:`grader.intake.collect.one`, the code autograde runs on every submission, so what it reports
is what gets graded.
"""

from __future__ import annotations

import shutil
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from grader.course.manifest import Course
from grader.errors import GradeError, StudentError
from grader.intake import collect
from grader.intake import files as intake


@dataclass(frozen=True)
class Packed:
    """A written hand-in and what autograde will make of it.

    :param modules: the modules it holds, as graded: the course's (e.g. ``layernorm.py``), then the
        student's own (a helper module).
    :param missing: the course's modules it lacks.
    :param notes: what packing left out, then what reading it back said (the score file's
        ``submission_notes``).
    """

    path: Path
    modules: tuple[str, ...]
    missing: tuple[str, ...]
    notes: tuple[str, ...]
    blank: bool
    error: str = ""

    @property
    def ready(self) -> bool:
        """Every module there, not all stubs, and readable."""
        return not (self.missing or self.blank or self.error)


def pack(course: Course, source: Path, out: Path | None) -> Packed:
    """Write the hand-in for ``source`` (a folder of modules, or a notebook) and read it back.

    :param out: the file to write: default ``hand-in.zip``; for a notebook, default the notebook
        itself (no copy).
    :raises GradeError: ``source`` is missing or not a folder or notebook, or ``out`` would
        overwrite it.
    """
    notes: list[str] = []
    if source.is_file() and source.suffix == ".ipynb":
        if out is not None and out.resolve() != source.resolve():
            shutil.copyfile(source, out)
        out = out or source
    elif source.is_dir():
        out = out or Path("hand-in.zip")
        if source.resolve() in out.resolve().parents:
            raise GradeError(
                f"--out {out}: inside {source}, the folder packed: write the hand-in elsewhere"
            )
        try:
            choice = intake.in_folder(source, course.functions)
        except StudentError as err:  # the modules alone break a cap: autograde would refuse it
            raise GradeError(f"{source}: {err.message}") from None
        notes += choice.notes
        with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as zf:
            for rel in choice.files:
                zf.write(source / rel, rel.relative_to(choice.root).as_posix())
    else:
        raise GradeError(f"{source}: not a folder of modules or a notebook (.ipynb)")
    with tempfile.TemporaryDirectory(prefix="grade-pack-") as work:
        read = collect.one(course, "you", out, Path(work))
        graded = {p.name for p in read.folder.glob("*.py")}
    expected = [f"{m}.py" for m in course.modules]
    return Packed(
        out,
        tuple(m for m in expected if m in graded) + tuple(sorted(graded - set(expected))),
        tuple(m for m in expected if m not in graded),
        tuple(notes) + read.notes,
        read.blank,
        read.error,
    )
