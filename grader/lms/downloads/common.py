"""What the download readers share: a hand-in (whose files, when), who it names, and placing it on
the roster.

A reader turns the download (unpacked, a folder) into :class:`Handin` objects, each naming its
person by what the LMS writes (Canvas's user id and sortable name, Moodle's full name, Blackboard's
username, Gradescope's email, SID and name, a GitHub handle) and lists the entries it could not
read. :func:`place` finds each one's roster row: by an id first (``lms_id``, ``login``, ``email``,
``sis_id``, ``github``), then by name; a name two rows share, or no row, places nothing, and says
why. Nothing is guessed."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Mapping, Sequence

from grader.lms.roster import Person


@dataclass(frozen=True)
class Who:
    """A person as the download names them; empty fields are not said there.

    :param lms_id: the LMS's user id (Canvas's, in its file names).
    :param slug: Canvas's file-name form of the sortable name ("Lovelace, Ada" -> ``lovelaceada``).
    :param shown: how the download names them, for messages.
    """

    shown: str
    lms_id: str = ""
    login: str = ""
    email: str = ""
    sis_id: str = ""
    github: str = ""
    name: str = ""
    slug: str = ""


@dataclass(frozen=True)
class Options:
    """What a reader needs beyond the download: ``timezone`` (an IANA name) for times written
    without a zone (Blackboard's), ``commit_time`` (GitHub: take the graded commit's time)."""

    timezone: str | None = None
    commit_time: bool = False


@dataclass
class Handin:
    """One hand-in of the download: who (a group: several), its files (the file read, and its name
    in the student's folder), the LMS's submission time (None: the download has none), ``order`` (a
    later attempt sorts after), and notes for the score file."""

    who: tuple[Who, ...]
    files: list[tuple[Path, str]]
    submitted_at: datetime | None = None
    order: tuple = ()
    notes: list[str] = field(default_factory=list)
    source: str = ""  # the download's name for it, for messages
    timestamp: str = ""  # "missing": the download should have had a time, and has none


@dataclass
class Read:
    """A reader's result: the hand-ins, one line per entry it could not read, and whether its
    downloads carry submission times (``times``; said in the summary)."""

    handins: list[Handin] = field(default_factory=list)
    unread: list[str] = field(default_factory=list)
    times: str = ""


def words(name: str) -> frozenset[str]:
    """A name's words, case and accents aside: "Lovelace, Ada" and "Ada LOVELACE" are one name."""
    plain = unicodedata.normalize("NFKD", name)
    plain = "".join(c for c in plain if not unicodedata.combining(c))
    return frozenset(w.casefold() for w in re.findall(r"\w+", plain))


def canvas_slug(name: str) -> str:
    """Canvas's file-name form of a sortable name (``ContentZipper``: the non-word characters
    dropped, lower case). A roster name without a comma is taken as "First Last" and turned around
    first."""
    if "," not in name:
        parts = name.split()
        name = " ".join(parts[-1:] + parts[:-1])
    return re.sub(r"[^\w]", "", name).lower()


@dataclass(frozen=True)
class Placed:
    """Where a person goes: the roster's student id, or None and why not."""

    student: str | None
    why: str = ""


def place(who: Who, roster: Mapping[str, Person]) -> Placed:
    """The roster row ``who`` names: by the first id the download gives that matches exactly one
    row, else by name (Canvas's slug, or the name's words). None when no row, or several, match."""
    people = list(roster.values())
    ids = (
        ("lms_id", lambda p: p.lms_id),
        ("login", lambda p: p.login.casefold()),
        ("email", lambda p: p.email.casefold()),
        ("sis_id", lambda p: p.sis_id),
        ("github", lambda p: (p.github or p.login).casefold()),
    )  # no github column: the login
    for field_name, of in ids:
        value = getattr(who, field_name)
        if not value:
            continue
        value = value if field_name in ("lms_id", "sis_id") else value.casefold()
        hits = [p for p in people if of(p) and of(p) == value]
        if len(hits) == 1:
            return Placed(hits[0].student)
    for label, mine, of in (
        ("name", who.slug, lambda p: canvas_slug(p.name)),
        ("name", words(who.name) if who.name else None, lambda p: words(p.name)),
    ):
        if not mine:
            continue
        hits = [p for p in people if p.name and of(p) == mine]
        if len(hits) == 1:
            return Placed(hits[0].student)
        if len(hits) > 1:
            return Placed(
                None,
                f"its {label} fits {len(hits)} roster rows "
                f"({', '.join(p.student for p in hits[:4])}): give the roster the LMS's ids",
            )
    said = ", ".join(
        f"{f} {getattr(who, f)}"
        for f in ("lms_id", "login", "email", "sis_id", "github")
        if getattr(who, f)
    )
    return Placed(
        None,
        "no roster row has "
        + (said + (" or this name" if who.name or who.slug else "") if said else "this name"),
    )


def latest(handins: Sequence[Handin]) -> tuple[Handin, list[Handin]]:
    """The latest of one student's hand-ins (by ``order``, then by time), and the others."""
    ordered = sorted(
        handins, key=lambda h: (h.order, h.submitted_at.timestamp() if h.submitted_at else 0)
    )
    return ordered[-1], ordered[:-1]


def split_known(name: str, known: Sequence[str]) -> tuple[str, str] | None:
    """``name`` = ``<head>_<k>`` for exactly one ``k`` of ``known`` (a username with ``_`` in it is
    still one name): (head, k), or None."""
    hits = [k for k in known if k and name.casefold().endswith("_" + k.casefold())]
    if len(hits) != 1:
        return None
    return name[: -len(hits[0]) - 1], name[-len(hits[0]) :]
