"""Blackboard Learn's Grade Center "Assignment File Download": one flat zip, per attempt a text file
and the attempt's files, named::

    <Assignment>_<username>_attempt_<YYYY-MM-DD-HH-MM-SS>.txt            (name, date, comments, file
    list) <Assignment>_<username>_attempt_<YYYY-MM-DD-HH-MM-SS>_<file name>     each file, its name
    as uploaded

The username is the roster's ``login``; since an assignment's name and a username may both hold
``_``, the username is the roster login the part before ``_attempt_`` ends with (else its last ``_``
part). The attempt's time is in the name, in the Blackboard server's time zone, which the name does
not say (the .txt's "Date Submitted" line shows it, in the site's language): ``--timezone`` (an IANA
name, e.g. Europe/Lisbon) makes it the submission time for the late policy; without it no time is
kept, and a line says so. A student with several attempts in the download gets the latest; the
others are left out with a note. The .txt (Blackboard's own) goes into the student's folder too."""

from __future__ import annotations

import re
from datetime import datetime
from pathlib import Path

from grader.errors import GradeError
from grader.lms.downloads.common import Handin, Options, Read, Who, split_known

NAME = re.compile(
    r"^(?P<head>.+)_attempt_(?P<stamp>\d{4}-\d{2}-\d{2}-\d{2}-\d{2}-\d{2})"
    r"(?:\.txt|_(?P<file>.+))$",
    re.S,
)


def _zone(name: str | None):
    if name is None:
        return None
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise GradeError(
            f"--timezone {name}: not a time zone name (use an IANA name such as "
            "Europe/Lisbon or America/New_York)"
        ) from None


def read(root: Path, options: Options, logins: tuple[str, ...] = ()) -> Read:
    """The download's hand-ins, one per attempt (:func:`grader.lms.downloads.common.latest` keeps
    one a student); ``logins``: the roster's, to tell the username from the assignment's name."""
    zone = _zone(options.timezone)
    found = Read(
        times=f"each attempt's, in {options.timezone}"
        if zone
        else "not kept: Blackboard's names give the time without its zone (pass --timezone)"
    )
    attempts: dict[tuple[str, str], Handin] = {}
    for path in sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink()):
        if path.name.startswith(".") or "__MACOSX" in path.parts:
            continue
        hit = NAME.match(path.name)
        if hit is None:
            found.unread.append(
                f"{path.relative_to(root)}: not a Blackboard attempt name "
                "(<assignment>_<username>_attempt_<date>[_<file>])"
            )
            continue
        split = split_known(hit["head"], logins)
        user = split[1] if split else hit["head"].rsplit("_", 1)[-1]
        key = (user.casefold(), hit["stamp"])
        if key not in attempts:
            naive = datetime.strptime(hit["stamp"], "%Y-%m-%d-%H-%M-%S")
            attempts[key] = Handin(
                (Who(f"{user} (Blackboard username)", login=user),),
                [],
                submitted_at=naive.replace(tzinfo=zone) if zone else None,
                order=(naive,),
                source=f"attempt {hit['stamp']}",
            )
        attempts[key].files.append((path, hit["file"] or "blackboard-attempt.txt"))
    found.handins = list(attempts.values())
    return found
