"""Reading course.json's fields: each wrong one is a one-line :class:`GradeError` naming the file and the field."""
from __future__ import annotations

import difflib
import json
from pathlib import Path
from typing import Any, Iterable

from grader.errors import GradeError


def _fail(path: Path, field: str, message: str) -> GradeError:
    return GradeError(f"{path}: field {field!r}: {message}")


def _only_known(data: dict, known: Iterable[str], path: Path, where: str = "") -> None:
    """A key that nothing reads is a typo until shown otherwise (``"limts"`` would silently be no limits):
    one line naming it and the closest known key."""
    known = sorted(known)
    for key in data:
        if key not in known:
            close = difflib.get_close_matches(key, known, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise _fail(path, f"{where}{key}", f"unknown field ({hint}known: {', '.join(known)})")


def _get(data: dict, key: str, kind, path: Path, where: str, default: Any = ...) -> Any:
    field = f"{where}{key}"
    if key not in data:
        if default is ...:
            raise _fail(path, field, "is missing")
        return default
    value = data[key]
    if kind is float:
        ok = type(value) in (int, float) and value >= 0
        expected = "a number >= 0"
    elif kind is str:
        ok = isinstance(value, str) and value != ""
        expected = "a non-empty string"
    else:
        ok = isinstance(value, kind)
        expected = f"a {kind.__name__}"
    if not ok:
        raise _fail(path, field, f"must be {expected}, got {json.dumps(value)[:60]}")
    return value
