"""Reading course.json's fields: each wrong one is a one-line :class:`GradeError` naming the file
and the field."""

from __future__ import annotations

import difflib
import json
import keyword
import math
import re
from pathlib import Path
from typing import Any, Iterable

from grader.errors import GradeError


def _fail(path: Path, field: str, message: str) -> GradeError:
    return GradeError(f"{path}: field {field!r}: {message}")


def _only_known(data: dict, known: Iterable[str], path: Path, where: str = "") -> None:
    """A key that nothing reads is a typo until shown otherwise (``"limts"`` would silently be no
    limits): one line naming it and the closest known key."""
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
    if kind is float:  # NaN and inf too: json reads both
        ok = type(value) in (int, float) and math.isfinite(value) and value >= 0
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


def _number(
    data: dict,
    key: str,
    path: Path,
    where: str,
    least: float,
    most: float,
    unit: str = "",
    whole: bool = False,
) -> float:
    """``data[key]``, a finite number from ``least`` to ``most`` (``whole``: an integer, returned
    as an int; ``2048.0`` is one). Outside, it fails every submission alike, or bounds nothing."""
    value = data[key]
    number = type(value) in (int, float) and math.isfinite(value)
    if number and whole:
        number = float(value).is_integer()
    if not number or not least <= value <= most:
        kind = ("a whole number" if whole else "a number") + (f" of {unit}" if unit else "")
        raise _fail(
            path,
            f"{where}{key}",
            f"must be {kind} from {least:g} to {most:g}, got {json.dumps(value)[:60]}",
        )
    return int(value) if whole else value


IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _identifier(value: Any) -> bool:
    """A name Python code can use: ``import class`` or ``def lambda()`` cannot be written."""
    return isinstance(value, str) and bool(IDENTIFIER.match(value)) and not keyword.iskeyword(value)


# an assignment's name ends up in paths: scores/<name>/, nbgrader's submitted/<student>/<name>/
ASSIGNMENT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def _name(data: dict, path: Path, at: str) -> str:
    """The assignment's name (``assignment``)."""
    name = _get(data, "assignment", str, path, at)
    if not ASSIGNMENT.match(name):
        raise _fail(
            path, at + "assignment", f"must be letters, digits, '.', '-' or '_', got {name[:60]!r}"
        )
    return name
