"""The class roster: which LMS identifiers belong to each student id (the score files' ``student``).

``roster.csv`` (UTF-8, a BOM is fine), one row per student, this header in any order::

    student,lms_id,sis_id,login,email,name,section[,github]

Only ``student`` and the columns the export's format needs must be there (``grade export`` says
which); an absent column reads as empty cells. ``lms_id`` is the LMS's own user id (Canvas ``ID``,
the LTI ``sub``), ``sis_id`` the institution's id (Canvas ``SIS User ID``, Moodle ``ID number``),
``login`` the user name (Canvas ``SIS Login ID``, Moodle ``username``, Blackboard ``Username``),
``github`` the GitHub username (``grade collect github``; optional, else ``login`` is tried). Empty
cells are allowed; duplicated ids are not (LMS importers would apply both rows).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path
from typing import Sequence

from grader.course import csvfile
from grader.errors import GradeError


@dataclass(frozen=True)
class Person:
    """One roster row; every field is text, possibly empty (ids stay text: leading zeros matter)."""

    student: str
    lms_id: str
    sis_id: str
    login: str
    email: str
    name: str
    section: str
    github: str = ""


COLUMNS = tuple(f.name for f in fields(Person))
UNIQUE = ("student", "lms_id", "sis_id", "login", "email", "github")


def load(path: Path, needed: Sequence[Sequence[str]] = (), fmt: str = "") -> dict[str, Person]:
    """Read the roster, in file order, keyed by student id.

    :param needed: the columns the format ``fmt`` needs beyond ``student``: each entry is a group of
        which one column must be there (``("lms_id", "sis_id", "login")``: any of them).
    :raises GradeError: one line naming the file, the line and the field: the missing columns, a row
        with the wrong number of cells, an empty ``student``, or an id used twice (emails compared
        without case).
    """
    path = Path(path)
    header, rows = csvfile.rows(path, COLUMNS)
    missing = [
        " or ".join(repr(c) for c in group)
        for group in [("student",), *needed]
        if not any(c in header for c in group)
    ]
    if missing:
        raise GradeError(
            f"{path}: line 1: column{'s' if len(missing) > 1 else ''} missing: "
            f"{', '.join(missing)} "
            f"({'--format ' + fmt if fmt else 'the export'} needs them; the columns are "
            f"{','.join(COLUMNS)})"
        )
    index = {column: header.index(column) for column in COLUMNS if column in header}
    people: dict[str, Person] = {}
    seen: dict[tuple[str, str], int] = {}
    for line, row in enumerate(rows, start=2):
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(header):
            raise GradeError(
                f"{path}: line {line}: {len(row)} fields, the header has {len(header)}"
            )
        person = Person(
            **{column: row[index[column]].strip() if column in index else "" for column in COLUMNS}
        )
        if not person.student:
            raise GradeError(f"{path}: line {line}: field 'student': empty")
        for column in UNIQUE:
            value = getattr(person, column)
            key = (column, value.lower() if column == "email" else value)
            if value and key in seen:
                raise GradeError(
                    f"{path}: line {line}: field {column!r}: {value!r} is also on line {seen[key]}"
                )
            seen[key] = line
        people[person.student] = person
    return people
