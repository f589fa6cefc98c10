"""Canvas: each student's grade and feedback comment, through the REST API (``canvasapi``).

The requests, as canvasapi makes them: ``GET /api/v1/courses/:c`` and ``.../assignments/:a`` (the
assignment must be worth the score files' maximum: a posted grade is points, not a share), one
paginated ``GET .../assignments/:a/submissions?include[]=submission_comments`` (what Canvas has
now), then for each student whose grade or comment differs
``PUT .../assignments/:a/submissions/:user_id`` with ``submission[posted_grade]`` (points, 2
decimals) and/or ``comment[text_comment]``: only what differs, so a second push of the same scores
posts nothing. A throttled request (429, or 403 "Rate Limit Exceeded") is retried after a growing
wait (:class:`~grader.lms.push.common.Backoff`).

Canvas's answers are data to check, not to trust: a course, assignment or submission that is not the
object the Submissions API documents (a list, an object without its ids, HTML) stops the push before
anything is posted, or fails that one student afterwards; the PUT's URL is built from the ids given,
never from an answer. The PUT answers with the submission: one that is not the student's is not
counted as posted.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass

from grader.errors import GradeError
from grader.lms.credentials import CanvasCredentials
from grader.lms.exporters.common import decimal_2, points_2
from grader.lms.push.common import (FAILED, POSTED, SHAPE_ERRORS, UNCHANGED, Backoff, LmsFault,
                                    OddAnswer, Outcome, Redirected, Throttled, describe, no_answer,
                                    one_line, origin_of, post_each, redact, require, session,
                                    with_backoff)

NOTHING = "nothing was posted"
UNKNOWN = ("whether Canvas took it is not known: check it in Canvas, or push again (a push posts "
           "only what Canvas does not have)")


@dataclass(frozen=True)
class Post:
    """One student's grade: their Canvas user id (the roster's ``lms_id``), points, comment."""

    student: str
    user_id: str
    score: float
    comment: str


def _throttled(err: Exception) -> bool:
    """Canvas throttles with 429 (its current docs) or 403 "Rate Limit Exceeded" (older instances,
    and canvasapi's docs); canvasapi 3.6 raises RateLimitExceeded for the first, Forbidden with the
    body for the second."""
    from canvasapi.exceptions import CanvasException, RateLimitExceeded

    return isinstance(err, RateLimitExceeded) or (isinstance(err, CanvasException) and (
        "Rate Limit Exceeded" in str(err) or str(err).endswith("status code 429")))


def _reason(err: Exception, token: str) -> str:
    """canvasapi's error in one line: its class (InvalidAccessToken, ResourceDoesNotExist...) and
    Canvas's messages (it keeps a JSON body's ``errors`` list as is), without ``token`` should the
    answer echo it."""
    message = getattr(err, "message", str(err))
    if isinstance(message, list):
        message = "; ".join(str(e.get("message", e)) if isinstance(e, dict) else str(e)
                            for e in message)
    return one_line(redact(f"{type(err).__name__}: {message}", token), 200)


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _changes(post: Post, current) -> dict:
    """The fields of ``Submission.edit`` that differ from what Canvas has (empty: nothing to post).

    :raises ValueError: Canvas's submission is not of the documented shape (a score that is not a
        number, comments that are not a list of objects).
    """
    changes = {}
    score = getattr(current, "score", None)
    if score is not None and not _number(score):
        raise ValueError(f"its score is {one_line(repr(score), 40)}, not a number")
    if score is None or decimal_2(score) != decimal_2(post.score):
        changes["submission"] = {"posted_grade": points_2(post.score)}
    comments = getattr(current, "submission_comments", None) or []
    if not isinstance(comments, list) or not all(isinstance(c, dict) for c in comments):
        raise ValueError("its submission_comments are not a list of comments")
    if not any(c.get("comment") == post.comment for c in comments):
        changes["comment"] = {"text_comment": post.comment}
    return changes


def push(posts: list[Post], credentials: CanvasCredentials, course_id: str, assignment_id: str,
         max_score: float, backoff: Backoff = Backoff()) -> list[Outcome]:
    """Post each student's grade and comment where Canvas's differ; one outcome per post, in order.

    :raises GradeError: before anything is posted: Canvas cannot be reached, refuses the token, has
        no such course or assignment, answers as its API does not document (or redirects to another
        host), or the assignment is worth other points than ``max_score``.
    """
    require("canvasapi")
    import requests
    from canvasapi import Canvas
    from canvasapi.exceptions import (BadRequest, CanvasException, Conflict, Forbidden,
                                      ResourceDoesNotExist, UnprocessableEntity)
    from canvasapi.submission import Submission

    with warnings.catch_warnings():      # https_url allows http only to this machine (the tests)
        warnings.filterwarnings("ignore", "Canvas may respond unexpectedly when making requests to "
                                "HTTP", UserWarning)
        canvas = Canvas(credentials.url, credentials.token)
    requester = canvas._Canvas__requester
    http = requester._session = session()      # (canvasapi 3 takes no session: set its requester's)
    token = credentials.token
    where = f"Canvas course {course_id}, assignment {assignment_id}"

    def call(f, *args, **kwargs):
        return with_backoff(lambda: f(*args, **kwargs), backoff, _throttled)

    def before(what: str, get):
        """``get()``, requests made before any grade is posted: any failure is a GradeError."""
        try:
            return get()
        except Redirected as err:
            raise GradeError(f"{where}: {err}: {NOTHING}") from None
        except requests.JSONDecodeError:
            raise GradeError(f"{where}: Canvas's answer to {what} is not JSON "
                             f"({describe(http.last)}): {NOTHING}") from None
        except requests.RequestException as err:
            raise GradeError(f"{credentials.url}: Canvas cannot be reached: {no_answer(err)}: "
                             f"{NOTHING}") from None
        except (CanvasException, Throttled) as err:
            raise GradeError(f"{where}: {_reason(err, token)}: {NOTHING}") from None
        except (OddAnswer, *SHAPE_ERRORS) as err:   # canvasapi reading what the API does not say
            why = str(err) if isinstance(err, OddAnswer) else describe(http.last)
            raise GradeError(f"{where}: Canvas's answer to {what} is not what its API documents "
                             f"({one_line(why, 200)}): {NOTHING}") from None

    def the(obj, what: str, **ids):
        """``obj`` if Canvas's answer has the ``ids`` asked for (the next URLs are built from
        them)."""
        for name, value in ids.items():
            got = getattr(obj, name, None)
            if str(got) != value:
                raise OddAnswer(f"{what} with {name} {one_line(repr(got), 40)}, not {value}")
        return obj

    def submissions() -> dict:
        try:
            listed = call(lambda: list(assignment.get_submissions(
                include=["submission_comments"])))
        except AttributeError:
            # canvasapi follows a Link rel="next" only within this Canvas's /api/v1/ (it requests
            # that path under its own base URL), and fails on a link elsewhere: say so
            links = http.last.links if http.last is not None else {}
            link = (links.get("next") or {}).get("url", "")
            if link and not link.startswith(requester.base_url):
                raise OddAnswer(f"its next page is at {origin_of(link)}, not on this Canvas") \
                    from None
            raise
        for s in listed:
            if not (isinstance(getattr(s, "user_id", None), (int, str)) and str(s.user_id)):
                raise OddAnswer("a submission without a user_id")
        return {str(s.user_id): s for s in listed}

    course = before(f"GET course {course_id}", lambda: the(
        call(canvas.get_course, course_id), "a course", id=course_id))
    assignment = before(f"GET assignment {assignment_id}", lambda: the(
        call(course.get_assignment, assignment_id), "an assignment", id=assignment_id,
        course_id=course_id))
    current = before("GET the submissions", submissions)
    possible = getattr(assignment, "points_possible", None)
    if not _number(possible) or float(possible) != float(max_score):
        shown = possible if _number(possible) else one_line(repr(possible), 40)
        raise GradeError(f"{where}: worth {shown} points in Canvas, the score files' max_score is "
                         f"{max_score:g}: set the assignment's points in Canvas to match (a posted "
                         f"grade is points): {NOTHING}")

    def post_one(post: Post) -> Outcome:
        submission = current.get(post.user_id)
        if submission is None:
            return Outcome(post.student, FAILED, f"Canvas has no submission of user "
                           f"{post.user_id} for this assignment (not enrolled in the course?)")
        try:
            changes = _changes(post, submission)
        except ValueError as err:
            return Outcome(post.student, FAILED, f"Canvas's submission of user {post.user_id} is "
                           f"not as its API documents: {err}")
        if not changes:
            return Outcome(post.student, UNCHANGED, f"grade {points_2(post.score)} and comment "
                           "already there")
        # the URL from the ids given, never from Canvas's listing: no answer can send a grade
        # to another student or assignment
        target = Submission(requester, {"course_id": course_id, "assignment_id": assignment_id,
                                        "user_id": post.user_id})
        try:
            call(target.edit, **changes)
        except Redirected as err:
            raise LmsFault(str(err), stop="Canvas redirected a grade to another host") from None
        except requests.JSONDecodeError:
            raise LmsFault(f"Canvas's answer is not JSON ({describe(http.last)}): {UNKNOWN}") \
                from None
        except requests.RequestException as err:
            raise LmsFault(f"Canvas did not answer: {no_answer(err)}: {UNKNOWN}") from None
        except (BadRequest, Conflict, Forbidden, ResourceDoesNotExist, UnprocessableEntity) as err:
            return Outcome(post.student, FAILED, f"Canvas refused it: {_reason(err, token)}")
        except (CanvasException, Throttled) as err:      # 401, 5xx, throttled: not the student's
            raise LmsFault(f"Canvas refused it: {_reason(err, token)}") from None
        except OddAnswer as err:
            raise LmsFault(f"{err}: {UNKNOWN}") from None
        except SHAPE_ERRORS:                             # canvasapi reading another shape
            raise LmsFault(f"Canvas answered {describe(http.last)}, not user {post.user_id}'s "
                           f"submission: {UNKNOWN}") from None
        answer = http.last.json()
        if not isinstance(answer, dict) or str(answer.get("user_id")) != post.user_id:
            raise LmsFault(f"Canvas answered {describe(http.last)}, not user {post.user_id}'s "
                           f"submission: {UNKNOWN}")
        was = getattr(submission, "score", None)
        what = []
        if "submission" in changes:
            had = "none" if was is None else points_2(was)
            what.append(f"grade {points_2(post.score)} (was {had})")
        if "comment" in changes:
            what.append("comment")
        return Outcome(post.student, POSTED, " and ".join(what))

    return post_each(posts, lambda post: post.student, post_one)
