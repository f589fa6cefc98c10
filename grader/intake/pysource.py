"""A student's Python file read as Python reads it: a UTF-8 BOM, or the PEP 263 coding line, else
UTF-8 (:func:`tokenize.detect_encoding`).

A correct ``.py`` saved in Latin-1 with its ``# -*- coding: latin-1 -*-`` line runs under
``python``; read as UTF-8 it was "unreadable", its functions missing, graded 0 and flagged blank.
A file Python itself cannot read (Latin-1 with no coding line, an encoding Python does not know)
is the student's: one line naming the file and saying what to do, never "blank".
"""

from __future__ import annotations

import codecs
import io
import re
import tokenize
from pathlib import Path

from grader.errors import StudentError

# PEP 263's own pattern, on each of the first two lines
COOKIE = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")
ADVICE = "save it as UTF-8"


def declared(data: bytes) -> str | None:
    """The encoding the file's coding line names, if it has one: on the first line, or on the second
    after a first that is only a comment or blank (as PEP 263 says)."""
    lines = data.split(b"\n", 2)[:2]
    for i, line in enumerate(lines):
        found = COOKIE.match(line)
        if found:
            return found.group(1).decode("ascii", "replace")
        if i == 0 and line.strip() and not line.lstrip().startswith(b"#"):
            return None
    return None


def decode(name: str, data: bytes) -> str:
    """``data``, the Python file ``name``, as text: as :func:`tokenize.open` reads it (what
    ``python`` and ``import`` read), without its BOM.

    :raises StudentError: ``unreadable``: one line naming the file, the line, and what to do.
    """
    named = declared(data)
    try:
        encoding = tokenize.detect_encoding(io.BytesIO(data).readline)[0]
    except SyntaxError as err:
        if named is not None and not _usable(named):
            raise _unknown(name, named) from None
        if named is None or codecs.lookup(named).name == "utf-8":
            encoding = "utf-8"  # its first lines are not UTF-8: said below
        else:  # a BOM and another coding line, say
            raise StudentError(
                "unreadable", f"{name}: not readable as Python: {err.msg}; {ADVICE}"
            ) from None
    if not _usable(encoding):  # utf-16, rot13: Python refuses them too
        raise _unknown(name, encoding)
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as err:
        line = data[: err.start].count(b"\n") + 1
        why = (
            "as its coding line says"
            if named is not None
            else "which Python reads when no coding line says otherwise"
        )
        raise StudentError(
            "unreadable",
            f"{name}: not readable as Python: line {line} is not {encoding} ({why}); {ADVICE}",
        ) from None


def read(path: Path) -> str:
    """The Python file at ``path`` as text (:func:`decode`).

    :raises StudentError: ``unreadable``, as :func:`decode`.
    :raises OSError: the file cannot be read at all.
    """
    return decode(path.name, Path(path).read_bytes())


def _usable(encoding: str) -> bool:
    """Whether Python reads source in ``encoding``: a text encoding it knows that reads ASCII as
    ASCII (the coding line itself must read so)."""
    sample = bytes(range(128))
    try:
        return sample.decode(encoding) == sample.decode("ascii")
    except (LookupError, UnicodeDecodeError):
        return False


def _unknown(name: str, encoding: str) -> StudentError:
    return StudentError(
        "unreadable",
        f"{name}: not readable as Python: its coding line names "
        f"{encoding[:40]!r}, an encoding Python does not read source "
        f"in; {ADVICE}",
    )
