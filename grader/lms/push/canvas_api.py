"""Canvas's REST API as a push speaks it: canvasapi's requester on the push's session
(:func:`grader.lms.push.common.session`: a timeout, no redirect to another host), throttled calls
retried, and each failure turned into what it means for the push: before the first grade, a
one-line :class:`~grader.errors.GradeError` (nothing was posted); after it, an
:class:`~grader.lms.push.common.LmsFault` (Canvas's trouble: no answer, 401, 5xx, throttled, an
answer of another shape; three in a row stop the push) or :class:`Refused` (Canvas refused this
student's request: that student fails). Canvas's answers are data to check: a course, assignment
or submission without the ids asked for is an odd answer, and the next URLs are built from the ids
given, never from an answer.
"""

from __future__ import annotations

import warnings

from grader.errors import GradeError
from grader.lms.credentials import CanvasCredentials
from grader.lms.push.answers import describe, one_line
from grader.lms.push.common import (
    SHAPE_ERRORS,
    Backoff,
    LmsFault,
    OddAnswer,
    Redirected,
    Throttled,
    no_answer,
    origin_of,
    redact,
    session,
    with_backoff,
)

NOTHING = "nothing was posted"
UNKNOWN = (
    "whether Canvas took it is not known: check it in Canvas, or push again (a push posts "
    "only what Canvas does not have)"
)


class Refused(Exception):
    """Canvas refused one student's request (a 4xx of the student's own: not enrolled, not
    gradable): that student fails, the push goes on."""


def _throttled(err: Exception) -> bool:
    """Canvas throttles with 429 (its current docs) or 403 "Rate Limit Exceeded" (older instances,
    and canvasapi's docs); canvasapi 3.6 raises RateLimitExceeded for the first, Forbidden with the
    body for the second."""
    from canvasapi.exceptions import CanvasException, RateLimitExceeded

    return isinstance(err, RateLimitExceeded) or (
        isinstance(err, CanvasException)
        and ("Rate Limit Exceeded" in str(err) or str(err).endswith("status code 429"))
    )


def _reason(err: Exception, token: str) -> str:
    """canvasapi's error in one line: its class (InvalidAccessToken, ResourceDoesNotExist...) and
    Canvas's messages (it keeps a JSON body's ``errors`` list as is), without ``token`` should the
    answer echo it."""
    message = getattr(err, "message", str(err))
    if isinstance(message, list):
        message = "; ".join(
            str(e.get("message", e)) if isinstance(e, dict) else str(e) for e in message
        )
    return one_line(redact(f"{type(err).__name__}: {message}", token), 200)


def is_number(value) -> bool:
    """A JSON number (not a boolean)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def is_id(value) -> bool:
    """A Canvas id as its API gives it: a positive integer."""
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def json_of(response):
    """An answer's JSON, None when it has none."""
    try:
        return response.json() if response is not None and response.content else None
    except ValueError:
        return None


class CanvasApi:
    """One push's connection to Canvas and the requests it makes before and around the grades."""

    def __init__(
        self, credentials: CanvasCredentials, course_id: str, assignment_id: str, backoff: Backoff
    ):
        from canvasapi import Canvas

        with warnings.catch_warnings():  # https_url allows http only to this machine (the tests)
            warnings.filterwarnings(
                "ignore",
                "Canvas may respond unexpectedly when making requests to HTTP",
                UserWarning,
            )
            self.canvas = Canvas(credentials.url, credentials.token)
        self.requester = self.canvas._Canvas__requester
        self.http = self.requester._session = session()  # (canvasapi 3 takes no session)
        self.credentials, self.token = credentials, credentials.token
        self.course_id, self.assignment_id = course_id, assignment_id
        self.backoff = backoff
        self.where = f"Canvas course {course_id}, assignment {assignment_id}"
        self.assignment = None

    def call(self, f, *args, **kwargs):
        return with_backoff(lambda: f(*args, **kwargs), self.backoff, _throttled)

    def refused_token(self) -> str | None:
        """Canvas's 401 or 403 in words, when that is what the last answer was (a proxy's or a
        sign-in page's HTML says why where canvasapi would only fail to read it as JSON)."""
        last = self.http.last
        if last is not None and last.status_code in (401, 403):
            return f"Canvas answered {redact(describe(last), self.token)}"
        return None

    def before(self, what: str, get):
        """``get()``, requests made before any grade is posted: any failure is a GradeError."""
        import requests
        from canvasapi.exceptions import CanvasException

        where, http = self.where, self.http
        try:
            return get()
        except Redirected as err:
            raise GradeError(f"{where}: {err}: {NOTHING}") from None
        except requests.JSONDecodeError:
            refused = self.refused_token()
            if refused:
                raise GradeError(
                    f"{where}: {refused} to {what} (is the token valid, and "
                    f"{origin_of(self.credentials.url)} this Canvas?): {NOTHING}"
                ) from None
            raise GradeError(
                f"{where}: Canvas's answer to {what} is not JSON ({describe(http.last)}): {NOTHING}"
            ) from None
        except requests.RequestException as err:
            raise GradeError(
                f"{self.credentials.url}: Canvas cannot be reached: {no_answer(err)}: {NOTHING}"
            ) from None
        except (CanvasException, Throttled) as err:
            raise GradeError(f"{where}: {_reason(err, self.token)}: {NOTHING}") from None
        except (OddAnswer, *SHAPE_ERRORS) as err:  # canvasapi reading what the API does not say
            why = str(err) if isinstance(err, OddAnswer) else describe(http.last)
            raise GradeError(
                f"{where}: Canvas's answer to {what} is not what its API documents "
                f"({one_line(why, 200)}): {NOTHING}"
            ) from None

    def attempt(self, what: str, f):
        """``f()``, a request about one student after the first grade may have gone: Canvas's own
        trouble (no answer, 401, 5xx, throttled, an odd answer) is an LmsFault, a refusal of
        this student's request is Refused."""
        import requests
        from canvasapi.exceptions import (
            BadRequest,
            CanvasException,
            Conflict,
            Forbidden,
            ResourceDoesNotExist,
            UnprocessableEntity,
        )

        try:
            return f()
        except Redirected as err:
            raise LmsFault(str(err), stop="Canvas redirected a request to another host") from None
        except requests.JSONDecodeError:
            said = self.refused_token() or f"Canvas answered {describe(self.http.last)}"
            raise LmsFault(f"{said} to {what}: {UNKNOWN}") from None
        except requests.RequestException as err:
            raise LmsFault(f"Canvas did not answer {what}: {no_answer(err)}: {UNKNOWN}") from None
        except (BadRequest, Conflict, Forbidden, ResourceDoesNotExist, UnprocessableEntity) as err:
            raise Refused(f"Canvas refused {what}: {_reason(err, self.token)}") from None
        except (CanvasException, Throttled) as err:  # 401, 5xx, throttled: not the student's
            last = self.http.last
            if not isinstance(err, Throttled) and last is not None and last.status_code >= 500:
                raise LmsFault(
                    f"Canvas answered {redact(describe(last), self.token)} to {what}: {UNKNOWN}"
                ) from None  # canvasapi drops the page
            raise LmsFault(f"Canvas refused {what}: {_reason(err, self.token)}") from None
        except OddAnswer as err:
            raise LmsFault(f"{err}: {UNKNOWN}") from None
        except SHAPE_ERRORS:  # canvasapi reading another shape
            raise LmsFault(
                f"Canvas answered {describe(self.http.last)} to {what}: {UNKNOWN}"
            ) from None

    @staticmethod
    def the(obj, what: str, **ids):
        """``obj`` if Canvas's answer has the ``ids`` asked for (the next URLs are built from
        them)."""
        for name, value in ids.items():
            got = getattr(obj, name, None)
            if str(got) != value:
                raise OddAnswer(f"{what} with {name} {one_line(repr(got), 40)}, not {value}")
        return obj

    def submissions(self) -> dict:
        http = self.http
        try:
            listed = self.call(
                lambda: list(self.assignment.get_submissions(include=["submission_comments"]))
            )
        except AttributeError:
            # canvasapi follows a Link rel="next" only within this Canvas's /api/v1/ (it requests
            # that path under its own base URL), and fails on a link elsewhere: say so
            links = http.last.links if http.last is not None else {}
            link = (links.get("next") or {}).get("url", "")
            if link and not link.startswith(self.requester.base_url):
                raise OddAnswer(
                    f"its next page is at {origin_of(link)}, not on this Canvas"
                ) from None
            raise
        for s in listed:
            if not (isinstance(getattr(s, "user_id", None), (int, str)) and str(s.user_id)):
                raise OddAnswer("a submission without a user_id")
        return {str(s.user_id): s for s in listed}

    def read(self, max_score: float) -> dict:
        """The course, the assignment (worth ``max_score``), its submissions by user id."""
        course_id, assignment_id = self.course_id, self.assignment_id
        course = self.before(
            f"GET course {course_id}",
            lambda: self.the(
                self.call(self.canvas.get_course, course_id), "a course", id=course_id
            ),
        )
        self.assignment = self.before(
            f"GET assignment {assignment_id}",
            lambda: self.the(
                self.call(course.get_assignment, assignment_id),
                "an assignment",
                id=assignment_id,
                course_id=course_id,
            ),
        )
        current = self.before("GET the submissions", self.submissions)
        possible = getattr(self.assignment, "points_possible", None)
        if not is_number(possible) or float(possible) != float(max_score):
            shown = possible if is_number(possible) else one_line(repr(possible), 40)
            raise GradeError(
                f"{self.where}: worth {shown} points in Canvas, the score files' "
                f"max_score is {max_score:g}: set the assignment's points in Canvas "
                f"to match (a posted grade is points): {NOTHING}"
            )
        return current
