"""A feedback page as a Canvas submission-comment file: Canvas's documented three-step upload
("Uploading Files"; "Submission Comments": upload a file).

1. ``POST .../submissions/:user_id/comments/files`` with ``name``, ``size``, ``content_type``
   (with the token): Canvas answers an ``upload_url`` and ``upload_params`` (only a file posted to
   this endpoint may be attached to a submission comment).
2. The page POSTed to ``upload_url`` as multipart/form-data: the parameters exactly as given, then
   ``file`` last; "the access token is not sent with this request": the URL may be another host
   (an S3 bucket, inst-fs), which gets the page alone. https only (http to this machine: the
   tests).
3. Its answer, a 3xx or 201 Created, has a ``Location``: Canvas's confirmation, fetched with the
   token (without it "the new file may not be marked as available"), and only on Canvas's own
   host: a confirmation elsewhere is not followed. A 201 (or 200) whose body is the file already
   needs none.

The file id then goes with the comment's text (``comment[file_ids][]``), so that one comment
carries both (canvasapi's ``Submission.upload_comment`` would post a second, empty comment).
"""

from __future__ import annotations

from urllib.parse import urljoin

from grader.lms.credentials import LOOPBACK
from grader.lms.push.answers import describe
from grader.lms.push.canvas_api import CanvasApi, is_id, json_of
from grader.lms.push.canvas_plan import Post
from grader.lms.push.common import LmsFault, no_answer, origin_of, same_origin, session


def upload(api: CanvasApi, post: Post, page: bytes) -> int:
    """The page as a submission-comment file, in Canvas's three steps: its file id.

    :raises LmsFault: Canvas or the file store answered so that the page is not known to be
        there. :raises Refused: Canvas refused this student's upload.
    """
    import requests

    name = f"{post.page.stem}-feedback.html" if post.page else "feedback.html"
    files = (
        f"courses/{api.course_id}/assignments/{api.assignment_id}/submissions/"
        f"{post.user_id}/comments/files"
    )
    answer = api.attempt(
        "the page's upload (step 1)",
        lambda: api.call(
            api.requester.request,
            "POST",
            files,
            _kwargs=[("name", name), ("size", len(page)), ("content_type", "text/html")],
        ).json(),
    )
    if not (
        isinstance(answer, dict)
        and isinstance(answer.get("upload_url"), str)
        and isinstance(answer.get("upload_params"), dict)
    ):
        raise LmsFault(
            f"Canvas answered {describe(api.http.last)} to the page's upload "
            "(step 1), not an upload_url and upload_params: the page was not sent"
        )
    url = answer["upload_url"]
    if not _safe(url):
        raise LmsFault(
            f"Canvas's upload URL {origin_of(url)} is not https: the page was not sent there"
        )
    params = [(str(k), str(v)) for k, v in answer["upload_params"].items()]
    store = session()  # no token, no cookie of Canvas's: not Canvas
    try:
        stored = store.post(
            url, data=params, files={"file": (name, page, "text/html")}, allow_redirects=False
        )
    except requests.RequestException as err:
        raise LmsFault(
            f"the file store {origin_of(url)} did not answer the page's upload: "
            f"{no_answer(err)}: the page is not known to be stored"
        ) from None
    location = stored.headers.get("Location")
    confirmed = json_of(stored) if stored.status_code in (200, 201) else None
    if not (isinstance(confirmed, dict) and is_id(confirmed.get("id"))):
        if not (300 <= stored.status_code < 400 or stored.status_code == 201) or not location:
            raise LmsFault(
                f"the file store answered {describe(stored)} to the page's upload "
                "(step 2): the page is not known to be stored"
            )
        location = urljoin(url, location)
        if not same_origin(location, api.credentials.url):
            raise LmsFault(
                f"the file store's confirmation is at {origin_of(location)}, not "
                "on this Canvas: not followed (the token goes to Canvas only)"
            )
        confirmed = api.attempt(
            "the page's upload (step 3)",
            lambda: api.call(api.requester.request, "GET", _url=location).json(),
        )
    if not (isinstance(confirmed, dict) and is_id(confirmed.get("id"))):
        raise LmsFault(
            "Canvas's answer to the page's upload (step 3) has no file id: the page is not attached"
        )
    return int(confirmed["id"])


def _safe(url: str) -> bool:
    """An https URL, or http to this machine (the tests): where a page may be uploaded."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        return bool(parts.netloc) and (
            parts.scheme == "https" or (parts.scheme == "http" and parts.hostname in LOOPBACK)
        )
    except ValueError:
        return False
