"""A GitHub Classroom clone folder (the Classroom Assistant's, or ``gh classroom clone
student-repos``): one git clone per student, named ``<assignment prefix>-<GitHub username>``.

Such a folder already grades as it is (``grade autograde CLONES``: each clone is a student folder,
its ``.git/`` left out), with the folder's name as the student id. ``grade collect github`` names
each by the roster's ``student`` instead (the username is the roster's ``github`` column, else its
``login``), copies the work tree without ``.git/``, and with ``--commit-time`` keeps the time of the
commit graded (HEAD's committer date) for the late policy. That time is the student's clock: git
writes whatever date the student's machine (or ``GIT_COMMITTER_DATE``) says, and GitHub Classroom's
deadline uses push times instead; use it only where that is acceptable, and say so to the class."""

from __future__ import annotations

import shutil
import subprocess
from datetime import datetime
from pathlib import Path

from grader.course.late import parse_iso
from grader.lms.downloads.common import Handin, Options, Read, Who, split_known

GIT_TIMEOUT = (
    30.0  # seconds for one `git log`: a clone on a hung network share fails its student only
)


def commit_time(clone: Path) -> datetime | None:
    """HEAD's committer date, or None (not a clone, no commit, no git). The config that could run a
    program on ``git log`` (a signature check's gpg, a pager) is turned off on the command line;
    hooks never run on ``log``, and a clone's ``.git/config`` is the instructor's own (git never
    clones one)."""
    git = shutil.which("git")
    if git is None or not (clone / ".git").exists():
        return None
    try:
        done = subprocess.run(
            [
                git,
                "-c",
                "log.showSignature=false",
                "-c",
                f"safe.directory={clone}",
                "--no-pager",
                "log",
                "-1",
                "--format=%cI",
                "HEAD",
            ],
            cwd=clone,
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT,
        )
        return (
            parse_iso(done.stdout.strip()) if done.returncode == 0 and done.stdout.strip() else None
        )
    except (OSError, subprocess.TimeoutExpired, ValueError):
        return None


def read(root: Path, options: Options, handles: tuple[str, ...] = ()) -> Read:
    """One hand-in per clone folder; ``handles``: the roster's GitHub usernames (to tell a username
    with ``-`` in it from the assignment's prefix)."""
    found = Read(
        times="the graded commit's (HEAD's committer date: the student's clock)"
        if options.commit_time
        else "none (--commit-time takes the graded commit's)"
    )
    for clone in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")):
        if clone.is_symlink():
            found.unread.append(f"{clone.name}: a link, not read")
            continue
        split = split_known(clone.name.replace("-", "_"), [h.replace("-", "_") for h in handles])
        handle = clone.name[-len(split[1]) :] if split else clone.name.rsplit("-", 1)[-1]
        files = [
            (p, p.relative_to(clone).as_posix())
            for p in sorted(clone.rglob("*"))
            if p.is_file() and not p.is_symlink() and ".git" not in p.relative_to(clone).parts
        ]
        when = commit_time(clone) if options.commit_time else None
        handin = Handin(
            (Who(f"{handle} (GitHub)", github=handle),),
            files,
            submitted_at=when,
            source=clone.name,
            timestamp="missing" if options.commit_time and when is None else "",
        )
        if when is not None:
            handin.notes.append(
                "submission time: the graded commit's committer date (the student's clock)"
            )
        found.handins.append(handin)
    return found
