"""LTI 1.3 Assignment and Grade Services: POST each score object to ``{lineitem}/scores``.

pylti1p3's service connector does the OAuth 2.0 client-credentials grant without a launch: a JWT assertion
(``iss`` = ``sub`` = the client id, ``aud`` = the token URL, ``iat``, ``exp``, ``jti``) signed RS256 with the
tool's private key, for the scope ``https://purl.imsglobal.org/spec/lti-ags/scope/score``; then each object
is POSTed as ``application/vnd.ims.lis.v1.score+json`` with the bearer token, to the line item's path plus
``/scores``, its query kept (AGS 3.4.1). The objects are the ones ``grade export --format lti`` writes. A
429 is retried after a growing wait.
"""
from __future__ import annotations

from grader.errors import GradeError
from grader.lms.credentials import LtiCredentials
from grader.lms.push.common import (FAILED, POSTED, Backoff, Outcome, Throttled, redact, require, session,
                                     with_backoff)

SCORE_SCOPE = "https://purl.imsglobal.org/spec/lti-ags/scope/score"
FIELDS = {"userId": "set_user_id", "scoreGiven": "set_score_given", "scoreMaximum": "set_score_maximum",
          "activityProgress": "set_activity_progress", "gradingProgress": "set_grading_progress",
          "timestamp": "set_timestamp", "comment": "set_comment"}


def _throttled(err: Exception) -> bool:
    from pylti1p3.exception import LtiServiceException

    return isinstance(err, LtiServiceException) and err.response.status_code == 429


def grade_of(obj: dict):
    """The pylti1p3 ``Grade`` whose JSON is ``obj``: its named fields, and the rest (``submission``, URL-keyed
    extensions) as extra claims."""
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
    """The LMS's answer, without the access token or the tool's signed assertion should it echo them."""
    from urllib.parse import parse_qs

    sent = getattr(response.request, "body", None) or ""
    sent = sent.decode(errors="replace") if isinstance(sent, bytes) else str(sent)
    assertion = parse_qs(sent).get("client_assertion", [""])[0]
    return redact(response.text, *secrets, assertion)


def push(objects: list[tuple[str, dict]], credentials: LtiCredentials, lineitem: str,
         backoff: Backoff = Backoff()) -> list[Outcome]:
    """POST each (student, score object); one outcome each.

    :raises GradeError: the token endpoint cannot be reached or refuses the tool's assertion.
    """
    require("pylti1p3")
    import requests
    from pylti1p3.assignments_grades import AssignmentsGradesService
    from pylti1p3.exception import LtiException, LtiServiceException
    from pylti1p3.registration import Registration
    from pylti1p3.service_connector import ServiceConnector

    registration = (Registration().set_client_id(credentials.client_id)
                    .set_auth_token_url(credentials.token_url).set_tool_private_key(credentials.private_key))
    if credentials.audience:
        registration.set_auth_audience(credentials.audience)
    connector = ServiceConnector(registration, requests_session=session())
    try:
        token = with_backoff(lambda: connector.get_access_token([SCORE_SCOPE]), backoff, _throttled)
    except requests.RequestException as err:
        raise GradeError(f"{credentials.token_url}: the LTI token endpoint cannot be reached: "
                         f"{type(err).__name__}") from None
    except LtiServiceException as err:
        raise GradeError(f"{credentials.token_url}: the platform refused the tool's token request: "
                         f"{err.response.status_code} {_body(err.response)[:200]}") from None
    except KeyError:                                     # pylti1p3 reads response["access_token"]
        raise GradeError(f"{credentials.token_url}: the token endpoint answered without an access_token "
                         "(is it the platform's OAuth 2.0 token URL?)") from None
    except Throttled as err:
        raise GradeError(f"{credentials.token_url}: {err}") from None
    except (ValueError, TypeError) as err:               # pyjwt: the key is not an RSA private key
        raise GradeError(f"the LTI private key cannot sign (RS256): {err}") from None
    service = AssignmentsGradesService(connector, {"scope": [SCORE_SCOPE], "lineitem": lineitem})
    outcomes = []
    for student, obj in objects:
        try:
            with_backoff(lambda: service.put_grade(grade_of(obj)), backoff, _throttled)
        except LtiServiceException as err:
            outcomes.append(Outcome(student, FAILED, f"the platform refused it: {err.response.status_code} "
                                    f"{_body(err.response, token)[:200]}"))
            continue
        except requests.JSONDecodeError:                 # pylti1p3 reads the body only after a 2xx: it was taken
            outcomes.append(Outcome(student, POSTED, f"score {obj.get('scoreGiven', 0):g}/"
                                    f"{obj.get('scoreMaximum', 0):g} (the platform's answer was not JSON)"))
            continue
        except (requests.RequestException, LtiException, Throttled) as err:
            outcomes.append(Outcome(student, FAILED, redact(f"not posted: {err}", token)))
            continue
        outcomes.append(Outcome(student, POSTED, f"score {obj.get('scoreGiven', 0):g}/{obj.get('scoreMaximum', 0):g}"))
    return outcomes
