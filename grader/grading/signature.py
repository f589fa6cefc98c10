"""Score-file signatures: the course's secret key, and HMAC-SHA256 over a score document.

``grade autograde`` signs every score file it writes; ``grade export`` and the autograde cache trust
a file only when its signature verifies, so a score edited by hand (50 -> 100) is never exported or
kept. The key is 32 random bytes in ``.grade-key`` beside course.json: instructors only (never in
``--out``, the student release or the Gradescope zip), created on first need, mode 0600.

The signed bytes are the canonical JSON of the document without its ``signature`` (sorted keys, no
spaces, UTF-8), so re-indenting a file or reordering its keys does not break it, and any change of a
value does.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import sys
from pathlib import Path

from grader.errors import GradeError

KEY_NAME = ".grade-key"
KEY_BYTES = 32
PREFIX = "hmac-sha256:"


def key_path(course_path: Path) -> Path:
    """Where the key of the course whose manifest is ``course_path`` lives: beside it."""
    return Path(course_path).resolve().parent / KEY_NAME


def load_key(course_path: Path, *, create: bool = False) -> bytes:
    """The course's key; with ``create``, made on first need (atomically: two runs racing get one
    key).

    :raises GradeError: one line naming the key file: absent (without ``create``), unreadable, the
        wrong size, or not creatable.
    """
    path = key_path(course_path)
    try:
        key = path.read_bytes()
    except FileNotFoundError:
        if not create:
            raise GradeError(
                f"{path}: not found: the score files' signatures cannot be checked without the "
                "key `grade autograde` made beside this course.json"
            ) from None
        key = _create(path)
    except OSError as err:
        raise GradeError(f"{path}: cannot read the grader's key: {err.strerror}") from None
    if len(key) != KEY_BYTES:
        raise GradeError(
            f"{path}: not a grader key ({len(key)} bytes, expected {KEY_BYTES}); remove it to make "
            "a new one (every score file is then regraded)"
        )
    _warn_if_shared(path)
    return key


_warned: set[Path] = set()


def _warn_if_shared(path: Path) -> None:
    """One line on stderr (once a process) when other users may read or write the key: whoever
    reads it can sign any score file, a 100 included. Said, not refused: the instructor decides (a
    course folder shared with co-teachers through a group is a choice)."""
    if os.name != "posix" or path in _warned:
        return
    try:
        mode = os.stat(path).st_mode & 0o777
    except OSError:
        return
    if mode & 0o077:
        _warned.add(path)
        print(
            f"warning: {path}: other users can read or write the grader's key (mode {mode:04o}): "
            f"whoever reads it can sign score files; chmod 600 {path}",
            file=sys.stderr,
        )


def _create(path: Path) -> bytes:
    """Write a new key to ``path`` unless one appears meanwhile; return the key that is there.

    The bytes go to a private temporary file first (O_EXCL, 0600), which is then hard-linked to
    ``path``: a link is exclusive and atomic, so no reader ever sees half a key and two runs never
    keep two.
    """
    key = secrets.token_bytes(KEY_BYTES)
    tmp = path.with_name(f"{KEY_NAME}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        fd = os.open(
            tmp,
            os.O_WRONLY
            | os.O_CREAT
            | os.O_EXCL
            | getattr(os, "O_NOFOLLOW", 0)
            | getattr(os, "O_BINARY", 0),
            0o600,
        )  # the key's bytes as they are (Windows)
        try:
            os.write(fd, key)
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.link(tmp, path)
        except FileExistsError:
            key = path.read_bytes()  # another run made it first: theirs is the key
    except OSError as err:
        raise GradeError(f"{path}: cannot create the grader's key: {err.strerror}") from None
    finally:
        tmp.unlink(missing_ok=True)
    return key


def canonical(doc: dict) -> bytes:
    """The bytes a signature covers: ``doc`` without ``signature``, as canonical JSON in UTF-8."""
    body = {k: v for k, v in doc.items() if k != "signature"}
    return json.dumps(
        body, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode("utf-8")


def _digest(doc: dict, key: bytes) -> str:
    return PREFIX + hmac.new(key, canonical(doc), hashlib.sha256).hexdigest()


def sign(doc: dict, key: bytes) -> dict:
    """A copy of ``doc`` with its ``signature`` (replacing any old one)."""
    return {**{k: v for k, v in doc.items() if k != "signature"}, "signature": _digest(doc, key)}


def verify(doc: dict, key: bytes) -> bool:
    """Whether ``doc`` carries a signature made with ``key`` over exactly its other fields."""
    claimed = doc.get("signature")
    if not isinstance(claimed, str):
        return False
    try:
        expected = _digest(doc, key)
    except (TypeError, ValueError):  # not JSON data (NaN, a set, lone surrogates...)
        return False
    return hmac.compare_digest(expected.encode(), claimed.encode("utf-8", "replace"))
