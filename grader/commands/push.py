"""``grade push canvas|lti``: send the trusted score files of one folder to a live LMS.

The folder is read and checked exactly as ``grade export`` checks it (:func:`grader.commands.export.read_folder`):
a grader error, a broken signature, a stale file is never sent; neither is a blank submission (nothing differs
from the stub: the instructor decides), a student without a score file, one not in the roster, or one without
an LMS id. Without ``--yes`` nothing is sent and no credentials are read: it prints what it would
post.

The report lists each student once: posted, unchanged (the LMS already has it), failed (the LMS
refused it, or answered so that it is not known to have it), not tried (the push stopped: the LMS
looked down, or redirected a request to another host), or left out (grader error, refused, missing,
skipped). The exit status is 0 only when every grade sent went through (or was already there).
"""
from __future__ import annotations

import json
import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Mapping

import click

from grader.course.manifest import CourseFile
from grader.errors import ExitStatus, GradeError
from grader.commands.export import Folder, read_folder
from grader.lms import credentials
from grader.lms.exporters.common import Row, points_2
from grader.lms.push.common import (FAILED, NOT_TRIED, POSTED, UNCHANGED, Backoff, Outcome, comment,
                                    one_line)


def _left_out(folder: Folder) -> tuple[list[Row], list[str]]:
    """The rows to send, and a line for every student left out (printed apart, grader errors first)."""
    errors = [line for line in folder.refused if any(line.startswith(f"{s} (") for s in folder.grader_errors)]
    lines = [f"grader error (not the student's grade, not pushed): {line}" for line in errors]
    lines += [f"refused: {line}" for line in folder.refused if line not in errors]
    lines += [f"missing: {line}" for line in folder.missing]
    rows = []
    for row in folder.rows:
        if row.doc.get("blank"):
            lines.append(f"skipped: {row.student}: a blank submission (no function differs from the stub): "
                         "not pushed; grade it by hand if it is one")
        elif not row.person.lms_id:
            lines.append(f"skipped: {row.student}: no lms_id in the roster (the LMS user id)")
        else:
            rows.append(row)
    return rows, lines


def _dry_status(left_out: list[str], allow_missing: bool) -> int:
    """A dry run exits as the push would, but for the LMS's answers: 1 when students are left out."""
    return ExitStatus.FAILED if left_out and not allow_missing else ExitStatus.OK


def _report(outcomes: list[Outcome], left_out: list[str], where: str, allow_missing: bool) -> int:
    """Every student sent once, in order, then those left out, then the counts; the exit status
    (1 unless every grade went through, or is already there)."""
    for outcome in outcomes:            # one line each, whatever the LMS's text in it
        click.echo(f"{outcome.status}: {outcome.student}: {one_line(outcome.detail)}",
                   err=outcome.status in (FAILED, NOT_TRIED))
    for line in left_out:
        click.echo(line, err=True)
    counts = {s: sum(o.status == s for o in outcomes)
              for s in (POSTED, UNCHANGED, FAILED, NOT_TRIED)}
    stopped = f", {counts[NOT_TRIED]} not tried (the push stopped)" if counts[NOT_TRIED] else ""
    click.echo(f"{where}: {counts[POSTED]} posted, {counts[UNCHANGED]} unchanged, "
               f"{counts[FAILED]} failed{stopped}, {len(left_out)} left out")
    if counts[FAILED] or counts[NOT_TRIED] or (left_out and not allow_missing):
        return ExitStatus.FAILED
    return ExitStatus.OK


def main(*, lms: str, scores_dir: Path, roster: Path, course_path: CourseFile, yes: bool, config: Path | None,
         late_by_lms: bool = False, allow_stale: bool = False, allow_missing: bool = False,
         course_id: str | None = None, assignment_id: str | None = None, lineitem: str | None = None,
         backoff: Backoff = Backoff(), env: Mapping[str, str] = os.environ, now: datetime | None = None) -> int:
    """Push one score folder to ``lms`` (``canvas`` or ``lti``); the exit status.

    :raises GradeError: bad input (score files, roster, course, options, credentials), or the LMS cannot be
        reached or refuses the credentials, before anything is posted.
    """
    folder = read_folder(scores_dir, roster, course_path, late_by_lms, allow_stale)
    rows, left_out = _left_out(folder)
    course_dir = Path(course_path.path).resolve().parent
    if lms == "canvas":
        return _canvas(folder, rows, left_out, course_dir, yes=yes, config=config, late_by_lms=late_by_lms,
                       allow_missing=allow_missing, course_id=course_id, assignment_id=assignment_id,
                       backoff=backoff, env=env)
    if lms == "lti":
        return _lti(rows, left_out, course_dir, yes=yes, config=config, allow_missing=allow_missing,
                    lineitem=lineitem, backoff=backoff, env=env, now=now or datetime.now(timezone.utc))
    raise GradeError(f"unknown LMS {lms!r} (known: canvas, lti)")


def _canvas(folder: Folder, rows: list[Row], left_out: list[str], course_dir: Path, *, yes: bool,
            config: Path | None, late_by_lms: bool, allow_missing: bool, course_id: str | None,
            assignment_id: str | None, backoff: Backoff, env: Mapping[str, str]) -> int:
    from grader.lms.push import canvas

    assignment_id = assignment_id or folder.assignment.lms.canvas_assignment_id
    if not assignment_id:
        raise GradeError("course.json: field 'lms.canvas_assignment_id': needed for canvas (or pass "
                         "--assignment-id; it is the number in the assignment's URL)")
    if not course_id or not course_id.isdigit():
        raise GradeError(f"--course-id: the Canvas course id (digits, the number in the course's URL), "
                         f"got {course_id!r}")
    hidden = folder.assignment.release_hidden_details
    posts = [canvas.Post(r.student, r.person.lms_id, r.score, comment(r.doc, r.score, hidden, late_by_lms))
             for r in rows]
    where = f"Canvas course {course_id}, assignment {assignment_id}"
    if not yes:
        for post in posts:
            click.echo(f"would post: {post.student} (user {post.user_id}): grade {points_2(post.score)}, comment:")
            click.echo("".join(f"    {line}\n" for line in post.comment.splitlines()), nl=False)
        for line in left_out:
            click.echo(line, err=True)
        click.echo(f"dry run, nothing posted: {len(posts)} student(s) to {where}, {len(left_out)} left out; "
                   "--yes posts each grade and comment Canvas does not already have")
        return _dry_status(left_out, allow_missing)
    creds = credentials.canvas(config, course_dir, env)
    max_score = max((r.doc["max_score"] for r in rows), default=0.0)
    outcomes = canvas.push(posts, creds, course_id, assignment_id, max_score, backoff) if posts else []
    return _report(outcomes, left_out, where, allow_missing)


def _lti(rows: list[Row], left_out: list[str], course_dir: Path, *, yes: bool, config: Path | None,
         allow_missing: bool, lineitem: str | None, backoff: Backoff, env: Mapping[str, str], now: datetime) -> int:
    from grader.lms.exporters.lti import score_objects
    from grader.lms.push import lti

    credentials.https_url(lineitem or "", "--lineitem", "lineitem")
    objects, written = score_objects(rows, now)
    left_out = left_out + [f"skipped: {line}" for line in written.unkeyed]
    where = f"LTI line item {lineitem}"
    if not yes:
        for student, obj in objects:
            click.echo(f"would post: {student}: {json.dumps(obj, ensure_ascii=False)}")
        for line in left_out:
            click.echo(line, err=True)
        click.echo(f"dry run, nothing posted: {len(objects)} score(s) to the scores of {where}, "
                   f"{len(left_out)} left out; --yes posts them")
        return _dry_status(left_out, allow_missing)
    creds = credentials.lti(config, course_dir, env)
    outcomes = lti.push(objects, creds, lineitem, backoff) if objects else []
    return _report(outcomes, left_out, where, allow_missing)
