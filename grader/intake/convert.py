"""A student's folder as a folder of the course's modules: itself when it holds one, else the
course's modules written from its notebooks' code cells or its loose ``.py`` files.

Read statically (:mod:`grader.intake.extract` picks the functions out of the cells): nothing is
run. What cannot be read (a broken notebook, a file Python cannot decode) is the student's error,
one line each; what can be read is graded all the same.
"""

from __future__ import annotations

from pathlib import Path

from grader.course.manifest import Course
from grader.errors import StudentError
from grader.intake import pysource
from grader.intake.extract import modules_from_cells

MAX_NOTEBOOK_BYTES = 20 << 20
MAX_SOURCE_BYTES = 4 << 20  # notebooks and .py files read for one submission
IGNORED = {".ipynb_checkpoints", "__pycache__", "__MACOSX", "feedback"}


def visible(path: Path) -> bool:
    """Whether ``path`` is a student's entry, not a hidden, private or tool's one."""
    return not path.name.startswith((".", "_")) and path.name not in IGNORED


def notebook_cells(path: Path) -> list[tuple[str, str]]:
    """``("<file> cell <n>", source)`` for each code cell.

    :raises ValueError: the notebook is too large.
    :raises StudentError: it is not a notebook nbformat reads.
    """
    import nbformat  # imported here: slow, and only notebooks need it

    if path.stat().st_size > MAX_NOTEBOOK_BYTES:
        raise ValueError(f"larger than {MAX_NOTEBOOK_BYTES >> 20} MiB")
    try:
        notebook = nbformat.read(path, as_version=4)
        cells = [(i, c) for i, c in enumerate(notebook.cells, 1) if c.get("cell_type") == "code"]
        return [
            (f"{path.name} cell {i}", c["source"])
            for i, c in cells
            if isinstance(c.get("source"), str)
        ]
    except Exception as err:  # nbformat raises many kinds on a broken file
        said = " ".join(f"{type(err).__name__}: {err}".split())[:200]  # one line
        raise StudentError(
            "unreadable",
            f"{path.name}: not a notebook nbformat reads ({said})"
            + ("; save it as UTF-8" if isinstance(err, UnicodeDecodeError) else ""),
        ) from None


def convert(
    course: Course, sources: list[Path], target: Path, notes: list[str], unreadable: list[str]
) -> Path:
    """Write the course's modules, built from ``sources`` (notebooks and .py files), into
    ``target``; a line in ``unreadable`` for each source Python or nbformat cannot read."""
    cells: list[tuple[str, str]] = []
    if sum(path.stat().st_size for path in sources) > MAX_SOURCE_BYTES:
        raise StudentError(
            "too_large", f"more than {MAX_SOURCE_BYTES >> 20} MiB of notebooks and .py files"
        )
    for path in sources:
        try:
            if path.suffix == ".ipynb":
                cells += notebook_cells(path)
            else:
                cells.append((path.name, pysource.read(path)))  # its coding line honoured
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
        entries = [p for p in folder.iterdir() if visible(p)]
        if len(entries) != 1 or not entries[0].is_dir() or entries[0].is_symlink():
            return folder
        folder = entries[0]


def from_folder(
    course: Course,
    student: str,
    folder: Path,
    work: Path,
    notes: list[str],
    unreadable: list[str],
    notebook: str | None = None,
) -> Path:
    """The folder of modules for a student folder: itself when it holds a module, else a
    converted copy in ``work``.

    :param unreadable: gets a line per file converted that could not be read (see :func:`convert`).
    :param notebook: the notebook's expected file name (nbgrader), which then wins over any .py
        file.
    """
    folder = _descend(folder)
    modules = {f"{p.module}.py" for p in course.problems}
    files = sorted(p for p in folder.iterdir() if p.is_file() and not p.is_symlink() and visible(p))
    notebooks = [p for p in files if p.suffix == ".ipynb"]
    if notebook is None and any(p.name in modules for p in files):
        missing = sorted(modules - {p.name for p in files})
        if missing:
            notes.append(f"no {', '.join(missing)} in the submission")
        return folder
    if notebooks:
        if notebook is not None and any(p.name == notebook for p in notebooks):
            used = [p for p in notebooks if p.name == notebook]
            notes += [
                f"{p.name} left out: the notebook graded is {notebook}"
                for p in notebooks
                if p not in used
            ]
        else:
            used = notebooks
            if notebook is not None:
                notes.append(
                    f"no {notebook} (renamed?): graded {', '.join(p.name for p in used)} instead"
                )
        notes.append(f"graded the code cells of {', '.join(p.name for p in used)}")
        return convert(course, used, work / "converted" / student, notes, unreadable)
    scripts = [p for p in files if p.suffix == ".py"]
    if not scripts:
        notes.append("nothing to grade: no course module, notebook or .py file")
    else:
        notes.append(f"graded the functions in {', '.join(p.name for p in scripts)}")
    return convert(course, scripts, work / "converted" / student, notes, unreadable)
