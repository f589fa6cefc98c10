"""One ``grade autograde`` at a time per output folder: an flock on ``OUT/.grade-lock`` for the
whole run.

Two runs into one ``--out`` used to destroy each other's working copies (``OUT/.grading``) and score
files (355 of 400 files became 0/100). The lock is taken before anything in ``--out`` is touched; a
second run says who holds it and stops. The kernel frees an flock when its process dies (even by
SIGKILL), so a crashed run never leaves a stale lock, only a stale owner note, which the next holder
overwrites.

Who holds it (pid, host, since when) is written to ``OUT/.grade-lock.owner``, beside the lock, not
into it: filelock 3.x opens its lock file with O_TRUNC on every attempt, so a waiting run would
erase a note kept in the lock file itself.
"""

from __future__ import annotations

import json
import os
import socket
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterator

from grader.errors import GradeError

LOCK_NAME = ".grade-lock"
OWNER_NAME = ".grade-lock.owner"


def _holder(out_dir: Path) -> str:
    """What the owner note says about the run holding the lock, in words."""
    try:
        note = json.loads((out_dir / OWNER_NAME).read_text(encoding="utf-8"))
        return f"pid {int(note['pid'])} on {note['host']}, since {note['since']}"
    except (OSError, ValueError, KeyError, TypeError):
        return "a process that has not said who it is yet"


@contextmanager
def hold(out_dir: Path) -> Iterator[None]:
    """Hold ``out_dir``'s lock for the ``with`` block (creating ``out_dir`` if needed, nothing else
    in it).

    :raises GradeError: another process holds it: one line with its pid, host and start time.
    """
    from filelock import FileLock, Timeout

    from grader.report import write_atomic

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(out_dir / LOCK_NAME))
    try:
        lock.acquire(timeout=0)
    except Timeout:
        raise GradeError(
            f"{out_dir}: another grade autograde is writing there ({_holder(out_dir)}): wait for "
            "it "
            "to finish, or choose another --out"
        ) from None
    try:
        note = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "since": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        }
        write_atomic(out_dir / OWNER_NAME, json.dumps(note) + "\n")
        yield
    finally:
        try:
            (out_dir / OWNER_NAME).unlink(missing_ok=True)
        finally:
            lock.release()
