"""The push ledger: what each push sent, kept beside the score files (``OUT/.grade-push``).

Why a ledger: an LTI platform cannot be asked cheaply what it has (the AGS result service needs
another scope), and each score re-posted to Canvas through LTI adds a submission attempt and a
comment; so a push sends a score object only when it differs from the one the ledger says went
last, stamped later than that one. Canvas's REST API shows what it has, but not who put it there:
the ledger's last grade tells a grade a TA changed in Canvas since (kept unless
``--overwrite-lms-grades``) from the grade the push posted. A push that stopped halfway (the LMS
throttled or hung) leaves the ledger saying what went through, so running it again continues.

One JSON object: a section per destination (a Canvas assignment, an LTI line item), in it an entry
per LMS user id. Not signed: it is the instructor's own record of what was sent, and a wrong entry
costs a grade posted again or kept (both reported), never a grade sent elsewhere. A ledger that
cannot be read is said in a warning and the push goes on as a first one would; its first record
sets the unreadable file aside (``.grade-push.unreadable``). Not ``*.json``, so that what reads the
score files never takes it.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from grader.report import write_atomic

NAME = ".grade-push"


def digest(value) -> str:
    """The sha256 of ``value`` (text, bytes, or JSON data in a canonical form)."""
    if isinstance(value, str):
        value = value.encode("utf-8")
    elif not isinstance(value, bytes):
        value = json.dumps(value, sort_keys=True, ensure_ascii=False, allow_nan=False).encode()
    return hashlib.sha256(value).hexdigest()


@dataclass
class Ledger:
    """One destination's section of the ledger in ``folder``: ``entries`` by LMS user id.
    :meth:`record` writes the whole file at once (atomically), so a push killed halfway keeps
    every entry recorded before."""

    folder: Path
    destination: str
    entries: dict[str, dict] = field(default_factory=dict)
    warning: str | None = None

    @classmethod
    def open(cls, folder: Path, destination: str) -> "Ledger":
        data, warning = _read(Path(folder))
        section = data.get(destination, {})
        entries = (
            {k: v for k, v in section.items() if isinstance(v, dict)}
            if isinstance(section, dict)
            else {}
        )
        return cls(Path(folder), destination, entries, warning)

    def get(self, user_id: str) -> dict:
        return self.entries.get(user_id, {})

    def record(self, user_id: str, **entry) -> None:
        """Set ``user_id``'s entry (merged into the one there) and write the ledger (unless the
        entry is already so: a class found unchanged is no write a student)."""
        merged = {**self.entries.get(user_id, {}), **entry}
        if self.entries.get(user_id) == merged:
            return
        self.entries[user_id] = merged
        data, unreadable = _read(self.folder)  # other destinations' sections, as they are now
        if unreadable:  # kept for a look, never written over
            os.replace(self.folder / NAME, self.folder / (NAME + ".unreadable"))
        data[self.destination] = self.entries
        write_atomic(
            self.folder / NAME,
            json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n",
        )


def _read(folder: Path) -> tuple[dict, str | None]:
    path = folder / NAME
    if not path.is_file():
        return {}, None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict):
            raise ValueError("not a JSON object")
    except (OSError, ValueError) as err:
        return {}, (
            f"{path}: the push ledger is not readable ({err}): this push sends as a first "
            f"one would, and sets it aside as {NAME}.unreadable"
        )
    return data, None
