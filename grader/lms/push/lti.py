"""LTI 1.3 Assignment and Grade Services: POST each score object to ``{lineitem}/scores``.

pylti1p3's service connector does the OAuth 2.0 client-credentials grant without a launch: a JWT
assertion (``iss`` = ``sub`` = the client id, ``aud`` = the token URL, ``iat``, ``exp``, ``jti``)
signed RS256 with the tool's private key, for the scope
``https://purl.imsglobal.org/spec/lti-ags/scope/score``; then each object is POSTed as
``application/vnd.ims.lis.v1.score+json`` with the bearer token, to the line item's path plus
``/scores``, its query kept (AGS 3.4.1). The objects are the ones ``grade export --format lti``
writes. A 429 is retried after a growing wait.

The token endpoint's answer must be an RFC 6749 section 5.1 access token response (a JSON object
whose ``access_token`` is a string of visible characters, which goes into a header), else nothing is
posted. AGS documents no body for a score's answer: any 2xx means the platform took it, anything
else fails that student.
"""
from __future__ import annotations

import re

from grader.errors import GradeError
from grader.lms.credentials import LtiCredentials
from grader.lms.push.common import (FAILED, POSTED, SHAPE_ERRORS, Backoff, LmsFault, OddAnswer,
                                    Outcome, Redirected, Throttled, describe, no_answer, one_line,
                                    post_each, redact, require, session, with_backoff)

SCORE_SCOPE = "https://purl.imsglobal.org/spec/lti-ags/scope/score"
FIELDS = {"userId": "set_user_id", "scoreGiven": "set_score_given",
          "scoreMaximum": "set_score_maximum", "activityProgress": "set_activity_progress",
          "gradingProgress": "set_grading_progress", "timestamp": "set_timestamp",
          "comment": "set_comment"}
# RFC 6749 A.12: an access token is VSCHARs; not the space either, which would split the header
ACCESS_TOKEN = re.compile(r"[\x21-\x7e]+")
NOTHING = "nothing was posted"


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
    """The LMS's answer in one line, without the access token or the tool's signed assertion should
    it echo them."""
    from urllib.parse import parse_qs

    sent = getattr(response.request, "body", None) or ""
    sent = sent.decode(errors="replace") if isinstance(sent, bytes) else str(sent)
    assertion = parse_qs(sent).get("client_assertion", [""])[0]
    return one_line(redact(response.text, *secrets, assertion), 200)


def push(objects: list[tuple[str, dict]], credentials: LtiCredentials, lineitem: str,
         backoff: Backoff = Backoff()) -> list[Outcome]:
    """POST each (student, score object); one outcome each, in order.

    :raises GradeError: before anything is posted: the key cannot sign, the token endpoint cannot
        be reached, refuses the tool's assertion, answers with no token (or redirects to another
        host).
    """
    require("pylti1p3")
    import jwt
    import requests
    from pylti1p3.assignments_grades import AssignmentsGradesService
    from pylti1p3.exception import LtiException, LtiServiceException
    from pylti1p3.registration import Registration
    from pylti1p3.service_connector import ServiceConnector

    try:     # signed once here, so that a key's error is never mistaken for the platform's answer's
        jwt.encode({"probe": 1}, credentials.private_key, algorithm="RS256")
    except (ValueError, TypeError, jwt.PyJWTError) as err:
        raise GradeError(f"the LTI private key cannot sign (RS256): {err}") from None
    registration = (Registration().set_client_id(credentials.client_id)
                    .set_auth_token_url(credentials.token_url)
                    .set_tool_private_key(credentials.private_key))
    if credentials.audience:
        registration.set_auth_audience(credentials.audience)
    http = session()
    connector = ServiceConnector(registration, requests_session=http)
    url = credentials.token_url
    try:
        token = with_backoff(lambda: connector.get_access_token([SCORE_SCOPE]), backoff, _throttled)
    except Redirected as err:
        raise GradeError(f"the LTI token request: {err}: {NOTHING}") from None
    except requests.JSONDecodeError:
        raise GradeError(f"{url}: the token endpoint's answer is not JSON ({describe(http.last)}; "
                         f"is it the platform's OAuth 2.0 token URL?): {NOTHING}") from None
    except requests.RequestException as err:
        raise GradeError(f"{url}: the LTI token endpoint cannot be reached: {no_answer(err)}") \
            from None
    except LtiServiceException as err:
        raise GradeError(f"{url}: the platform refused the tool's token request: "
                         f"{err.response.status_code} {_body(err.response)}") from None
    except KeyError:                                     # pylti1p3 reads response["access_token"]
        raise GradeError(f"{url}: the token endpoint answered without an access_token "
                         "(is it the platform's OAuth 2.0 token URL?)") from None
    except Throttled:           # (its text is the platform's answer, which may echo the assertion)
        raise GradeError(f"{url}: the token endpoint still answers 429 (too many requests) after "
                         f"{backoff.retries} retries: {NOTHING}") from None
    except (OddAnswer, *SHAPE_ERRORS) as err:            # a list, a string: not a token response
        why = str(err) if isinstance(err, OddAnswer) else describe(http.last)
        raise GradeError(f"{url}: the token endpoint's answer is not an OAuth 2.0 token response "
                         f"(RFC 6749 5.1): {one_line(why, 200)}: {NOTHING}") from None
    if not isinstance(token, str) or not ACCESS_TOKEN.fullmatch(token):
        raise GradeError(f"{url}: the token endpoint's access_token is not a token (RFC 6749 5.1: "
                         f"a string of visible characters, no spaces): {NOTHING}")
    service = AssignmentsGradesService(connector, {"scope": [SCORE_SCOPE], "lineitem": lineitem})

    def post_one(item: tuple[str, dict]) -> Outcome:
        student, obj = item
        score = f"score {obj.get('scoreGiven', 0):g}/{obj.get('scoreMaximum', 0):g}"
        try:
            with_backoff(lambda: service.put_grade(grade_of(obj)), backoff, _throttled)
        except Redirected as err:
            raise LmsFault(redact(str(err), token),
                           stop="the platform redirected a score to another host") from None
        except requests.JSONDecodeError:         # pylti1p3 reads the body only after a 2xx: taken
            return Outcome(student, POSTED, f"{score} (the platform's answer was not JSON)")
        except LtiServiceException as err:
            status = err.response.status_code
            line = f"the platform refused it: {status} {_body(err.response, token)}"
            if status == 401 or status >= 500:   # the token, or the platform: not this student's
                raise LmsFault(line) from None
            return Outcome(student, FAILED, line)
        except requests.RequestException as err:
            raise LmsFault(f"the platform did not answer: {no_answer(err)}: whether it took the "
                           "score is not known") from None
        except Throttled as err:
            raise LmsFault(redact(f"not posted: {err}", token)) from None
        except OddAnswer as err:
            raise LmsFault(redact(f"{err}: whether it took the score is not known", token)) \
                from None
        except (LtiException, *SHAPE_ERRORS) as err:  # pylti1p3 reading an unexpected answer
            raise LmsFault(redact(f"not posted: {type(err).__name__}: {err} "
                                  f"({describe(http.last)})", token)) from None
        return Outcome(student, POSTED, score)

    return post_each(objects, lambda item: item[0], post_one)
