"""Importing one of the course's own trusted modules (a suite, a solution, the catalogue, the trace
module) by its path, in the grader process.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Iterable, Sequence

from grader.errors import GradeError

if TYPE_CHECKING:
    from grader.course.manifest import Course


def import_course_module(path: Path, search: Sequence[Path] = ()) -> ModuleType:
    """Import a trusted course module from ``path``, as pytest would: its package root (the first
    folder up without ``__init__.py``) and ``search`` are put first on ``sys.path`` while it loads.

    :raises GradeError: when the file does not exist.
    """
    path = Path(path).resolve()
    if not path.is_file():
        raise GradeError(f"{path}: course module not found")
    root, name = import_root(path)
    loaded = sys.modules.get(name)
    if loaded is not None and Path(getattr(loaded, "__file__", "") or "").resolve() != path:
        del sys.modules[name]
    # what it imports by plain name from ``search`` (the catalogue: the reference's modules) must be
    # those too
    forget_foreign(
        {name.partition(".")[0]} | {f.stem for folder in search for f in Path(folder).glob("*.py")},
        [root, *search],
    )
    entries = [str(root)] + [str(p) for p in search]
    sys.path[:0] = entries
    try:
        return importlib.import_module(name)
    finally:
        for entry in entries:
            sys.path.remove(entry)


def import_root(path: Path) -> tuple[Path, str]:
    """Where a module file is imported from and as what, as pytest's prepend mode does: the first
    folder up without ``__init__.py``, and the dotted name below it (``tests/public/trace.py``:
    ``tests``, ``public.trace``)."""
    path = Path(path).resolve()
    root, parts = path.parent, [path.stem]
    while (root / "__init__.py").is_file():
        parts.insert(0, root.name)
        root = root.parent
    return root, ".".join(parts)


def forget_foreign(names: Iterable[str], roots: Iterable[Path]) -> None:
    """Forget every imported module under the top-level ``names`` that was not imported from one of
    ``roots``.

    One process may grade several assignments (a long-lived Dask worker): each has its ``public``
    suites, its ``layernorm`` or ``mistakes`` module, imported by plain name. Python would hand the
    second assignment the first one's module; forgotten, it is imported again from this assignment's
    own files.
    """
    names, roots = set(names), {Path(r).resolve() for r in roots}
    for name, module in list(sys.modules.items()):
        if name.partition(".")[0] not in names:
            continue
        file = getattr(module, "__file__", None)
        if file is None or import_root(Path(file))[0] not in roots:
            del sys.modules[name]


def forget_other_courses(course: "Course") -> None:
    """:func:`forget_foreign` for everything this assignment imports in the grader process: its
    reference (and every module beside it), its suites' packages and its feedback modules."""
    files = [p.public for p in course.problems] + [p.hidden for p in course.problems if p.hidden]
    files += [
        f
        for f in (course.feedback.mistakes, course.feedback.trace)
        if f is not None and f.is_file()
    ]
    tops = {import_root(f) for f in files}
    names = {name.partition(".")[0] for _, name in tops} | set(course.modules)
    roots = {root for root, _ in tops}
    if course.solutions is not None and course.solutions.is_dir():
        names |= {f.stem for f in course.solutions.glob("*.py")}
        roots.add(course.solutions)
    forget_foreign(names, roots)
