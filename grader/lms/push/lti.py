"""LTI 1.3 Assignment and Grade Services: POST each score object to ``{lineitem}/scores``.

pylti1p3's service connector does the OAuth 2.0 client-credentials grant without a launch: a JWT
assertion (``iss`` = ``sub`` = the client id, ``aud`` = the token URL, ``iat``, ``exp``, ``jti``)
signed RS256 with the tool's private key, whose header names the key: ``kid``, the key's RFC 7638
thumbprint (pylti1p3 computes it from the public key; the JWKS ``grade push lti-key`` writes
carries the same ``kid``, and a platform that reads the tool's keys from a key set, Moodle's
"Keyset URL" or Canvas's "Public JWK URL", picks the key by it and refuses an assertion without
one); scope ``https://purl.imsglobal.org/spec/lti-ags/scope/score``. Then each object is POSTed as
``application/vnd.ims.lis.v1.score+json`` with the bearer token, to the line item's path plus
``/scores``, its query kept (AGS 3.4.1). A 429 is retried after a growing wait.

The token is renewed before its ``expires_in`` runs out (a minute early, or a tenth of its life
when that is shorter), and once when a score is answered 401 (RFC 6750's ``invalid_token``: a
platform that revoked or expired it early; Moodle answers a bare 401): a class outlives one
token.

Only what changed is sent (:func:`plan`): the push ledger beside the score files says which score
object went last to each user of this line item; an object equal to it but for its time is not
sent again (each re-post to Canvas is a new submission attempt and a comment). A changed one is
stamped with the time the push found it changed, later than the user's last one by at least a
second (Moodle compares timestamps to the second, and refuses one not after the stored one;
Canvas refuses one before the result's), and carries Canvas's extension
``https://canvas.instructure.com/lti/submission`` ``{"new_submission": false}``: a re-grade, not a
new attempt (other platforms ignore an extension, AGS 3.1.2).

The token endpoint's answer must be an RFC 6749 section 5.1 access token response (a JSON object
whose ``access_token`` is a string of visible characters, which goes into a header), else nothing is
posted. AGS documents no body for a score's answer: any 2xx means the platform took it, anything
else fails that student.
"""

from __future__ import annotations

import re
import time
from datetime import datetime, timedelta, timezone
from typing import Callable

from grader.errors import GradeError
from grader.lms.credentials import LtiCredentials
from grader.lms.push.answers import describe, first_line, one_line
from grader.lms.push.common import (
    FAILED,
    POSTED,
    SHAPE_ERRORS,
    UNCHANGED,
    Backoff,
    LmsFault,
    OddAnswer,
    Outcome,
    Redirected,
    Throttled,
    no_answer,
    post_each,
    redact,
    require,
    session,
    with_backoff,
)
from grader.lms.push.ledger import Ledger, digest

SCORE_SCOPE = "https://purl.imsglobal.org/spec/lti-ags/scope/score"
CANVAS_SUBMISSION = "https://canvas.instructure.com/lti/submission"
FIELDS = {
    "userId": "set_user_id",
    "scoreGiven": "set_score_given",
    "scoreMaximum": "set_score_maximum",
    "activityProgress": "set_activity_progress",
    "gradingProgress": "set_grading_progress",
    "timestamp": "set_timestamp",
    "comment": "set_comment",
}
# RFC 6749 A.12: an access token is VSCHARs; not the space either, which would split the header
ACCESS_TOKEN = re.compile(r"[\x21-\x7e]+")
NOTHING = "nothing was posted"
EARLY = 60.0  # seconds before a token's expires_in runs out that it is renewed


def _throttled(err: Exception) -> bool:
    from pylti1p3.exception import LtiServiceException

    return isinstance(err, LtiServiceException) and err.response.status_code == 429


def grade_of(obj: dict):
    """The pylti1p3 ``Grade`` whose JSON is ``obj``: its named fields, and the rest (``submission``,
    URL-keyed extensions) as extra claims."""
    from pylti1p3.grade import Grade

    grade = Grade()
    for key, setter in FIELDS.items():
        if key in obj:
            getattr(grade, setter)(obj[key])
    extra = {k: v for k, v in obj.items() if k not in FIELDS}
    if extra:
        grade.set_extra_claims(extra)
    return grade


def _body(response, *secrets: str) -> str:
    """The LMS's answer in one line (a page's first line of text, not its markup), without the
    access token or the tool's signed assertion should it echo them."""
    from urllib.parse import parse_qs

    sent = getattr(response.request, "body", None) or ""
    sent = sent.decode(errors="replace") if isinstance(sent, bytes) else str(sent)
    assertion = parse_qs(sent).get("client_assertion", [""])[0]
    kind = response.headers.get("Content-Type", "").lower()
    text = first_line(response, 200) if "html" in kind else one_line(response.text, 200)
    return one_line(redact(text, *secrets, assertion), 200)


def stamp(now: datetime, last: str | None) -> str:
    """The timestamp of a changed score: ``now``, or the second after the user's ``last`` one when
    ``now`` is not in a later second (ISO 8601, milliseconds, UTC)."""
    now = now.astimezone(timezone.utc)
    try:
        before = datetime.fromisoformat(last.replace("Z", "+00:00")) if last else None
    except ValueError:
        before = None
    if before is not None and now.replace(microsecond=0) <= before.replace(microsecond=0):
        now = before.astimezone(timezone.utc).replace(microsecond=0) + timedelta(seconds=1)
    return now.isoformat(timespec="milliseconds")


def _sent(obj: dict) -> str:
    """What identifies a score object but its time: equal ones are the same score."""
    return digest({k: v for k, v in obj.items() if k != "timestamp"})


def plan(
    objects: list[tuple[str, dict]], ledger: Ledger | None, now: datetime
) -> tuple[list[tuple[str, dict]], list[Outcome]]:
    """The objects to send (each with Canvas's extension and its timestamp) and the outcomes of
    those not to send (``unchanged``: the ledger says this score went last)."""
    send, unchanged = [], []
    for student, obj in objects:
        obj = {**obj, CANVAS_SUBMISSION: {"new_submission": False}}
        entry = ledger.get(obj["userId"]) if ledger else {}
        if entry.get("sent") == _sent(obj):
            unchanged.append(
                Outcome(
                    student,
                    UNCHANGED,
                    f"score {obj.get('scoreGiven', 0):g}/"
                    f"{obj.get('scoreMaximum', 0):g} sent at "
                    f"{entry.get('timestamp')} (the push ledger)",
                )
            )
            continue
        send.append((student, {**obj, "timestamp": stamp(now, entry.get("timestamp"))}))
    return send, unchanged


class _BadToken(Exception):
    """The token endpoint's answer is not an RFC 6749 5.1 access token response."""


def _connector(registration, http, clock: Callable[[], float]):
    """pylti1p3's service connector, which keeps a token until told to renew it: it also renews
    one whose ``expires_in`` is about to run out, checks each token's shape, and keeps every token
    it got (to redact them from what is printed)."""
    from pylti1p3.service_connector import ServiceConnector

    class Connector(ServiceConnector):
        expires: float | None = None
        tokens: list[str]

        def renew(self) -> None:
            self._access_tokens.clear()

        def get_access_token(self, scopes):
            if self.expires is not None and clock() >= self.expires:
                self.renew()  # before it runs out, not after a 401
            fresh, asked = not self._access_tokens, clock()
            token = super().get_access_token(scopes)
            if fresh:
                if not isinstance(token, str) or not ACCESS_TOKEN.fullmatch(token):
                    self.renew()
                    raise _BadToken(
                        "access_token is not a token (RFC 6749 5.1: a string of "
                        "visible characters, no spaces)"
                    )
                self.tokens.append(token)
                answer = http.last.json() if http.last is not None else {}
                life = answer.get("expires_in") if isinstance(answer, dict) else None
                self.expires = None
                if isinstance(life, (int, float)) and not isinstance(life, bool) and life > 0:
                    self.expires = asked + life - min(EARLY, life / 10)
            return token

    connector = Connector(registration, requests_session=http)
    connector.tokens = []
    return connector


def push(
    objects: list[tuple[str, dict]],
    credentials: LtiCredentials,
    lineitem: str,
    backoff: Backoff = Backoff(),
    *,
    ledger: Ledger | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> list[Outcome]:
    """POST each (student, score object) :func:`plan` chose; one outcome each, in order. Each one
    the platform took is recorded in ``ledger``.

    :raises GradeError: before anything is posted: the key cannot sign, the token endpoint cannot
        be reached, refuses the tool's assertion, answers with no token (or redirects to another
        host).
    """
    require("pylti1p3")
    import jwt
    import requests
    from cryptography.hazmat.primitives import serialization
    from pylti1p3.assignments_grades import AssignmentsGradesService
    from pylti1p3.exception import LtiException, LtiServiceException
    from pylti1p3.registration import Registration

    try:  # signed once here, so that a key's error is never mistaken for the platform's answer's
        jwt.encode({"probe": 1}, credentials.private_key, algorithm="RS256")
        public = (
            serialization.load_pem_private_key(credentials.private_key.encode(), password=None)
            .public_key()
            .public_bytes(
                serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
            )
            .decode()
        )
    except (ValueError, TypeError, jwt.PyJWTError) as err:
        raise GradeError(f"the LTI private key cannot sign (RS256): {err}") from None
    registration = (
        Registration()
        .set_client_id(credentials.client_id)
        .set_auth_token_url(credentials.token_url)
        .set_tool_private_key(credentials.private_key)
        .set_tool_public_key(public)
    )  # the assertion's kid
    if credentials.audience:
        registration.set_auth_audience(credentials.audience)
    http = session()
    connector = _connector(registration, http, clock)
    url = credentials.token_url
    try:
        with_backoff(lambda: connector.get_access_token([SCORE_SCOPE]), backoff, _throttled)
    except Redirected as err:
        raise GradeError(f"the LTI token request: {err}: {NOTHING}") from None
    except requests.JSONDecodeError:
        raise GradeError(
            f"{url}: the token endpoint's answer is not JSON ({describe(http.last)}; "
            f"is it the platform's OAuth 2.0 token URL?): {NOTHING}"
        ) from None
    except requests.RequestException as err:
        raise GradeError(
            f"{url}: the LTI token endpoint cannot be reached: {no_answer(err)}"
        ) from None
    except LtiServiceException as err:
        raise GradeError(
            f"{url}: the platform refused the tool's token request: "
            f"{err.response.status_code} {_body(err.response)}"
        ) from None
    except KeyError:  # pylti1p3 reads response["access_token"]
        raise GradeError(
            f"{url}: the token endpoint answered without an access_token "
            "(is it the platform's OAuth 2.0 token URL?)"
        ) from None
    except Throttled:  # (its text is the platform's answer, which may echo the assertion)
        raise GradeError(
            f"{url}: the token endpoint still answers 429 (too many requests) after "
            f"{backoff.retries} retries: {NOTHING}"
        ) from None
    except _BadToken as err:
        raise GradeError(f"{url}: the token endpoint's {err}: {NOTHING}") from None
    except (OddAnswer, *SHAPE_ERRORS) as err:  # a list, a string: not a token response
        why = str(err) if isinstance(err, OddAnswer) else describe(http.last)
        raise GradeError(
            f"{url}: the token endpoint's answer is not an OAuth 2.0 token response "
            f"(RFC 6749 5.1): {one_line(why, 200)}: {NOTHING}"
        ) from None
    service = AssignmentsGradesService(connector, {"scope": [SCORE_SCOPE], "lineitem": lineitem})

    def hide(text: str) -> str:
        return redact(text, *connector.tokens)

    def token() -> None:
        """A token for the next score: the one there, or a new one when it is about to expire or
        was refused (a failure here is the platform's, never the student's)."""
        try:
            with_backoff(lambda: connector.get_access_token([SCORE_SCOPE]), backoff, _throttled)
        except Redirected:
            raise
        except LtiServiceException as err:
            raise LmsFault(
                f"the token endpoint refused a new token: {err.response.status_code} "
                f"{_body(err.response, *connector.tokens)}"
            ) from None
        except requests.JSONDecodeError:
            raise LmsFault(
                f"a new token: the token endpoint's answer is not JSON ({describe(http.last)})"
            ) from None
        except requests.RequestException as err:
            raise LmsFault(f"a new token: the token endpoint: {no_answer(err)}") from None
        except (Throttled, _BadToken, KeyError, *SHAPE_ERRORS) as err:
            raise LmsFault(
                hide(f"a new token: the token endpoint's answer: {type(err).__name__}: {err}")
            ) from None

    def send(obj: dict) -> None:
        """POST ``obj``; on a 401, once more with a fresh token (the platform let it expire, or
        revoked it)."""
        token()
        try:
            with_backoff(lambda: service.put_grade(grade_of(obj)), backoff, _throttled)
        except LtiServiceException as err:
            if err.response.status_code != 401:
                raise
            connector.renew()
            token()
            with_backoff(lambda: service.put_grade(grade_of(obj)), backoff, _throttled)

    def post_one(item: tuple[str, dict]) -> Outcome:
        student, obj = item
        score = f"score {obj.get('scoreGiven', 0):g}/{obj.get('scoreMaximum', 0):g}"
        try:
            send(obj)
        except Redirected as err:
            raise LmsFault(
                hide(str(err)), stop="the platform redirected a score to another host"
            ) from None
        except requests.JSONDecodeError:  # pylti1p3 reads the body only after a 2xx: taken
            score += " (the platform's answer was not JSON)"
        except LtiServiceException as err:
            status = err.response.status_code
            line = f"the platform refused it: {status} {_body(err.response, *connector.tokens)}"
            if status == 401 or status >= 500:  # the token, or the platform: not this student's
                raise LmsFault(line) from None
            return Outcome(student, FAILED, line)
        except requests.RequestException as err:
            raise LmsFault(
                f"the platform did not answer: {no_answer(err)}: whether it took the "
                "score is not known"
            ) from None
        except Throttled as err:
            raise LmsFault(hide(f"not posted: {err}")) from None
        except OddAnswer as err:
            raise LmsFault(hide(f"{err}: whether it took the score is not known")) from None
        except (LtiException, *SHAPE_ERRORS) as err:  # pylti1p3 reading an unexpected answer
            raise LmsFault(
                hide(f"not posted: {type(err).__name__}: {err} ({describe(http.last)})")
            ) from None
        if ledger is not None:
            ledger.record(
                obj["userId"], student=student, sent=_sent(obj), timestamp=obj["timestamp"]
            )
        return Outcome(student, POSTED, score)

    return post_each(objects, lambda item: item[0], post_one)
