"""Canvas: each student's grade and feedback comment (and page), through the REST API
(``canvasapi``).

The requests, as canvasapi makes them (:mod:`~grader.lms.push.canvas_api`): ``GET
/api/v1/courses/:c`` and ``.../assignments/:a`` (the assignment must be worth the score files'
maximum: a posted grade is points, not a share), one paginated ``GET
.../assignments/:a/submissions?include[]=submission_comments`` (what Canvas has now); then for
each student what :func:`~grader.lms.push.canvas_plan.plan` decides (only what differs, never
over an excused submission or a TA's grade): ``PUT .../assignments/:a/submissions/:user_id`` with
``submission[posted_grade]`` (points, 2 decimals), ``comment[text_comment]`` and the page's
``comment[file_ids][]`` (uploaded first: :mod:`~grader.lms.push.canvas_files`), or for a class
the bulk update_grades jobs (:mod:`~grader.lms.push.canvas_bulk`). A second push of the same
scores posts nothing. A throttled request (429, or 403 "Rate Limit Exceeded") is retried after a
growing wait (:class:`~grader.lms.push.common.Backoff`). Each student posted, or found with this
push's grade, is recorded in the push ledger.

The PUT answers with the submission: one that is not the student's is not counted as posted; its
URL is built from the ids given, never from Canvas's listing, so no answer can send a grade to
another student or assignment.
"""

from __future__ import annotations

from grader.lms.credentials import CanvasCredentials
from grader.lms.exporters.common import points_2
from grader.lms.push import canvas_bulk
from grader.lms.push.answers import describe
from grader.lms.push.canvas_api import UNKNOWN, CanvasApi, Refused, json_of
from grader.lms.push.canvas_files import upload
from grader.lms.push.canvas_plan import Change, Post, plan, posted
from grader.lms.push.common import (
    FAILED,
    POSTED,
    UNCHANGED,
    Backoff,
    LmsFault,
    Outcome,
    post_each,
    require,
)
from grader.lms.push.ledger import Ledger, digest

__all__ = ["BULK_FROM", "Post", "push"]
BULK_FROM = 20  # students to post from which bulk jobs beat a PUT each (a request each)


def push(
    posts: list[Post],
    credentials: CanvasCredentials,
    course_id: str,
    assignment_id: str,
    max_score: float,
    backoff: Backoff = Backoff(),
    *,
    ledger: Ledger | None = None,
    overwrite: bool = False,
    bulk: bool | None = None,
) -> list[Outcome]:
    """Post each student's grade and comment (and page) where Canvas's differ; one outcome per
    post, in order. ``ledger``: what the last pushes posted (read to tell a TA's grade, written as
    grades go through); ``overwrite``: post over grades changed in Canvas by hand; ``bulk``:
    update_grades jobs (None: from :data:`BULK_FROM` students to post).

    :raises GradeError: before anything is posted: Canvas cannot be reached, refuses the token, has
        no such course or assignment, answers as its API does not document (or redirects to another
        host), or the assignment is worth other points than ``max_score``.
    """
    require("canvasapi")
    api = CanvasApi(credentials, course_id, assignment_id, backoff)
    current = api.read(max_score)

    def remember(post: Post, change: Change | None) -> None:
        """The ledger's entry after ``post`` went through (or was found there)."""
        if ledger is None:
            return
        entry = {
            "student": post.student,
            "score": points_2(post.score),
            "comment": digest(post.comment),
        }
        if change is not None and change.page is not None:
            entry["page"] = digest(change.page)
        ledger.record(post.user_id, **entry)

    outcomes: dict[str, Outcome] = {}
    changes: list[tuple[Post, Change]] = []
    for post in posts:
        submission = current.get(post.user_id)
        if submission is None:
            outcomes[post.student] = Outcome(
                post.student,
                FAILED,
                f"Canvas has no submission of user {post.user_id} for this "
                "assignment (not enrolled in the course?)",
            )
            continue
        try:
            decided = plan(post, submission, ledger.get(post.user_id) if ledger else {}, overwrite)
        except ValueError as err:
            outcomes[post.student] = Outcome(
                post.student,
                FAILED,
                f"Canvas's submission of user {post.user_id} is not as its API documents: {err}",
            )
            continue
        if isinstance(decided, Outcome):
            if decided.status == UNCHANGED:
                remember(post, None)  # Canvas has this push's grade: a TA's change shows
            outcomes[post.student] = decided
        else:
            changes.append((post, decided))
    if bulk if bulk is not None else len(changes) >= BULK_FROM:
        done = canvas_bulk.bulk(api, changes, remember)
    else:
        done = post_each(
            changes, lambda item: item[0].student, lambda item: _post_one(api, *item, remember)
        )
    outcomes.update((o.student, o) for o in done)
    return [outcomes[post.student] for post in posts]


def _post_one(api: CanvasApi, post: Post, change: Change, remember) -> Outcome:
    """One student's PUT (the page uploaded first)."""
    from canvasapi.submission import Submission

    fields: dict = {}
    if change.grade:
        fields["submission"] = {"posted_grade": change.grade}
    if change.comment:
        fields["comment"] = {"text_comment": post.comment}
    try:
        if change.page is not None:
            fields["comment"]["file_ids"] = [upload(api, post, change.page)]
        # the URL from the ids given, never from Canvas's listing
        target = Submission(
            api.requester,
            {
                "course_id": api.course_id,
                "assignment_id": api.assignment_id,
                "user_id": post.user_id,
            },
        )
        api.attempt("it", lambda: api.call(target.edit, **fields))
    except Refused as err:
        return Outcome(post.student, FAILED, str(err))
    answer = json_of(api.http.last)
    if not isinstance(answer, dict) or str(answer.get("user_id")) != post.user_id:
        raise LmsFault(
            f"Canvas answered {describe(api.http.last)}, not user {post.user_id}'s "
            f"submission: {UNKNOWN}"
        )
    remember(post, change)
    return Outcome(post.student, POSTED, posted(change))
