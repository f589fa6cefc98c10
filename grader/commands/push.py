"""``grade push canvas|lti``: send the trusted score files of one folder to a live LMS.

The folder is read and checked exactly as ``grade export`` checks it
(:func:`grader.commands.export.read_folder`): a grader error, a broken signature, a stale file is
never sent; neither is a blank submission (nothing differs from the stub: the instructor decides),
a student without a score file, one not in the roster, or one without an LMS id. Without ``--yes``
nothing is sent and no credentials are read: it prints what it would post.

The report lists each student once: posted, unchanged (the LMS already has it), kept (the LMS's
grade is left as it is: excused, or changed there by hand since the last push), failed (the LMS
refused it, or answered so that it is not known to have it), not tried (the push stopped: the LMS
looked down, throttled or hung, or redirected a request to another host; one ``stopped:`` line
says so, and running the command again continues), or left out (grader error, refused, missing,
skipped). The exit status is 0 only when every grade sent went through (or was already there, or
kept). What went through is kept in the push ledger, ``OUT/.grade-push``
(:mod:`grader.lms.push.ledger`).
"""

from __future__ import annotations

import json
import os
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Mapping

import click

from grader.commands.export import Folder, read_folder
from grader.course.manifest import CourseFile
from grader.errors import ExitStatus, GradeError
from grader.lms import credentials
from grader.lms.exporters.common import Row, points_2
from grader.lms.push.answers import one_line
from grader.lms.push.common import (
    FAILED,
    KEPT,
    NOT_TRIED,
    POSTED,
    UNCHANGED,
    Backoff,
    Outcome,
    comment,
)
from grader.lms.push.ledger import NAME as LEDGER
from grader.lms.push.ledger import Ledger

SHOWN = 8  # students named in one line (pages missing), the rest counted


def _left_out(folder: Folder) -> tuple[list[Row], list[str]]:
    """The rows to send, and a line for every student left out (printed apart, grader errors
    first)."""
    errors = [
        line
        for line in folder.refused
        if any(line.startswith(f"{s} (") for s in folder.grader_errors)
    ]
    lines = [f"grader error (not the student's grade, not pushed): {line}" for line in errors]
    lines += [f"refused: {line}" for line in folder.refused if line not in errors]
    lines += [f"missing: {line}" for line in folder.missing]
    rows = []
    for row in folder.rows:
        if row.doc.get("blank"):
            lines.append(
                f"skipped: {row.student}: a blank submission (no function differs from "
                "the stub): not pushed; grade it by hand if it is one"
            )
        elif not row.person.lms_id:
            lines.append(f"skipped: {row.student}: no lms_id in the roster (the LMS user id)")
        else:
            rows.append(row)
    return rows, lines


def _dry_status(left_out: list[str], allow_missing: bool) -> int:
    """A dry run exits as the push would, but for the LMS's answers: 1 when students are left
    out."""
    return ExitStatus.FAILED if left_out and not allow_missing else ExitStatus.OK


def _report(
    outcomes: list[Outcome], left_out: list[str], where: str, allow_missing: bool, scores_dir: Path
) -> int:
    """Every student sent once, in order, then those left out, the one line saying why the push
    stopped (when it did), then the counts; the exit status (1 unless every grade went through,
    is already there or was kept)."""
    for outcome in outcomes:  # one line each, whatever the LMS's text in it
        click.echo(
            f"{outcome.status}: {outcome.student}: {one_line(outcome.detail)}",
            err=outcome.status in (FAILED, NOT_TRIED),
        )
    for line in left_out:
        click.echo(line, err=True)
    counts = {
        s: sum(o.status == s for o in outcomes)
        for s in (POSTED, UNCHANGED, KEPT, FAILED, NOT_TRIED)
    }
    stopped = [o for o in outcomes if o.status == NOT_TRIED]
    if stopped:
        click.echo(
            f"stopped: {one_line(stopped[0].detail)}; {len(stopped)} student(s) not tried:"
            f" run the same command again to continue (what went through is in "
            f"{scores_dir / LEDGER} and in the LMS, and is not sent again)",
            err=True,
        )
    kept = f", {counts[KEPT]} kept" if counts[KEPT] else ""
    not_tried = f", {counts[NOT_TRIED]} not tried (the push stopped)" if stopped else ""
    click.echo(
        f"{where}: {counts[POSTED]} posted, {counts[UNCHANGED]} unchanged{kept}, "
        f"{counts[FAILED]} failed{not_tried}, {len(left_out)} left out"
    )
    if counts[FAILED] or counts[NOT_TRIED] or (left_out and not allow_missing):
        return ExitStatus.FAILED
    return ExitStatus.OK


def main(
    *,
    lms: str,
    scores_dir: Path,
    roster: Path,
    course_path: CourseFile,
    yes: bool,
    config: Path | None,
    late_by_lms: bool = False,
    allow_stale: bool = False,
    allow_missing: bool = False,
    course_id: str | None = None,
    assignment_id: str | None = None,
    lineitem: str | None = None,
    backoff: Backoff = Backoff(),
    env: Mapping[str, str] = os.environ,
    now: datetime | None = None,
    attach_pages: bool = False,
    overwrite_lms_grades: bool = False,
    bulk: bool | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> int:
    """Push one score folder to ``lms`` (``canvas`` or ``lti``); the exit status.

    :param attach_pages: Canvas: each student's feedback page (``<student>.html`` beside the score
        files) goes with the comment, as a file.
    :param overwrite_lms_grades: Canvas: post over a grade changed in Canvas by hand.
    :param bulk: Canvas: grades in update_grades jobs (None: for a class, from
        :data:`grader.lms.push.canvas.BULK_FROM` students to post).
    :param clock: LTI: seconds, to renew a token before it expires.
    :raises GradeError: bad input (score files, roster, course, options, credentials), or the LMS
        cannot be reached or refuses the credentials, before anything is posted.
    """
    folder = read_folder(scores_dir, roster, course_path, late_by_lms, allow_stale)
    rows, left_out = _left_out(folder)
    course_dir = Path(course_path.path).resolve().parent
    if lms == "canvas":
        return _canvas(
            folder,
            rows,
            left_out,
            course_dir,
            Path(scores_dir),
            yes=yes,
            config=config,
            late_by_lms=late_by_lms,
            allow_missing=allow_missing,
            course_id=course_id,
            assignment_id=assignment_id,
            backoff=backoff,
            env=env,
            attach_pages=attach_pages,
            overwrite=overwrite_lms_grades,
            bulk=bulk,
        )
    if lms == "lti":
        if attach_pages or overwrite_lms_grades or bulk is not None:
            raise GradeError(
                "--attach-pages, --overwrite-lms-grades and --bulk are Canvas's (an "
                "AGS score carries no file, and a platform's own grade is not "
                "readable with the score scope)"
            )
        return _lti(
            folder,
            rows,
            left_out,
            course_dir,
            Path(scores_dir),
            yes=yes,
            config=config,
            late_by_lms=late_by_lms,
            allow_missing=allow_missing,
            lineitem=lineitem,
            backoff=backoff,
            env=env,
            now=now or datetime.now(timezone.utc),
            clock=clock,
        )
    raise GradeError(f"unknown LMS {lms!r} (known: canvas, lti)")


def _pages(rows: list[Row], scores_dir: Path) -> dict[str, Path]:
    """Each student's feedback page, ``<student>.html`` beside their score file.

    :raises GradeError: a page is missing, or is another grading's than the score file's (its
        "Graded ..." line names another time), before anything is sent.
    """
    pages, missing, stale = {}, [], []
    for row in rows:
        page = scores_dir / f"{row.student}.html"
        try:
            text = page.read_text(encoding="utf-8", errors="replace")
        except OSError:
            missing.append(row.student)
            continue
        if row.doc["graded_at"] not in text:  # the page says when it was graded
            stale.append(row.student)
            continue
        pages[row.student] = page

    def some(names: list[str]) -> str:
        more = f" and {len(names) - SHOWN} more" if len(names) > SHOWN else ""
        return ", ".join(names[:SHOWN]) + more

    if missing or stale:
        why = "; ".join(
            part
            for part in (
                f"no feedback page for {some(missing)}" if missing else "",
                f"a page of another grading than the score file for {some(stale)}" if stale else "",
            )
            if part
        )
        raise GradeError(
            f"--attach-pages: {why} ({scores_dir}/<student>.html, written by grade "
            "autograde --html: run it again with --html): nothing was posted"
        )
    return pages


def _canvas(
    folder: Folder,
    rows: list[Row],
    left_out: list[str],
    course_dir: Path,
    scores_dir: Path,
    *,
    yes: bool,
    config: Path | None,
    late_by_lms: bool,
    allow_missing: bool,
    course_id: str | None,
    assignment_id: str | None,
    backoff: Backoff,
    env: Mapping[str, str],
    attach_pages: bool,
    overwrite: bool,
    bulk: bool | None,
) -> int:
    from grader.lms.push import canvas

    assignment_id = assignment_id or folder.assignment.lms.canvas_assignment_id
    if not assignment_id:
        raise GradeError(
            "course.json: field 'lms.canvas_assignment_id': needed for canvas (or "
            "pass --assignment-id; it is the number in the assignment's URL)"
        )
    if not course_id or not course_id.isdigit():
        raise GradeError(
            f"--course-id: the Canvas course id (digits, the number in the course's "
            f"URL), got {course_id!r}"
        )
    pages = _pages(rows, scores_dir) if attach_pages else {}
    hidden = folder.assignment.release_hidden_details
    posts = [
        canvas.Post(
            r.student,
            r.person.lms_id,
            r.score,
            comment(r.doc, r.score, hidden, late_by_lms),
            pages.get(r.student),
        )
        for r in rows
    ]
    where = f"Canvas course {course_id}, assignment {assignment_id}"
    if not yes:
        for post in posts:
            page = f" (with the page {post.page.name} attached)" if post.page else ""
            click.echo(
                f"would post: {post.student} (user {post.user_id}): grade "
                f"{points_2(post.score)}, comment{page}:"
            )
            click.echo("".join(f"    {line}\n" for line in post.comment.splitlines()), nl=False)
        for line in left_out:
            click.echo(line, err=True)
        click.echo(
            f"dry run, nothing posted: {len(posts)} student(s) to {where}, "
            f"{len(left_out)} left out; --yes posts each grade and comment Canvas does not "
            "already have (a grade changed in Canvas by hand, or excused, is kept)"
        )
        return _dry_status(left_out, allow_missing)
    creds = credentials.canvas(config, course_dir, env)
    ledger = Ledger.open(
        scores_dir, f"canvas {creds.url} course {course_id} assignment {assignment_id}"
    )
    if ledger.warning:
        click.echo(f"warning: {ledger.warning}", err=True)
    max_score = max((r.doc["max_score"] for r in rows), default=0.0)
    outcomes = (
        canvas.push(
            posts,
            creds,
            course_id,
            assignment_id,
            max_score,
            backoff,
            ledger=ledger,
            overwrite=overwrite,
            bulk=bulk,
        )
        if posts
        else []
    )
    return _report(outcomes, left_out, where, allow_missing, scores_dir)


def _lti(
    folder: Folder,
    rows: list[Row],
    left_out: list[str],
    course_dir: Path,
    scores_dir: Path,
    *,
    yes: bool,
    config: Path | None,
    late_by_lms: bool,
    allow_missing: bool,
    lineitem: str | None,
    backoff: Backoff,
    env: Mapping[str, str],
    now: datetime,
    clock: Callable[[], float],
) -> int:
    from grader.lms.exporters.lti import score_objects
    from grader.lms.push import lti

    credentials.https_url(lineitem or "", "--lineitem", "lineitem")
    # the objects grade export writes, their comment the one every push writes (diagnoses in it)
    objects, written = score_objects(
        rows, now, late_by_lms=late_by_lms, release_hidden=folder.assignment.release_hidden_details
    )
    left_out = left_out + [f"skipped: {line}" for line in written.unkeyed]
    ledger = Ledger.open(scores_dir, f"lti {lineitem}")
    if ledger.warning:
        click.echo(f"warning: {ledger.warning}", err=True)
    send, unchanged = lti.plan(objects, ledger, now)
    where = f"LTI line item {lineitem}"
    if not yes:
        for student, obj in send:
            click.echo(f"would post: {student}: {json.dumps(obj, ensure_ascii=False)}")
        for outcome in unchanged:
            click.echo(f"{outcome.status}: {outcome.student}: {outcome.detail}")
        for line in left_out:
            click.echo(line, err=True)
        click.echo(
            f"dry run, nothing posted: {len(send)} score(s) to the scores of {where}, "
            f"{len(unchanged)} unchanged, {len(left_out)} left out; --yes posts them"
        )
        return _dry_status(left_out, allow_missing)
    creds = credentials.lti(config, course_dir, env)
    outcomes = lti.push(send, creds, lineitem, backoff, ledger=ledger, clock=clock) if send else []
    order = {student: i for i, (student, _) in enumerate(objects)}
    outcomes = sorted(outcomes + unchanged, key=lambda o: order[o.student])
    return _report(outcomes, left_out, where, allow_missing, scores_dir)
