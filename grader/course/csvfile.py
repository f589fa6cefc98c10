"""A small CSV file beside the course (the roster, the overrides): its rows, or one line saying what
is wrong."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Sequence

from grader.errors import GradeError


def rows(
    path: Path, columns: Sequence[str], not_found: str = "not found"
) -> tuple[list[str], list[list[str]]]:
    """The header (each name stripped) and the other rows of the UTF-8 CSV file at ``path`` (a BOM
    allowed).

    :param columns: the columns the file may have, named in the error for an empty file.
    :raises GradeError: the file is missing (``not_found`` says where it was expected), unreadable
        or empty.
    """
    try:
        with open(path, newline="", encoding="utf-8-sig") as f:
            found = list(csv.reader(f))
    except FileNotFoundError:
        raise GradeError(f"{path}: {not_found}") from None
    except (OSError, UnicodeDecodeError, csv.Error) as err:
        raise GradeError(f"{path}: not a readable UTF-8 CSV file: {err}") from None
    if not found:
        raise GradeError(f"{path}: empty (the header is {','.join(columns)})")
    return [h.strip() for h in found[0]], found[1:]
