"""What the pushes share: one student's outcome, the HTTP session every request goes through (a
timeout, no redirect to another host), going on past a student's failure and stopping when the LMS
is down, retrying a call the LMS throttled, the feedback comment."""
from __future__ import annotations

import importlib.util
import time
import unicodedata
from dataclasses import dataclass
from typing import Callable, Sequence, TypeVar

from grader.errors import GradeError

T = TypeVar("T")

POSTED, UNCHANGED, FAILED, NOT_TRIED = "posted", "unchanged", "failed", "not tried"
SHOWN_NAMES = 5     # failed tests named per problem in a comment; the feedback page names them all
DOWN_AFTER = 3      # failures in a row that are the LMS's (not a student's): then the push stops
# What canvasapi and pylti1p3 raise when they build objects from an answer of a shape they do not
# expect (a list where the API documents an object, an object without its fields, a string for a
# number): the answer's fault, told apart from the LMS refusing a request.
SHAPE_ERRORS = (AttributeError, TypeError, LookupError, ValueError)


@dataclass(frozen=True)
class Outcome:
    """What became of one student's score: ``posted``, ``unchanged`` (the LMS already has it),
    ``failed`` (the LMS refused it, or answered so that it is not known to have it: ``detail`` says
    why) or ``not tried`` (the push stopped before this student)."""

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


TIMEOUT = 30.0      # seconds an LMS may take to answer: a hung LMS fails the push, never hangs it


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


def one_line(text: str, limit: int = 300) -> str:
    """``text`` as one printable line of at most ``limit`` characters: an LMS's answer is printed in
    the report, where a line break could forge a line of its own ("posted: ...") and an escape
    sequence rewrite the terminal."""
    text = " ".join("".join(" " if unicodedata.category(c)[0] == "C" else c for c in text).split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


_JSON = {dict: "object", list: "list", str: "string", int: "number", float: "number",
         bool: "boolean", type(None): "null"}


def describe(response) -> str:
    """An answer in a few words, for a one-line error: ``200 with a JSON list``, ``200 text/html,
    not JSON``, ``200 with an empty body``."""
    if response is None:
        return "no answer"
    status = response.status_code
    if not response.content:
        return f"{status} with an empty body"
    try:
        data = response.json()
    except ValueError:
        kind = one_line(response.headers.get("Content-Type", "").split(";")[0], 60)
        return f"{status} {kind or 'without a Content-Type'}, not JSON"
    if isinstance(data, list) and data:
        kinds = "/".join(sorted({_JSON.get(type(x), "value") for x in data}))
        return f"{status} with a JSON list of {kinds}s"
    return f"{status} with a JSON {'empty list' if data == [] else _JSON.get(type(data), 'value')}"


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
        return (scheme, (std.hostname or "").lower(), std.port or default,
                (lib.scheme or "").lower(), (lib.host or "").lower(), lib.port or default)
    except ValueError:
        return object()


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

        def request(self, method, url, *args, **kwargs):
            if kwargs.get("timeout") is None:
                kwargs["timeout"] = TIMEOUT
            self.last = None
            response = super().request(method, url, *args, **kwargs)
            self.last = response
            if response.is_redirect or 300 <= response.status_code < 400:
                raise OddAnswer(f"{origin_of(response.url)} answered {response.status_code} to "
                                f"{method} {_path(response.url)} with nowhere to go")
            return response

        def rebuild_auth(self, prepared_request, response):
            sent, status = response.request, response.status_code
            asked = f"{origin_of(sent.url)} answered {status} to {sent.method} {_path(sent.url)}"
            if _origin(prepared_request.url) != _origin(sent.url):
                raise Redirected(f"{asked}, redirecting it to {origin_of(prepared_request.url)}, "
                                 "another host: refused, nothing was sent there (if the LMS has "
                                 "moved, configure its new address)")
            if sent.method not in ("GET", "HEAD") and status not in (307, 308):
                raise OddAnswer(f"{asked}: following it would send a GET without the request's "
                                "body, so it was not followed")
            super().rebuild_auth(prepared_request, response)

    return LmsSession()


def post_each(items: Sequence[T], student: Callable[[T], str],
              post: Callable[[T], Outcome]) -> list[Outcome]:
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
            stop = fault.stop or (f"{faults} failures in a row that are the LMS's, not the "
                                  "students' (is it down?)" if faults >= DOWN_AFTER else None)
        except Exception as err:      # noqa: BLE001 - a grader bug: report what was posted, stop
            outcome = Outcome(student(item), FAILED,
                              f"the push failed: {type(err).__name__}: {err}")
            stop = "an error in the grader (above)"
        else:
            faults, stop = 0, None
        outcomes.append(outcome)
        if stop:
            why = f"the push stopped at {student(item)}: {stop}"
            return outcomes + [Outcome(student(later), NOT_TRIED, why) for later in items[i + 1:]]
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


def with_backoff(call: Callable[[], T], backoff: Backoff,
                 throttled: Callable[[Exception], bool]) -> T:
    """``call()``, retried after a growing wait while it raises an exception ``throttled``
    recognises.

    :raises Throttled: still throttled after the last retry.
    """
    for attempt in range(backoff.retries + 1):
        try:
            return call()
        except Exception as err:            # noqa: BLE001 - re-raised unless it is the LMS throttling
            if not throttled(err):
                raise
            if attempt == backoff.retries:
                raise Throttled(f"still rate-limited after {backoff.retries} retries: {err}") \
                    from None
            backoff.sleep(backoff.first * 2 ** attempt)
    raise AssertionError("unreachable")


def comment(doc: dict, score: float, release_hidden: bool, late_by_lms: bool) -> str:
    """The student's feedback as plain text: the total, each problem's points and tests passed, the
    known mistakes the failed tests matched, the public tests that failed, and how many hidden ones
    did (their diagnoses and names only when the course releases hidden details:
    ``release_hidden``). Deterministic (no time in it), so an LMS that already has it is not sent it
    again."""
    lines = [f"{doc['assignment']}: {score:g}/{doc['max_score']:g}"]
    for problem in doc["problems"]:
        tests = [t for t in doc["tests"] if t["problem"] == problem["name"]]
        passed = sum(t["status"] == "passed" for t in tests)
        lines.append(f"{problem['name']} {problem['score']:g}/{problem['max_score']:g} "
                     f"({passed}/{len(tests)} tests passed)")
        failed = [t for t in tests if t["status"] != "passed"]
        shown = [t for t in failed if t["visibility"] == "visible" or release_hidden]
        diagnoses = dict.fromkeys(line.strip() for t in shown for line in t["output"].splitlines()
                                  if line.startswith("diagnosis:"))
        lines += [f"  {d}" for d in diagnoses]
        if shown and not diagnoses:
            first = next((t["output"].splitlines()[0] for t in shown if t["output"].strip()), "")
            if first:
                lines.append(f"  first failure: {first[:300]}")
        if shown:
            names = [t["name"] for t in shown]
            more = f" and {len(names) - SHOWN_NAMES} more" if len(names) > SHOWN_NAMES else ""
            lines.append("  failed: " + ", ".join(names[:SHOWN_NAMES]) + more)
        hidden = len(failed) - len(shown)
        if hidden:
            lines.append(f"  {hidden} hidden test(s) failed (their details are not released)")
    late = doc.get("late")
    if late and late["days_late"]:
        penalty = (f": {late['penalty']:g} points off {late['raw_score']:g}." if late["penalty"]
                   else ".")
        lines.append(f"Submitted {late['days_late']} day(s) late"
                     + (": the LMS applies the late policy." if late_by_lms else penalty))
    lines += [f"Note: {note}" for note in doc.get("submission_notes", [])]
    return "\n".join(lines)
