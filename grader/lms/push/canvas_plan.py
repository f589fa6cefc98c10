"""What one student's Canvas push sends, decided from what Canvas has and what the push ledger
says the last push posted (no request made here).

What Canvas has is not always the push's to replace: an excused submission is never graded (a
grade would end the excuse), and a grade that differs from the one the ledger says this push
posted last (or that no push recorded here posted) was set in Canvas by hand, by a TA: it is kept
and listed, unless ``overwrite``. The grade compared is ``entered_score``, the grade as posted
before Canvas's own late policy took its ``points_deducted`` off (``score`` alone would differ on
every late submission). A comment is sent unless one with the same text is there; a page, unless
that comment has it (and the ledger's digest of the page sent last is this page's).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path

from grader.lms.exporters.common import decimal_2, points_2
from grader.lms.push.answers import one_line
from grader.lms.push.canvas_api import is_number
from grader.lms.push.common import KEPT, UNCHANGED, Outcome
from grader.lms.push.ledger import digest


@dataclass(frozen=True)
class Post:
    """One student's grade: their Canvas user id (the roster's ``lms_id``), points, comment, and
    the feedback page to attach (None: none)."""

    student: str
    user_id: str
    score: float
    comment: str
    page: Path | None = None


@dataclass(frozen=True)
class Change:
    """What one student's post sends: the grade (points, 2 decimals) or None, the comment or not,
    the page's bytes or None; ``was``: Canvas's grade before."""

    grade: str | None
    comment: bool
    page: bytes | None
    was: str


def _points(value) -> Decimal | None:
    """A ledger's grade ("85.13") as a number, None when it is not one."""
    try:
        return Decimal(str(value)) if value is not None else None
    except InvalidOperation:
        return None


def plan(post: Post, current, entry: dict, overwrite: bool) -> Change | Outcome:
    """What to send for ``post`` given Canvas's submission ``current`` and the ledger's ``entry``:
    a :class:`Change`, or the student's outcome when nothing is to be sent.

    :raises ValueError: Canvas's submission is not of the documented shape (a score that is not a
        number, comments that are not a list of objects).
    """
    score = getattr(current, "score", None)
    if score is not None and not is_number(score):
        raise ValueError(f"its score is {one_line(repr(score), 40)}, not a number")
    comments = getattr(current, "submission_comments", None) or []
    if not isinstance(comments, list) or not all(isinstance(c, dict) for c in comments):
        raise ValueError("its submission_comments are not a list of comments")
    if getattr(current, "excused", None) is True:
        return Outcome(
            post.student,
            KEPT,
            "excused in Canvas: nothing posted (an excused submission is never graded over)",
        )
    # the grade as posted, before Canvas's late policy took its points_deducted off
    entered = getattr(current, "entered_score", None)
    if is_number(entered) and score is not None:
        score = entered
    was = "none" if score is None else points_2(score)
    grade = None
    if score is None or decimal_2(score) != decimal_2(post.score):
        last = _points(entry.get("score"))
        if score is not None and last != decimal_2(score) and not overwrite:
            by = (
                f"the last push recorded here posted {entry['score']}"
                if last is not None
                else "no push recorded here posted it"
            )
            return Outcome(
                post.student,
                KEPT,
                f"Canvas's grade {was} was set in Canvas ({by}): "
                f"kept, {points_2(post.score)} not posted (--overwrite-lms-grades "
                "posts it)",
            )
        grade = points_2(post.score)
    same = [c for c in comments if c.get("comment") == post.comment]
    page = post.page.read_bytes() if post.page is not None else None
    if (
        page is not None
        and any(c.get("attachments") for c in same)
        and entry.get("page") in (None, digest(page))
    ):
        page = None  # this page is there, with this comment
    comment = not same or page is not None  # a new page goes with the comment again
    if grade is None and not comment:
        return Outcome(
            post.student,
            UNCHANGED,
            f"grade {points_2(post.score)} and comment "
            f"{'and page ' if post.page else ''}already there",
        )
    return Change(grade, comment, page, was)


def posted(change: Change) -> str:
    """What ``change`` sent, for the report: ``grade 85.13 (was none) and comment``."""
    what = [f"grade {change.grade} (was {change.was})"] if change.grade else []
    if change.comment:
        what.append("comment" + (" with the page" if change.page is not None else ""))
    return " and ".join(what)
