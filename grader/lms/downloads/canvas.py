"""Canvas's "Download Submissions": one flat zip of every attachment, named by ``ContentZipper``
(canvas-lms ``lib/content_zipper.rb``) as::

    <sortable name>[_LATE]_<user id>_<attachment id>_<file name>     an uploaded file
    <sortable name>[_LATE]_<user id>_text.html, ..._link.html         a text entry, a URL

where the sortable name ("Lovelace, Ada") is lower-cased with every non-word character dropped
(``lovelaceada``), ``LATE`` marks a submission Canvas counts late, and the user id is the roster's
``lms_id``. The name never holds ``_<digits>_`` (Canvas removes it so the ids can be read back), so
the first ``_<digits>_<digits>_`` ends it. With anonymous grading the name and id are
``anon_<anonymous id>``: Canvas does not say who it is, and the file is listed as not placed. The
download carries no submission time, only the LATE mark (a note in the score file; Canvas applies
its own late policy: export with ``--late-by-lms``).

A file a student uploaded twice gets Canvas's ``-1`` suffix (``layernorm-1.py``); the name is
restored when the student has no other file of that name, with a note."""

from __future__ import annotations

import re
from pathlib import Path

from grader.lms.downloads.common import Handin, Options, Read, Who

FILE = re.compile(r"^(?P<name>.*?)(?P<late>_LATE)?_(?P<uid>\d+)_(?P<att>\d+)_(?P<file>.+)$", re.S)
ONLINE = re.compile(r"^(?P<name>.*?)(?P<late>_LATE)?_(?P<uid>\d+)_(?P<kind>text|link)\.html$", re.S)
ANONYMOUS = re.compile(r"^(?:.*_)?anon_[A-Za-z0-9]+_", re.S)
RENAMED = re.compile(r"^(?P<stem>.+)-\d+(?P<suffix>\.(?:py|ipynb|zip))$")


def read(root: Path, options: Options) -> Read:
    """The download's hand-ins, one per student (their attachments together)."""
    found = Read(
        times="none (Canvas's download marks LATE only: Canvas applies its late policy; "
        "export or push with --late-by-lms)"
    )
    by_user: dict[str, Handin] = {}
    for path in sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink()):
        name = path.name
        if name.startswith(".") or "__MACOSX" in path.parts:
            continue
        hit = FILE.match(name) or ONLINE.match(name)
        if hit is None:
            why = (
                "anonymous grading: Canvas's name hides who handed it in (turn anonymity off, "
                "or grade it by hand)"
                if ANONYMOUS.match(name)
                else "not a Canvas submission name (<name>[_LATE]_<user id>_<file id>_<file>)"
            )
            found.unread.append(f"{path.relative_to(root)}: {why}")
            continue
        uid = hit["uid"]
        handin = by_user.get(uid)
        if handin is None:
            handin = by_user[uid] = Handin(
                (Who(f"{hit['name']} (Canvas user {uid})", lms_id=uid, slug=hit["name"]),),
                [],
                source=f"{hit['name']}{hit['late'] or ''}_{uid}_*",
            )
        if hit["late"] and not any("LATE" in n for n in handin.notes):
            # a note goes to the student too (the score file's notes are in every comment):
            # the instructor's --late-by-lms is said in collect's summary line instead
            handin.notes.append(
                "Canvas marked it LATE; its download carries no submission time, so Canvas's "
                "own late policy applies"
            )
        handin.files.append(
            (path, hit["file"] if "file" in hit.groupdict() else f"{hit['kind']}.html")
        )
    for handin in by_user.values():
        _restore_names(handin)
        found.handins.append(handin)
    return found


def _restore_names(handin: Handin) -> None:
    """``layernorm-1.py`` back to ``layernorm.py`` (Canvas's suffix for a file uploaded again), when
    the student has no ``layernorm.py`` of their own."""
    names = {name for _, name in handin.files}
    for i, (path, name) in enumerate(handin.files):
        hit = RENAMED.match(name)
        if hit and hit["stem"] + hit["suffix"] not in names:
            original = hit["stem"] + hit["suffix"]
            handin.files[i] = (path, original)
            names.add(original)
            handin.notes.append(
                f"{name} renamed {original} (Canvas's suffix for a file uploaded again)"
            )
