"""Moodle's "Download all submissions" (``mod/assign``'s ``download_submissions``): per student and
submission plugin, a folder (the default since Moodle 3.1, "download submissions in folders")::

    <Full Name>_<participant id>_assignsubmission_file[_]/<the files, in their own folders>
    <Full Name>_<participant id>_assignsubmission_onlinetext[_]/onlinetext.html

or, with folders off, flat files ``<Full Name>_<participant id>_assignsubmission_file_<file name>``.
The participant id is Moodle's per-assignment id (``assign_user_mapping``), not the user id, so the
roster row is found by the full name (its words: "Ada Lovelace" is the roster's "Lovelace, Ada"); a
name two rows share is listed as not placed. With blind marking the name is "Participant": not
placed (reveal identities first). Team submissions name the group: each group is listed as not
placed unless its name is a roster name.

The download carries no submission time (Moodle applies its own late policy; the grading worksheet's
"Last modified (submission)" is in the site's language and time zone, and is not read)."""

from __future__ import annotations

import re
from pathlib import Path

from grader.lms.downloads.common import Handin, Options, Read, Who

FOLDER = re.compile(r"^(?P<name>.+)_(?P<pid>\d+)_assignsubmission_(?P<plugin>[a-z]+)_?$", re.S)
FLAT = re.compile(
    r"^(?P<name>.+)_(?P<pid>\d+)_assignsubmission_(?P<plugin>[a-z]+)_(?P<file>.+)$", re.S
)


def _top(root: Path) -> Path:
    """The folder holding the entries (the download unpacked into a folder of its own, or not)."""
    entries = [p for p in root.iterdir() if not p.name.startswith(".") and p.name != "__MACOSX"]
    if len(entries) == 1 and entries[0].is_dir() and not FOLDER.match(entries[0].name):
        return entries[0]
    return root


def read(root: Path, options: Options) -> Read:
    """The download's hand-ins, one per participant (every plugin's files together)."""
    found = Read(
        times="none (Moodle's download has no submission time: Moodle applies its late policy)"
    )
    by_participant: dict[str, Handin] = {}
    top = _top(root)

    def handin(hit) -> Handin:
        pid, name = hit["pid"], hit["name"]
        if pid not in by_participant:
            by_participant[pid] = Handin(
                (Who(f"{name} (Moodle participant {pid})", name=name),), [], source=hit.string
            )
        return by_participant[pid]

    for entry in sorted(
        p for p in top.iterdir() if not p.name.startswith(".") and p.name != "__MACOSX"
    ):
        if entry.is_symlink():
            found.unread.append(f"{entry.name}: a link, not read")
            continue
        hit = FOLDER.match(entry.name) if entry.is_dir() else FLAT.match(entry.name)
        if hit is None:
            found.unread.append(
                f"{entry.name}: not a Moodle submission name "
                "(<Full Name>_<participant id>_assignsubmission_<plugin>)"
            )
            continue
        if hit["name"].strip().casefold() == "participant":
            found.unread.append(
                f"{entry.name}: blind marking: Moodle's name hides who handed it in "
                "(reveal student identities, then download again)"
            )
            continue
        mine = handin(hit)
        if entry.is_dir():
            mine.files += [
                (p, p.relative_to(entry).as_posix())
                for p in sorted(entry.rglob("*"))
                if p.is_file() and not p.is_symlink()
            ]
        else:
            mine.files.append((entry, hit["file"]))
    found.handins = list(by_participant.values())
    return found
