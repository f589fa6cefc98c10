"""Choose what of a submission to grade: the folder holding the course's modules, and the files
beside them.

Students hand in whatever they zipped: a whole release folder (exercises/, tests/, grader/, a
.venv), a single nested folder, loose files, a stray .git/ or a large data file. Only names and
sizes (and, to tell a student's folder from a copy of the released stubs, the modules' source,
parsed, never run) are read here; nothing is unpacked. The rest is left out with a note that says
what and why; a submission is refused only when its modules themselves do not fit the caps, and then
the message says which cap and by how much.
"""

from __future__ import annotations

import os
import stat
import zipfile
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path, PurePosixPath
from typing import Callable, Iterable, Mapping, Sequence

from grader.course.limits import MAX_SUBMISSION_BYTES, MAX_SUBMISSION_FILES
from grader.errors import StudentError
from grader.intake.safezip import safe_name
from grader.intake.stubs import untouched

TOP = PurePosixPath(".")
JUNK = {
    "__pycache__",
    "__MACOSX",
    ".ipynb_checkpoints",
    ".DS_Store",
    "Thumbs.db",
}  # left out without a word
NOT_CODE = {
    "site-packages",
    "node_modules",
}  # with hidden folders (.git, .venv): never code to grade
SHOWN = 5  # names listed in one note before "and N more"


@dataclass(frozen=True)
class File:
    """A regular file of the submission: its path relative to the submission, its size in bytes, and
    when it was last changed (seconds since the epoch; 0 when unknown)."""

    path: PurePosixPath
    size: int
    mtime: float = 0.0


@dataclass(frozen=True)
class Choice:
    """What to grade.

    :param root: the folder graded, relative to the submission (``.`` for the top).
    :param files: the files to take, relative to the submission; all under ``root``.
    :param notes: one sentence each on what was left out, and why.
    """

    root: PurePosixPath
    files: tuple[PurePosixPath, ...]
    notes: tuple[str, ...]


def _mib(n: int) -> str:
    return f"{n / (1 << 20):.1f} MiB" if n >= 1 << 20 else f"{n / 1024:.0f} KiB"


def _listed(names: Sequence[str]) -> str:
    more = len(names) - SHOWN
    return ", ".join(names[:SHOWN]) + (f" and {more} more" if more > 0 else "")


def _not_code(files: Iterable[File]) -> tuple[list[File], list[str]]:
    """The files outside hidden folders, caches and Python environments; and the folders left out
    (for a note)."""
    kept, left = [], {}
    for f in files:
        parts = f.path.parts
        if (
            f.path.name in JUNK
            or f.path.name.startswith("._")
            or any(p in JUNK for p in parts[:-1])
        ):
            continue
        cut = next(
            (i for i, p in enumerate(parts[:-1]) if p.startswith(".") or p in NOT_CODE), None
        )
        if cut is not None:
            left[PurePosixPath(*parts[: cut + 1]).as_posix() + "/"] = True
        elif not f.path.name.startswith("."):  # .env, .gitignore: nothing a module reads
            kept.append(f)
    return kept, list(left)


def choose(
    files: Sequence[File],
    modules: Sequence[str],
    is_stub: Callable[[PurePosixPath], bool],
    max_files: int = MAX_SUBMISSION_FILES,
    max_bytes: int = MAX_SUBMISSION_BYTES,
) -> Choice:
    """Pick the folder to grade and the files to take from it.

    The folder is the one holding the most course modules (``<module>.py``), preferring modules that
    are not the released stubs, then the most recently changed (an old attempt beside the final
    one), then the shallower folder; without any module, the shallowest folder holding notebooks,
    else ``.py`` files (the grader converts those). Its own modules (or notebooks, or .py files) are
    always taken; the other files under it (data they read, helper modules) are taken smallest first
    within the caps.

    :param is_stub: whether the module at this path is still the released stub (see
        :func:`untouched`).
    :raises StudentError: ``too_large`` when the folder's modules alone exceed ``max_files`` or
        ``max_bytes``.
    """
    files, hidden = _not_code(files)
    names = {f"{m}.py" for m in modules}
    root, needed, why = _root(files, names, is_stub)
    notes = [why] if why else []
    where = f"{root.as_posix()}/" if root != TOP else "the submission's top folder"
    outside = sorted({_entry_outside(f.path, root) for f in files if root not in f.path.parents})
    if outside:
        notes.append(f"left out {_listed(outside)}: outside {where}, the folder graded")
    if hidden:
        notes.append(
            f"left out {_listed(sorted(hidden))}: not code to grade (a hidden folder, a cache or a "
            "Python environment)"
        )
    mine = [f for f in files if root in f.path.parents]
    required = [f for f in mine if f.path.parent == root and f.path.name in needed]
    size = sum(f.size for f in required)
    if len(required) > max_files:
        raise StudentError(
            "too_large",
            f"{len(required)} files to grade in {where}: {len(required) - max_files} "
            f"over the limit of {max_files} files",
        )
    if size > max_bytes:
        raise StudentError(
            "too_large",
            f"the modules in {where} take {_mib(size)}: {_mib(size - max_bytes)} over "
            f"the limit of {_mib(max_bytes)} a submission may send to the grader",
        )
    taken, too_big, too_many = list(required), [], []
    for f in sorted(set(mine) - set(required), key=lambda f: (f.size, f.path)):
        if size + f.size > max_bytes:
            too_big.append(f)
        elif len(taken) >= max_files:
            too_many.append(f)
        else:
            taken.append(f)
            size += f.size
    inner = [
        f"{f.path.relative_to(root).as_posix()} ({_mib(f.size)})"
        for f in sorted(too_big, key=lambda f: f.path)
    ]
    if inner:
        notes.append(
            f"left out {_listed(inner)}: over the cap of {_mib(max_bytes)} on the files graded"
        )
    if too_many:
        notes.append(
            f"left out {_listed([f.path.relative_to(root).as_posix() for f in too_many])}: over "
            "the cap "
            f"of {max_files} files graded"
        )
    return Choice(root, tuple(sorted(f.path for f in taken)), tuple(notes))


def _entry_outside(path: PurePosixPath, root: PurePosixPath) -> str:
    """The entry that holds ``path``, beside the folders leading to ``root``: ``tests/`` for
    ``tests/public/x.py`` when ``exercises`` is graded, ``README.md`` for itself."""
    common = 0
    while (
        common < len(root.parts)
        and common < len(path.parts) - 1
        and path.parts[common] == root.parts[common]
    ):
        common += 1
    head = path.parts[: common + 1]
    return PurePosixPath(*head).as_posix() + ("/" if len(head) < len(path.parts) else "")


def _root(
    files: Sequence[File], modules: set[str], is_stub: Callable[[PurePosixPath], bool]
) -> tuple[PurePosixPath, set[str], str]:
    """The folder to grade; the names in it that must be taken (its modules, notebooks or .py
    files); and the note that says which folder was graded and why (empty for the top with nothing
    to choose from)."""
    found: dict[PurePosixPath, list[PurePosixPath]] = {}
    newest: dict[PurePosixPath, float] = {}
    for f in files:
        if f.path.name in modules:
            found.setdefault(f.path.parent, []).append(f.path)
            newest[f.path.parent] = max(newest.get(f.path.parent, 0.0), f.mtime)
    if found:
        # (one folder: nothing to rank, no module parsed)
        own = {
            folder: sum(not is_stub(p) for p in paths) if len(found) > 1 else 0
            for folder, paths in found.items()
        }
        ranked = sorted(
            found, key=lambda d: (-own[d], -len(found[d]), -newest[d], len(d.parts), d.as_posix())
        )
        root, others = ranked[0], ranked[1:]
        why = f"graded the course's modules in {_where(root)}"
        if others:
            why += (
                f", not those in {_listed([_where(d) for d in others])}: "
                f"{_reason(root, others[0], found, own, newest)}"
            )
        return root, {p.name for p in found[root]}, why if root != TOP or others else ""
    for suffix, kind in ((".ipynb", "notebooks"), (".py", ".py files")):
        folders = {f.path.parent for f in files if f.path.suffix == suffix}
        if folders:
            root = min(folders, key=lambda d: (len(d.parts), d.as_posix()))
            why = f"graded the {kind} in {_where(root)}" if root != TOP else ""
            return (
                root,
                {f.path.name for f in files if f.path.parent == root and f.path.suffix == suffix},
                why,
            )
    return TOP, set(), ""


def _where(folder: PurePosixPath) -> str:
    return "the top folder" if folder == TOP else f"{folder.as_posix()}/"


def _reason(
    root: PurePosixPath,
    runner_up: PurePosixPath,
    found: Mapping[PurePosixPath, list],
    own: Mapping[PurePosixPath, int],
    newest: Mapping[PurePosixPath, float],
) -> str:
    """Why ``root`` was graded rather than ``runner_up``, in the order :func:`_root` ranks them."""
    stubs = any(own[d] < len(found[d]) for d in found)
    if stubs and own[root] > own[runner_up]:
        return (
            "the others are the released stubs"
            if not own[runner_up]
            else "it holds the most modules changed from the released stubs"
        )
    if len(found[root]) > len(found[runner_up]):
        return "it holds the most of them"
    if newest[root] > newest[runner_up]:
        return "its modules were changed last"
    return (
        "it is the nearest the top"
        if len(root.parts) < len(runner_up.parts)
        else "it comes first by name"
    )


def in_folder(folder: Path, functions: Mapping[str, str]) -> Choice:
    """:func:`choose` for a student's folder. ``functions``: each exercise function -> its
    module."""

    def read(path: PurePosixPath, limit: int) -> bytes:
        flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)  # bytes as
        with os.fdopen(os.open(folder / path, flags), "rb") as f:  # written (Windows)
            return f.read(limit)

    return choose(
        folder_files(folder), sorted(set(functions.values())), stub_check(functions, read)
    )


def in_zip(archive: Path, functions: Mapping[str, str]) -> Choice:
    """:func:`choose` for a student's zip, from its listing (and its modules' source, for
    :func:`untouched`).

    :raises StudentError: ``bad_zip`` when it is not a readable zip.
    """
    try:
        with zipfile.ZipFile(archive) as zf:
            entries = regular_entries(zf)

            def read(path: PurePosixPath, limit: int) -> bytes:
                with zf.open(entries[path]) as f:
                    return f.read(limit)

            return choose(
                zip_files(zf), sorted(set(functions.values())), stub_check(functions, read)
            )
    except (
        zipfile.BadZipFile,
        zipfile.LargeZipFile,
        NotImplementedError,
        EOFError,
        OSError,
        ValueError,
    ) as err:
        raise StudentError("bad_zip", f"{archive.name}: not a readable zip ({err})") from None


def folder_files(folder: Path) -> list[File]:
    """The regular files under ``folder`` (links are never followed), without descending into hidden
    folders."""
    found = []
    for here, dirs, names in os.walk(folder, followlinks=False):
        rel = PurePosixPath(Path(here).relative_to(folder).as_posix())
        dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(here, d))]
        skipped = [d for d in dirs if d.startswith(".") or d in JUNK or d in NOT_CODE]
        # Not walked (a .git, a .venv): one stand-in entry each, so that the note can name them.
        found += [File(rel / d / "...", 0) for d in skipped]
        dirs[:] = [d for d in dirs if d not in skipped]
        for name in names:
            try:
                info = os.lstat(os.path.join(here, name))
            except OSError:
                continue
            if stat.S_ISREG(info.st_mode):
                found.append(File(rel / name, info.st_size, info.st_mtime))
    return found


def regular_entries(archive: zipfile.ZipFile) -> dict[PurePosixPath, zipfile.ZipInfo]:
    """The zip's regular files by their safe relative names, the first of each name, as
    :func:`grader.intake.safezip.extract` unpacks them (unsafe names, links and special files are
    its to note)."""
    found: dict[PurePosixPath, zipfile.ZipInfo] = {}
    for info in archive.infolist():
        rel = safe_name(info.filename)
        mode = info.external_attr >> 16
        if (
            rel is None
            or info.is_dir()
            or stat.S_ISLNK(mode)
            or (mode and stat.S_IFMT(mode) and not stat.S_ISREG(mode))
            or rel in found
        ):
            continue
        found[rel] = info
    return found


def zip_files(archive: zipfile.ZipFile) -> list[File]:
    """The regular files a zip lists (:func:`regular_entries`), with the sizes and dates it claims.

    Sizes are the zip's claims: :func:`grader.intake.safezip.extract` never writes more than an
    entry claims.
    """
    return [
        File(rel, info.file_size, _zip_time(info)) for rel, info in regular_entries(archive).items()
    ]


def _zip_time(info: zipfile.ZipInfo) -> float:
    try:
        return datetime(*info.date_time).timestamp()
    except (ValueError, OverflowError):  # a date the zip made up (month 0)
        return 0.0


MAX_PARSED = (
    1 << 20
)  # bytes of a module read to tell whether it is a stub; a larger one is an attempt


def stub_check(
    functions: Mapping[str, str], read: Callable[[PurePosixPath, int], bytes]
) -> Callable[[PurePosixPath], bool]:
    """``is_stub`` for :func:`choose`: the module at that path is
    :func:`~grader.intake.stubs.untouched`."""

    def is_stub(path: PurePosixPath) -> bool:
        try:
            source = read(path, MAX_PARSED + 1)
        except (OSError, zipfile.BadZipFile, RuntimeError, ValueError, EOFError):
            return False
        own = [f for f, m in functions.items() if f"{m}.py" == path.name]
        return len(source) <= MAX_PARSED and untouched(source, own)

    return is_stub
