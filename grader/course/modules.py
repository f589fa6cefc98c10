"""Importing one of the course's own trusted modules (a suite, a solution, the catalogue, the trace module)
by its path, in the grader process.
"""
from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType
from typing import Sequence

from grader.errors import GradeError


def import_course_module(path: Path, search: Sequence[Path] = ()) -> ModuleType:
    """Import a trusted course module from ``path``, as pytest would: its package root (the first folder up
    without ``__init__.py``) and ``search`` are put first on ``sys.path`` while it loads.

    :raises GradeError: when the file does not exist.
    """
    path = Path(path).resolve()
    if not path.is_file():
        raise GradeError(f"{path}: course module not found")
    root, parts = path.parent, [path.stem]
    while (root / "__init__.py").is_file():
        parts.insert(0, root.name)
        root = root.parent
    name = ".".join(parts)
    loaded = sys.modules.get(name)
    if loaded is not None and Path(getattr(loaded, "__file__", "") or "").resolve() != path:
        del sys.modules[name]
    entries = [str(root)] + [str(p) for p in search]
    sys.path[:0] = entries
    try:
        return importlib.import_module(name)
    finally:
        for entry in entries:
            sys.path.remove(entry)
