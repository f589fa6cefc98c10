"""``grade collect LMS DOWNLOAD --roster roster.csv --out submissions/``: an LMS's download of
submissions turned into what ``grade autograde`` grades: one entry per roster student, named by the
roster's ``student``.

The download (a folder, or the zip as the LMS gave it, unpacked here with no ``..``, link or
absolute path) is read by its LMS's reader (:mod:`grader.lms.downloads`), which groups each person's
files and says who they are; :func:`grader.lms.downloads.common.place` finds their roster row. Each
student gets ``OUT/<student>.zip`` (``.py``, ``.ipynb``) when they handed in that one file, else a
folder ``OUT/<student>/`` of their files under the names they uploaded (a zip among them unpacked
into a folder of its name). When the download says when each handed in (Gradescope, Blackboard with
``--timezone``, a clone's commit with ``--commit-time``), the time goes into
``OUT/.grade-collected.json`` (:mod:`grader.intake.collected`), where autograde's late policy reads
it. Whatever could not be placed (a name no roster row has, two rows share, an anonymous or
blind-marked hand-in, a file of no known name) is listed, one line each, and makes the exit status
1; nothing is guessed.

OUT is written whole or not at all (built beside it, then renamed), and must not exist or be empty.
"""

from __future__ import annotations

import shutil
import tempfile
from datetime import datetime, timezone
from pathlib import Path

import click

from grader.errors import ExitStatus, GradeError, StudentError
from grader.intake import collected
from grader.intake.safezip import extract as unzip
from grader.lms import downloads
from grader.lms.downloads.common import Handin, Options, latest, place
from grader.lms.roster import load as load_roster
from grader.report import write_atomic

# The whole class's download is the instructor's, but its files are students': unpacked with the
# same
# refusals as a hand-in, under caps for a class (300 students of a few files each fit many times
# over).
CLASS_FILES = 100_000
CLASS_BYTES = 8 << 30
SINGLE = (".zip", ".py", ".ipynb")  # one file of these: the entry itself, as autograde takes it


def main(
    *,
    source: str,
    download: Path,
    roster: Path,
    out: Path,
    timezone_name: str | None = None,
    commit_time: bool = False,
) -> ExitStatus:
    """Collect ``download`` (``source``'s) into ``out``; exit status 1 when something could not be
    placed.

    :raises GradeError: bad input (download, roster, --out, --timezone), before anything is written.
    """
    if source not in downloads.SOURCES:
        raise GradeError(f"unknown LMS {source!r} (known: {', '.join(downloads.SOURCES)})")
    if not download.exists():
        raise GradeError(f"{download}: not found")
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise GradeError(
            f"--out {out}: exists and is not an empty folder: collect into a new one (a second "
            "download replaces the first whole)"
        )
    people = load_roster(roster)
    for student in people:
        if (
            student in (".", "..")
            or student.startswith((".", "_"))
            or any(c in student for c in "/\\\0:")
        ):
            raise GradeError(
                f"{roster}: field 'student': {student!r} cannot name a submission "
                "(no / \\ : and no leading . or _)"
            )
    options = Options(timezone_name, commit_time)
    with tempfile.TemporaryDirectory(prefix="grade-collect-") as work:
        root = _unpacked(download, Path(work) / "download")
        found = _read(source, root, options, people)
        placed, unplaced = _placed(found.handins, people)
        unplaced = found.unread + unplaced
        stage = Path(
            tempfile.mkdtemp(
                prefix=f".{out.name}.collecting-",
                dir=out.parent if out.parent.exists() else _made(out.parent),
            )
        )
        try:
            record = _write(stage, placed)
            doc = {
                "lms": source,
                "download": str(download.resolve()),
                "collected_at": datetime.now(timezone.utc).isoformat(timespec="milliseconds"),
                "times": found.times,
                "students": record,
                "unplaced": unplaced,
            }
            write_atomic(stage / collected.FILE, collected.dumps(doc))
            if out.exists():
                out.rmdir()
            stage.rename(out)
        except BaseException:
            shutil.rmtree(stage, ignore_errors=True)
            raise
    for student in (s for s in people if s not in placed):
        click.echo(f"no submission: {student}", err=True)
    for line in unplaced:
        click.echo(f"not placed: {line}", err=True)
    for student, entry in record.items():
        for note in entry["notes"]:
            click.echo(f"{student}: {note}")
    click.echo(
        f"{out}: {len(placed)} students collected from the {source} download, "
        f"{len(unplaced)} not placed, {len(people) - len(placed)} without a submission; "
        f"submission times: {found.times}"
    )
    return ExitStatus.FAILED if unplaced else ExitStatus.OK


def _made(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _unpacked(download: Path, dest: Path) -> Path:
    """The download as a folder: itself, or its zip unpacked into ``dest``."""
    if download.is_dir():
        return download
    if download.suffix.lower() != ".zip":
        raise GradeError(
            f"{download}: not a folder or a .zip (the LMS's download as it came, or unpacked)"
        )
    try:
        return unzip(download, dest, max_files=CLASS_FILES, max_bytes=CLASS_BYTES).folder
    except StudentError as err:
        raise GradeError(f"{download}: {err.message}") from None


def _read(source: str, root: Path, options: Options, people: dict):
    reader = downloads.reader(source)
    if source == "blackboard":
        return reader.read(root, options, tuple(p.login for p in people.values() if p.login))
    if source == "github":
        return reader.read(
            root,
            options,
            tuple(p.github or p.login for p in people.values() if p.github or p.login),
        )
    return reader.read(root, options)


def _placed(handins: list[Handin], people: dict) -> tuple[dict[str, Handin], list[str]]:
    """Each student's hand-in (their latest, with a note per earlier one left out), and a line per
    person the roster does not place."""
    mine: dict[str, list[Handin]] = {}
    unplaced = []
    for handin in handins:
        for who in handin.who:
            where = place(who, people)
            if where.student is None:
                unplaced.append(f"{handin.source}: {who.shown}: {where.why}")
            else:
                mine.setdefault(where.student, []).append(handin)
    chosen = {}
    for student in people:
        if student not in mine:
            continue
        last, earlier = latest(mine[student])
        if earlier:
            last = Handin(
                last.who,
                last.files,
                last.submitted_at,
                last.order,
                list(last.notes),
                last.source,
                last.timestamp,
            )
            last.notes += [
                f"left out an earlier hand-in ({h.source}): the latest ({last.source}) is graded"
                for h in earlier
            ]
        chosen[student] = last
    return chosen, unplaced


def _write(stage: Path, placed: dict[str, Handin]) -> dict[str, dict]:
    """Write each student's entry into ``stage``; the record's entries (see
    :mod:`grader.intake.collected`)."""
    record = {}
    for student, handin in placed.items():
        notes = list(handin.notes)
        files: dict[str, Path] = {}
        for path, name in handin.files:
            if name in files:
                notes.append(f"left out a second {name} ({path.name})")
            else:
                files[name] = path
        names = list(files)
        if len(names) == 1 and Path(names[0]).suffix.lower() in SINGLE and "/" not in names[0]:
            entry = student + Path(names[0]).suffix.lower()
            shutil.copyfile(files[names[0]], stage / entry)
        else:
            entry = student
            _folder(stage / student, files, notes)
        doc = {"entry": entry, "files": names, "notes": notes, "source": handin.source}
        if handin.submitted_at is not None:
            doc["submitted_at"] = handin.submitted_at.isoformat(timespec="milliseconds")
        elif handin.timestamp:
            doc["timestamp"] = handin.timestamp
            notes.append("the download gives no submission time for it")
        record[student] = doc
    return record


def _folder(folder: Path, files: dict[str, Path], notes: list[str]) -> None:
    """A student's files into ``folder``; a zip among several files unpacked into a folder of its
    name (the grader takes the modules wherever they sit), with a student's caps."""
    folder.mkdir()
    for name, path in files.items():
        target = folder / name
        if path.suffix.lower() == ".zip" and len(files) > 1:
            try:
                unzip(path, folder / Path(name).with_suffix(""))
                notes.append(f"unpacked {name}")
                continue
            except (StudentError, FileExistsError) as err:
                shutil.rmtree(folder / Path(name).with_suffix(""), ignore_errors=True)
                notes.append(f"{name} kept as it is: {getattr(err, 'message', err)}")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
