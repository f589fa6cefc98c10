"""Canvas: each student's grade and feedback comment, through the REST API (``canvasapi``).

The requests, as canvasapi makes them: ``GET /api/v1/courses/:c`` and ``.../assignments/:a`` (the assignment
must be worth the score files' maximum: a posted grade is points, not a share), one paginated ``GET
.../assignments/:a/submissions?include[]=submission_comments`` (what Canvas has now), then for each student
whose grade or comment differs ``PUT .../assignments/:a/submissions/:user_id`` with ``submission[posted_grade]``
(points, 2 decimals) and/or ``comment[text_comment]``: only what differs, so a second push of the same scores
posts nothing. A throttled request (429, or 403 "Rate Limit Exceeded") is retried after a growing wait
(:class:`~grader.lms.push.common.Backoff`).
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass

from grader.errors import GradeError
from grader.lms.credentials import CanvasCredentials
from grader.lms.exporters.common import decimal_2, points_2
from grader.lms.push.common import (FAILED, POSTED, UNCHANGED, Backoff, Outcome, Throttled, redact, require, session,
                                    with_backoff)


@dataclass(frozen=True)
class Post:
    """One student's grade to send: their Canvas user id (the roster's ``lms_id``), points, comment."""

    student: str
    user_id: str
    score: float
    comment: str


def _throttled(err: Exception) -> bool:
    """Canvas throttles with 429 (its current docs) or 403 "Rate Limit Exceeded" (older instances, and canvasapi's
    docs); canvasapi 3.6 raises RateLimitExceeded for the first, Forbidden with the body for the second."""
    from canvasapi.exceptions import CanvasException, RateLimitExceeded

    return isinstance(err, RateLimitExceeded) or (isinstance(err, CanvasException) and (
        "Rate Limit Exceeded" in str(err) or str(err).endswith("status code 429")))


def _reason(err: Exception, token: str) -> str:
    """canvasapi's error in one line: its class (InvalidAccessToken, ResourceDoesNotExist...) and Canvas's
    messages (it keeps a JSON body's ``errors`` list as is), without ``token`` should the answer echo it."""
    message = getattr(err, "message", str(err))
    if isinstance(message, list):
        message = "; ".join(str(e.get("message", e)) if isinstance(e, dict) else str(e) for e in message)
    return redact(f"{type(err).__name__}: {message}", token)


def _changes(post: Post, current) -> dict:
    """The fields of ``Submission.edit`` that differ from what Canvas has (empty: nothing to post)."""
    changes = {}
    score = getattr(current, "score", None)
    if score is None or decimal_2(score) != decimal_2(post.score):
        changes["submission"] = {"posted_grade": points_2(post.score)}
    comments = getattr(current, "submission_comments", None) or []
    if not any(c.get("comment") == post.comment for c in comments):
        changes["comment"] = {"text_comment": post.comment}
    return changes


def push(posts: list[Post], credentials: CanvasCredentials, course_id: str, assignment_id: str, max_score: float,
         backoff: Backoff = Backoff()) -> list[Outcome]:
    """Post each student's grade and comment where Canvas's differ; one outcome per post.

    :raises GradeError: Canvas cannot be reached, refuses the token, or has no such course or assignment, or
        the assignment is worth other points than ``max_score``.
    """
    require("canvasapi")
    import requests
    from canvasapi import Canvas
    from canvasapi.exceptions import CanvasException

    with warnings.catch_warnings():      # credentials.https_url allows http only to this machine (the tests)
        warnings.filterwarnings("ignore", "Canvas may respond unexpectedly when making requests to HTTP", UserWarning)
        canvas = Canvas(credentials.url, credentials.token)
    canvas._Canvas__requester._session = session()      # (canvasapi 3 takes no session: its requester's, timed)

    def call(f, *args, **kwargs):
        return with_backoff(lambda: f(*args, **kwargs), backoff, _throttled)

    where = f"Canvas course {course_id}, assignment {assignment_id}"
    try:
        assignment = call(call(canvas.get_course, course_id).get_assignment, assignment_id)
        current = {str(s.user_id): s for s in call(lambda: list(assignment.get_submissions(
            include=["submission_comments"])))}
    except requests.RequestException as err:
        raise GradeError(f"{credentials.url}: Canvas cannot be reached: {type(err).__name__}") from None
    except (CanvasException, Throttled) as err:
        raise GradeError(f"{where}: {_reason(err, credentials.token)}") from None
    possible = getattr(assignment, "points_possible", None)
    if possible is None or float(possible) != float(max_score):
        raise GradeError(f"{where}: worth {possible} points in Canvas, the score files' max_score is {max_score:g}: "
                         "set the assignment's points in Canvas to match (a posted grade is points)")
    outcomes = []
    for post in posts:
        submission = current.get(post.user_id)
        if submission is None:
            outcomes.append(Outcome(post.student, FAILED, f"Canvas has no submission of user {post.user_id} for "
                                    "this assignment (not enrolled in the course?)"))
            continue
        changes = _changes(post, submission)
        if not changes:
            outcomes.append(Outcome(post.student, UNCHANGED, f"grade {points_2(post.score)} and comment already there"))
            continue
        was = getattr(submission, "score", None)         # edit() sets the submission's attributes to Canvas's answer
        try:
            call(submission.edit, **changes)
        except (requests.RequestException, CanvasException, Throttled) as err:
            outcomes.append(Outcome(post.student, FAILED, f"Canvas refused it: {_reason(err, credentials.token)}"))
            continue
        what = []
        if "submission" in changes:
            what.append(f"grade {points_2(post.score)} (was {'none' if was is None else points_2(was)})")
        if "comment" in changes:
            what.append("comment")
        outcomes.append(Outcome(post.student, POSTED, " and ".join(what)))
    return outcomes
