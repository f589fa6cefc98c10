"""A class's grades in Canvas's bulk ``POST .../assignments/:a/submissions/update_grades``
("Grade or comment on multiple submissions": ``grade_data[<user_id>][posted_grade]``,
``[text_comment]``, ``[file_ids][]``), in chunks of :data:`CHUNK` students, each job's Progress
(``GET /api/v1/progress/:id``: queued, running, then completed or failed) read until it ends, the
waits growing to :data:`POLL_MAX`. A Progress says nothing of each student (canvas-lms's
Submission.process_bulk_update fails it with one message), so the submissions are read again and
each student is posted only if Canvas has their grade and comment now; the others fail with what
became of their job. The pages are uploaded first, a student at a time (as the PUTs would be: three
failures in a row that are Canvas's stop the push).
"""

from __future__ import annotations

from typing import Callable

from grader.lms.exporters.common import points_2
from grader.lms.push.answers import one_line
from grader.lms.push.canvas_api import UNKNOWN, CanvasApi, Refused, is_id, is_number
from grader.lms.push.canvas_files import upload
from grader.lms.push.canvas_plan import Change, Post, posted
from grader.lms.push.common import FAILED, NOT_TRIED, POSTED, LmsFault, Outcome, post_each

CHUNK = 100  # students a bulk job: a failed job costs a chunk, not the class
POLLS = 40  # a job's Progress is read at most this often, waits growing to POLL_MAX
POLL_MAX = 15.0  # seconds between two reads of a Progress (about 9 minutes in all)


def bulk(
    api: CanvasApi,
    changes: list[tuple[Post, Change]],
    remember: Callable[[Post, Change | None], None],
) -> list[Outcome]:
    """The class's grades in update_grades jobs (the pages uploaded first, one student at a
    time): each job's Progress polled until it ends, then Canvas read again, each student
    posted only if Canvas has their grade and comment now."""
    outcomes: dict[str, Outcome] = {}
    sent: list[tuple[Post, Change, int | None]] = []

    def upload_one(item) -> Outcome:
        post, change = item
        try:
            file_id = upload(api, post, change.page) if change.page is not None else None
        except Refused as err:
            return Outcome(post.student, FAILED, str(err))
        sent.append((post, change, file_id))
        return Outcome(post.student, POSTED, "")

    for outcome in post_each(changes, lambda item: item[0].student, upload_one):
        if outcome.status != POSTED:
            outcomes[outcome.student] = outcome
    jobs: dict[str, str] = {}  # student -> what became of their job
    for start in range(0, len(sent), CHUNK):
        chunk = sent[start : start + CHUNK]
        try:
            state = _run_job(
                api,
                {
                    post.user_id: _grade_data(post, change, file_id)
                    for post, change, file_id in chunk
                },
            )
        except Refused as err:
            outcomes.update((p.student, Outcome(p.student, FAILED, str(err))) for p, _, _ in chunk)
            continue
        except LmsFault as fault:  # the next job would fare no better: stop here
            outcomes.update(
                (p.student, Outcome(p.student, FAILED, str(fault))) for p, _, _ in chunk
            )
            why = f"the push stopped at a bulk job: {fault.stop or fault}"
            outcomes.update(
                (p.student, Outcome(p.student, NOT_TRIED, why)) for p, _, _ in sent[start + CHUNK :]
            )
            break
        jobs.update((p.student, state) for p, _, _ in chunk)
    if not jobs:
        return list(outcomes.values())
    try:  # the Progress says nothing of each student: Canvas's submissions do
        now = api.attempt("the submissions, read again after the bulk jobs", api.submissions)
    except (LmsFault, Refused) as err:
        now, unread = {}, str(err)
    else:
        unread = None
    for post, change, _ in sent:
        if post.student not in jobs:
            continue
        if unread is not None:
            outcomes[post.student] = Outcome(
                post.student, FAILED, f"{jobs[post.student]}, but {unread}"
            )
        else:
            outcomes[post.student] = _took(
                post, change, now.get(post.user_id), jobs[post.student], remember
            )
    return list(outcomes.values())


def _took(
    post: Post, change: Change, there, job: str, remember: Callable[[Post, Change | None], None]
) -> Outcome:
    """Whether Canvas's submission ``there`` has what ``change`` sent, after the bulk job."""
    score = getattr(there, "score", None)
    entered = getattr(there, "entered_score", None)
    score = entered if is_number(entered) else score
    comments = getattr(there, "submission_comments", None) or []
    has_grade = not change.grade or (is_number(score) and points_2(score) == change.grade)
    has_comment = not change.comment or (
        isinstance(comments, list)
        and any(
            isinstance(c, dict)
            and c.get("comment") == post.comment
            and (change.page is None or c.get("attachments"))
            for c in comments
        )
    )
    if has_grade and has_comment:
        remember(post, change)
        return Outcome(post.student, POSTED, f"{posted(change)} ({job})")
    missing = " and ".join(
        what for what, ok in (("the grade", has_grade), ("the comment", has_comment)) if not ok
    )
    return Outcome(
        post.student,
        FAILED,
        f"{job}, and Canvas does not have {missing}: push "
        "again (only what Canvas does not have is posted)",
    )


def _run_job(api: CanvasApi, grade_data: dict) -> str:
    """Start one update_grades job and wait for its Progress to end; what became of it in
    words (``bulk job 12 completed``, ``bulk job 12 failed: Couldn't find User(s)...``,
    ``bulk job 12 still running after 40 reads of its progress``)."""
    from canvasapi.assignment import Assignment
    from canvasapi.progress import Progress

    # the URL from the ids given, as for a PUT
    assignment = Assignment(api.requester, {"id": api.assignment_id, "course_id": api.course_id})
    progress = api.attempt(
        "the bulk grades (update_grades)",
        lambda: api.call(assignment.submissions_bulk_update, grade_data=grade_data),
    )
    state, job = _progress(progress)
    reads = 0
    while state in ("queued", "running") and reads < POLLS:
        api.backoff.sleep(min(api.backoff.first * 2**reads, POLL_MAX))
        reads += 1
        # the Progress's URL from its id (digits), never from the answer's url field
        progress = api.attempt(
            f"bulk job {job}'s progress",
            lambda: api.call(Progress(api.requester, {"id": job}).query),
        )
        state, again = _progress(progress)
        if again != job:
            raise LmsFault(f"Canvas answered progress {again} for bulk job {job}: {UNKNOWN}")
    if state == "completed":
        return f"bulk job {job} completed"
    if state == "failed":
        message = getattr(progress, "message", None)
        return f"bulk job {job} failed" + (f": {one_line(str(message), 200)}" if message else "")
    return f"bulk job {job} still {state} after {reads} reads of its progress"


def _grade_data(post: Post, change: Change, file_id: int | None) -> dict:
    """One student's ``grade_data[<user_id>]`` fields of update_grades."""
    data: dict = {}
    if change.grade:
        data["posted_grade"] = change.grade
    if change.comment:
        data["text_comment"] = post.comment
    if file_id is not None:
        data["file_ids"] = [file_id]
    return data


def _progress(progress) -> tuple[str, str]:
    """A Progress's workflow_state and id, checked (the id goes into the next URL)."""
    job = getattr(progress, "id", None)
    state = getattr(progress, "workflow_state", None)
    if not (is_id(job) or (isinstance(job, str) and job.isdigit())) or state not in (
        "queued",
        "running",
        "completed",
        "failed",
    ):
        raise LmsFault(
            f"Canvas's answer is not a Progress (id {one_line(repr(job), 30)}, "
            f"workflow_state {one_line(repr(state), 30)}): {UNKNOWN}"
        )
    return state, str(job)
