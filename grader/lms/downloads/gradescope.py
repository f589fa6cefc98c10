"""Gradescope's "Export Submissions" (a programming assignment's): a zip holding
``assignment_<id>_export/`` with ``submission_metadata.yml`` and one folder per submission,
``submission_<id>/``, holding the files as handed in. The metadata (YAML, Ruby-style symbol keys)
says, per folder, who submitted it (``:submitters:``, each ``:name:``, ``:sid:``, ``:email:``; a
group has several) and when (``:created_at:``, with its zone): the time kept for the late policy.
Each submitter is placed by email, then SID (the roster's ``sis_id``), then name; every member of a
group gets the group's files, with a note. A folder the metadata does not name is listed as not
placed. Read with PyYAML's safe loader (the ``collect`` extra)."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from grader.errors import GradeError
from grader.lms.downloads.common import Handin, Options, Read, Who

METADATA = "submission_metadata.yml"


def _when(value) -> datetime | None:
    """``:created_at:`` as PyYAML reads it (a datetime) or as text; None when it is neither."""
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.strip().replace(" ", "T", 1).replace(" ", ""))
        except ValueError:
            return None
    if not isinstance(value, datetime):
        return None
    return (
        value if value.tzinfo else value.replace(tzinfo=timezone.utc)
    )  # YAML without a zone is UTC


def read(root: Path, options: Options) -> Read:
    """The export's hand-ins, one per submission folder (a group's: one naming every member)."""
    try:
        import yaml
    except ImportError:
        raise GradeError(
            "grade collect gradescope reads submission_metadata.yml with PyYAML: "
            "pip install 'transformer-block-grader[collect]'"
        ) from None
    found = Read(times="each submission's :created_at:")
    metas = sorted(root.rglob(METADATA))
    if not metas:
        raise GradeError(
            f"{root}: no {METADATA} in it (not a Gradescope export: Assignment > Review Grades > "
            "Export Submissions)"
        )
    meta = metas[0]
    try:
        data = yaml.safe_load(meta.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as err:
        raise GradeError(f"{meta}: not readable YAML: {' '.join(str(err).split())[:200]}") from None
    if not isinstance(data, dict):
        raise GradeError(f"{meta}: not a mapping of submission folders")
    top = meta.parent
    named = set()
    for folder_name, record in sorted(data.items(), key=lambda kv: str(kv[0])):
        folder = top / str(folder_name)
        named.add(str(folder_name))
        submitters = record.get(":submitters") if isinstance(record, dict) else None
        if not isinstance(submitters, list) or not submitters or not folder.is_dir():
            found.unread.append(
                f"{folder_name}: "
                + (
                    "no folder of that name in the export"
                    if not folder.is_dir()
                    else "no :submitters: in the metadata"
                )
            )
            continue
        people = tuple(
            Who(
                f"{s.get(':name', '?')} (Gradescope)",
                email=str(s.get(":email") or ""),
                sis_id=str(s.get(":sid") or ""),
                name=str(s.get(":name") or ""),
            )
            for s in submitters
            if isinstance(s, dict)
        )
        when = _when(record.get(":created_at"))
        handin = Handin(
            people,
            [
                (p, p.relative_to(folder).as_posix())
                for p in sorted(folder.rglob("*"))
                if p.is_file() and not p.is_symlink()
            ],
            submitted_at=when,
            order=(when.timestamp() if when else 0,),
            source=str(folder_name),
            timestamp="" if when else "missing",
        )
        if len(people) > 1:
            handin.notes.append(
                "a group submission of " + ", ".join(w.name or w.email for w in people)
            )
        found.handins.append(handin)
    for entry in sorted(top.iterdir()):
        if entry.is_dir() and entry.name not in named:
            found.unread.append(f"{entry.name}: a folder {METADATA} does not name")
    return found
