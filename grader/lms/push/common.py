"""What the pushes share: one student's outcome, the HTTP session every request goes through (a
timeout, no redirect to another host), going on past a student's failure and stopping when the LMS
is down, retrying a call the LMS throttled, the feedback comment."""

from __future__ import annotations

import importlib.util
import time
from dataclasses import dataclass
from typing import Callable, Sequence, TypeVar

from grader.errors import GradeError

T = TypeVar("T")

POSTED, UNCHANGED, FAILED, NOT_TRIED = "posted", "unchanged", "failed", "not tried"
KEPT = "kept"  # the LMS's grade is left as it is: excused, or changed there by hand (a TA's)
DOWN_AFTER = 3  # failures in a row that are the LMS's (not a student's): then the push stops
# What canvasapi and pylti1p3 raise when they build objects from an answer of a shape they do not
# expect (a list where the API documents an object, an object without its fields, a string for a
# number): the answer's fault, told apart from the LMS refusing a request.
SHAPE_ERRORS = (AttributeError, TypeError, LookupError, ValueError)


@dataclass(frozen=True)
class Outcome:
    """What became of one student's score: ``posted``, ``unchanged`` (the LMS already has it),
    ``kept`` (the LMS's grade is left alone: excused, or changed there by hand since the last
    push), ``failed`` (the LMS refused it, or answered so that it is not known to have it:
    ``detail`` says why) or ``not tried`` (the push stopped before this student)."""

    student: str
    status: str
    detail: str


@dataclass(frozen=True)
class Backoff:
    """How to wait on a throttled call: ``first`` seconds, doubled on each of at most ``retries``
    retries."""

    retries: int = 5
    first: float = 1.0
    sleep: Callable[[float], None] = time.sleep


TIMEOUT = 30.0  # seconds an LMS may take to answer: a hung LMS fails the push, never hangs it


class Redirected(Exception):
    """A redirect to another origin (scheme, host or port) than the request's, refused before
    anything is sent there: the request carries a secret (Canvas's token, the LTI assertion or
    bearer token) or a student's grade, meant for the host the instructor configured and no other.
    """


class OddAnswer(Exception):
    """An answer no documented call gets: a 3xx with nowhere to go, a redirect that would resend a
    write as a GET without its body (the grade silently dropped), an object that is not the one
    asked for."""


class LmsFault(Exception):
    """One student's post failed for a reason that is the LMS's, not the student's (no answer, 5xx,
    401, an answer not of the shape its API documents); ``stop``: post nothing more (a redirect
    elsewhere)."""

    def __init__(self, detail: str, stop: str | None = None):
        super().__init__(detail)
        self.stop = stop


def no_answer(err: Exception) -> str:
    """A request that got no answer (requests' exception), in words."""
    import requests

    if isinstance(err, requests.Timeout):
        return f"no answer within {TIMEOUT:g} s ({type(err).__name__})"
    if isinstance(err, requests.TooManyRedirects):
        return f"redirects on its own host without end ({type(err).__name__})"
    return f"the connection failed ({type(err).__name__})"


def _origin(url: str):
    """(scheme, host, port) of ``url`` as the standard library and urllib3 (which requests connects
    with) read it; both must agree for two URLs to be one origin (a URL the two parse apart is never
    the same)."""
    from urllib.parse import urlsplit

    from urllib3.util import parse_url

    try:
        std, lib = urlsplit(url), parse_url(url)
        scheme = std.scheme.lower()
        default = {"http": 80, "https": 443}.get(scheme)
        return (
            scheme,
            (std.hostname or "").lower(),
            std.port or default,
            (lib.scheme or "").lower(),
            (lib.host or "").lower(),
            lib.port or default,
        )
    except ValueError:
        return object()


def same_origin(url: str, other: str) -> bool:
    """Whether two URLs are one origin (scheme, host and port), as both parsers read them."""
    return _origin(url) == _origin(other)


def origin_of(url: str) -> str:
    """``scheme://host:port`` of ``url``, nothing else of it (no user info, path or query)."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        host = parts.hostname or "?"
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return "an address that is not a URL"
    return f"{parts.scheme}://{'[' + host + ']' if ':' in host else host}{port}"


def _path(url: str) -> str:
    from urllib.parse import urlsplit

    return urlsplit(url).path or "/"


def session():
    """The requests session every request of a push goes through (canvasapi's and pylti1p3's too):
    each request gives up after :data:`TIMEOUT` seconds (requests waits forever by default); a
    redirect is followed only to the request's own origin, and for a write only with 307/308 (the
    others resend it as a GET without its body); a 3xx left with nowhere to go is an odd answer, not
    a success. ``last``: the last answer, to describe one of the wrong shape.

    requests itself drops the ``Authorization`` header on a redirect to another host, but not the
    body: it resends a form (the LTI client assertion) or a grade there with 307/308, and reads the
    other host's answer as the LMS's. So the check sits in :meth:`requests.Session.rebuild_auth`,
    which requests calls with the next hop's exact URL, after it has rebuilt the method and before
    it sends anything: a hop after hops on the same host is checked like the first.
    """
    import requests

    class LmsSession(requests.Session):
        last = None
        following = True

        def request(self, method, url, *args, **kwargs):
            if kwargs.get("timeout") is None:
                kwargs["timeout"] = TIMEOUT
            self.last = None
            # allow_redirects=False: the caller reads a 3xx itself (requests still prepares the
            # next hop, as response.next, which is never sent: rebuild_auth lets it be)
            self.following = kwargs.get("allow_redirects", True) is not False
            try:
                response = super().request(method, url, *args, **kwargs)
            finally:
                self.following = True
            self.last = response
            if kwargs.get("allow_redirects") is False:
                return response
            if response.is_redirect or 300 <= response.status_code < 400:
                raise OddAnswer(
                    f"{origin_of(response.url)} answered {response.status_code} to "
                    f"{method} {_path(response.url)} with nowhere to go"
                )
            return response

        def rebuild_auth(self, prepared_request, response):
            if not self.following:  # a hop prepared, never sent
                prepared_request.headers.pop("Authorization", None)
                return
            sent, status = response.request, response.status_code
            asked = f"{origin_of(sent.url)} answered {status} to {sent.method} {_path(sent.url)}"
            if _origin(prepared_request.url) != _origin(sent.url):
                raise Redirected(
                    f"{asked}, redirecting it to {origin_of(prepared_request.url)}, "
                    "another host: refused, nothing was sent there (if the LMS has "
                    "moved, configure its new address)"
                )
            if sent.method not in ("GET", "HEAD") and status not in (307, 308):
                raise OddAnswer(
                    f"{asked}: following it would send a GET without the request's "
                    "body, so it was not followed"
                )
            super().rebuild_auth(prepared_request, response)

    return LmsSession()


def post_each(
    items: Sequence[T], student: Callable[[T], str], post: Callable[[T], Outcome]
) -> list[Outcome]:
    """``post(item)`` for each item: an outcome each, in order. A student's failure does not stop
    the push; :data:`DOWN_AFTER` :class:`LmsFault` in a row (each may have waited :data:`TIMEOUT`,
    and the rest would fail the same way) or one with ``stop`` do, and the students after it are
    ``not tried``."""
    outcomes: list[Outcome] = []
    faults = 0
    for i, item in enumerate(items):
        try:
            outcome = post(item)
        except LmsFault as fault:
            outcome = Outcome(student(item), FAILED, str(fault))
            faults += 1
            stop = fault.stop or (
                f"{faults} failures in a row that are the LMS's, not the students' (is it down?)"
                if faults >= DOWN_AFTER
                else None
            )
        except Exception as err:  # noqa: BLE001 - a grader bug: report what was posted, stop
            outcome = Outcome(
                student(item), FAILED, f"the push failed: {type(err).__name__}: {err}"
            )
            stop = "an error in the grader (above)"
        else:
            faults, stop = 0, None
        outcomes.append(outcome)
        if stop:
            why = f"the push stopped at {student(item)}: {stop}"
            return outcomes + [Outcome(student(later), NOT_TRIED, why) for later in items[i + 1 :]]
    return outcomes


def require(module: str) -> None:
    """:raises GradeError: ``module`` (a library of the push extra) is not installed."""
    if importlib.util.find_spec(module) is None:
        raise GradeError(f"grade push needs {module}: pip install 'transformer-block-grader[push]'")


def redact(text: str, *secrets: str) -> str:
    """``text`` with each of ``secrets`` (a token, an assertion) replaced: an LMS, a proxy or a
    firewall may echo the request's ``Authorization`` header or body in an error it answers, and
    that answer is printed."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "[redacted]")
    return text


class Throttled(Exception):
    """The LMS asked to slow down (Canvas: 403 "Rate Limit Exceeded" or 429; AGS: 429)."""


def with_backoff(
    call: Callable[[], T], backoff: Backoff, throttled: Callable[[Exception], bool]
) -> T:
    """``call()``, retried after a growing wait while it raises an exception ``throttled``
    recognises.

    :raises Throttled: still throttled after the last retry.
    """
    for attempt in range(backoff.retries + 1):
        try:
            return call()
        except Exception as err:  # noqa: BLE001 - re-raised unless it is the LMS throttling
            if not throttled(err):
                raise
            if attempt == backoff.retries:
                raise Throttled(
                    f"still rate-limited after {backoff.retries} retries: {err}"
                ) from None
            backoff.sleep(backoff.first * 2**attempt)
    raise AssertionError("unreachable")


def comment(doc: dict, score: float, release_hidden: bool, late_by_lms: bool) -> str:
    """The comment every push writes (Canvas's submission comment, the LTI score's ``comment``):
    the one text every comment carries, exports included
    (:func:`grader.lms.exporters.common.student_comment`: the total, each problem's points, the
    diagnoses, the failed public tests, a count of hidden ones unless ``release_hidden``,
    adjustments, lateness, notes). Deterministic, so an LMS that already has it is not sent it
    again."""
    from grader.lms.exporters.common import student_comment

    return student_comment(doc, score, release_hidden=release_hidden, late_by_lms=late_by_lms)
