"""Unpack a student's zip (untrusted) into a fresh folder, refusing what could escape or explode.

Entries with an absolute path, a drive letter, a ``..`` component or a symlink mode are left out,
and so are macOS resource forks; the number of files and the bytes actually written are capped (a
zip's own sizes are not trusted). Nothing is executed, and no file is written outside the
destination.
"""

from __future__ import annotations

import os
import stat
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Collection

from grader.errors import StudentError

MAX_FILES = 200
MAX_BYTES = 50 << 20
CHUNK = 1 << 16


@dataclass(frozen=True)
class Unzipped:
    """What :func:`extract` wrote: the destination folder and one note per entry it left out."""

    folder: Path
    notes: tuple[str, ...]


def safe_name(name: str) -> PurePosixPath | None:
    """The entry's relative path, or None when it is absolute, has a drive or climbs out with
    ``..``."""
    name = name.replace("\\", "/")
    if not name or name.startswith("/") or (len(name) > 1 and name[1] == ":") or "\x00" in name:
        return None
    parts = [p for p in PurePosixPath(name).parts if p not in ("", ".")]
    if not parts or ".." in parts:
        return None
    return PurePosixPath(*parts)


def extract(
    archive: Path,
    dest: Path,
    *,
    max_files: int = MAX_FILES,
    max_bytes: int = MAX_BYTES,
    only: Collection[PurePosixPath] | None = None,
) -> Unzipped:
    """Unpack ``archive`` into ``dest`` (created; must not exist).

    :param max_files: regular files written at most.
    :param max_bytes: bytes written at most, counted while decompressing.
    :param only: unpack only the entries with these (safe) names (:mod:`grader.intake.files` chose
        them); the rest is not even counted.
    :returns: the folder and notes on the entries left out (unsafe paths, symlinks, duplicates).
    :raises StudentError: ``bad_zip`` when the file is not a readable zip, is encrypted, or breaks a
        cap; whatever was unpacked so far is then left in ``dest`` for the caller to delete.
    """
    dest.mkdir(parents=True)
    root = dest.resolve()
    notes: list[str] = []
    files = written = 0
    graded = {p.parent for p in only or ()}
    try:
        with zipfile.ZipFile(archive) as zf:
            for info in zf.infolist():
                rel = safe_name(info.filename)
                mode = info.external_attr >> 16
                if rel is None:
                    notes.append(
                        f"{archive.name}: left out {info.filename!r} (absolute path or '..')"
                    )
                    continue
                if rel.parts[0] == "__MACOSX" or rel.name.startswith("._") or info.is_dir():
                    continue
                if stat.S_ISLNK(mode) or (mode and not stat.S_ISREG(mode) and stat.S_IFMT(mode)):
                    if (
                        only is None or rel.parent in graded
                    ):  # not the links of a .venv left out anyway
                        notes.append(
                            f"{archive.name}: left out {info.filename!r} (a link or special file)"
                        )
                    continue
                if only is not None and rel not in only:
                    continue
                if info.flag_bits & 0x1:
                    raise StudentError("bad_zip", f"{archive.name}: {info.filename!r} is encrypted")
                files += 1
                if files > max_files:
                    raise StudentError("bad_zip", f"{archive.name}: more than {max_files} files")
                target = root.joinpath(*rel.parts)
                if root not in target.parents:
                    notes.append(f"{archive.name}: left out {info.filename!r} (outside the folder)")
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                try:
                    # O_BINARY: Windows' C runtime would write each LF as CR LF
                    fd = os.open(
                        target,
                        os.O_WRONLY
                        | os.O_CREAT
                        | os.O_EXCL
                        | getattr(os, "O_NOFOLLOW", 0)
                        | getattr(os, "O_BINARY", 0),
                        0o644,
                    )
                except FileExistsError:
                    notes.append(f"{archive.name}: left out a second {info.filename!r}")
                    continue
                with os.fdopen(fd, "wb") as out, zf.open(info) as src:
                    while chunk := src.read(CHUNK):
                        written += len(chunk)
                        if written > max_bytes:
                            raise StudentError(
                                "bad_zip",
                                f"{archive.name}: more than {max_bytes >> 20} MiB when unpacked",
                            )
                        out.write(chunk)
    except (
        zipfile.BadZipFile,
        zipfile.LargeZipFile,
        NotImplementedError,
        RuntimeError,
        EOFError,
        OSError,
        ValueError,
    ) as err:
        raise StudentError("bad_zip", f"{archive.name}: not a readable zip ({err})") from None
    return Unzipped(dest, tuple(notes))
