"""Loopback LMS servers for the push tests, on 127.0.0.1 (a free port), each answering as its
documentation says, so that a malformed request fails the test rather than passing silently.

- :class:`Canvas`: the REST API's course, assignment, submissions list
  (``include[]=submission_comments``, ``per_page``, ``Link: <...>; rel="next"`` pagination) and
  submission update (``PUT`` with the form fields ``submission[posted_grade]`` and
  ``comment[text_comment]``), behind ``Authorization: Bearer <token>`` (401 with
  ``WWW-Authenticate`` otherwise), 404 for unknown routes, methods and users, 400 for unknown form
  fields or a grade that is not points; throttling as Canvas documents it: ``403 Forbidden (Rate
  Limit Exceeded)`` with ``X-Rate-Limit-Remaining`` (``throttle_status`` 429: the newer docs' "429
  Forbidden (Rate Limit Exceeded)").
- :class:`Ags`: an OAuth 2.0 token endpoint (RFC 6749 client credentials, RFC 7523 JWT assertion)
  that checks the grant type, the assertion type, the RS256 signature with the tool's public key,
  ``iss`` = ``sub`` = the client id, ``aud`` = the token URL, ``exp``/``iat``/``jti`` (a jti used
  twice is refused) and the scope; and a line item's ``/scores`` endpoint (AGS 2.0 section 3.4) that
  checks the bearer token, the content type, the query the line item's URL carries, and the score
  object: its required fields, types and enumerations, ``scoreGiven <= scoreMaximum``, a timestamp
  with a zone that increases per user, a user it knows.
"""

from __future__ import annotations

import json
import re
import secrets
import threading
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import jwt

SCORE_SCOPE = "https://purl.imsglobal.org/spec/lti-ags/scope/score"
SCORE_TYPE = "application/vnd.ims.lis.v1.score+json"


class _Server:
    """An HTTP server in a thread; each request is logged as (method, path, query, form or JSON
    body)."""

    def __init__(self):
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def _any(self):
                parts = urlsplit(self.path)
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with owner.lock:
                    status, headers, payload = owner.handle(
                        self.command, parts.path, parse_qs(parts.query), self.headers, body
                    )
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _any

        self.lock = threading.Lock()
        self.log: list[tuple[str, str, dict, object]] = []
        self.throttle = 0  # answer this many next requests as throttled
        self.throttle_status = 403  # Canvas's documented throttle; its newer docs say 429
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()

    def handle(self, method, path, query, headers, body):
        raise NotImplementedError


class Canvas(_Server):
    """One course, one assignment, its students' submissions (``user_id -> {"score",
    "comments"}``)."""

    PAGE_MAX = (
        2  # Canvas caps per_page (at 100); a small cap makes the client follow the Link header
    )

    def __init__(
        self,
        token: str,
        course_id: str,
        assignment_id: str,
        points_possible: float,
        users: list[str],
    ):
        super().__init__()
        self.token, self.course_id, self.assignment_id = token, course_id, assignment_id
        self.points_possible = points_possible
        self.submissions = {u: {"score": None, "comments": []} for u in users}

    def _submission(self, user: str, comments: bool) -> dict:
        s = self.submissions[user]
        doc = {
            "id": 1000 + int(user),
            "user_id": int(user),
            "assignment_id": int(self.assignment_id),
            "score": s["score"],
            "grade": None if s["score"] is None else str(s["score"]),
            "workflow_state": "unsubmitted" if s["score"] is None else "graded",
        }
        if comments:
            doc["submission_comments"] = [
                {"id": i, "author_id": 1, "comment": c} for i, c in enumerate(s["comments"])
            ]
        return doc

    def handle(self, method, path, query, headers, body):
        form = parse_qs(body.decode(), keep_blank_values=True) if body else {}
        self.log.append((method, path, query, form))
        if headers.get("Authorization") != f"Bearer {self.token}":
            return (
                401,
                {"WWW-Authenticate": 'Bearer realm="canvas-lms"'},
                {"errors": [{"message": "Invalid access token."}]},
            )
        if self.throttle:
            self.throttle -= 1
            return (
                self.throttle_status,
                {"X-Rate-Limit-Remaining": "0.0", "X-Request-Cost": "0.1"},
                f"{self.throttle_status} Forbidden (Rate Limit Exceeded)\n".encode(),
            )
        not_found = (404, {}, {"errors": [{"message": "The specified resource does not exist."}]})
        base = f"/api/v1/courses/{self.course_id}"
        assignment = f"{base}/assignments/{self.assignment_id}"
        if method == "GET" and path == base and not query:
            return 200, {}, {"id": int(self.course_id), "name": "GPT-2 from scratch"}
        if method == "GET" and path == assignment and not query:
            return (
                200,
                {},
                {
                    "id": int(self.assignment_id),
                    "course_id": int(self.course_id),
                    "name": "the-block",
                    "points_possible": self.points_possible,
                    "grading_type": "points",
                },
            )
        if method == "GET" and path == f"{assignment}/submissions":
            unknown = set(query) - {"include[]", "per_page", "page"}
            if unknown or query.get("include[]", ["submission_comments"]) != [
                "submission_comments"
            ]:
                return 400, {}, {"errors": [{"message": f"unknown parameters {sorted(unknown)}"}]}
            per_page = min(int(query.get("per_page", ["10"])[0]), self.PAGE_MAX)
            page = int(query.get("page", ["1"])[0])
            users = sorted(self.submissions, key=int)
            chunk = users[(page - 1) * per_page : page * per_page]
            link = {}
            if page * per_page < len(users):
                link["Link"] = (
                    f"<{self.url}{path}?include[]=submission_comments"
                    f"&page={page + 1}&per_page={per_page}>;"
                    ' rel="next"'
                )
            return 200, link, [self._submission(u, "include[]" in query) for u in chunk]
        match = re.fullmatch(re.escape(assignment) + r"/submissions/(\d+)", path)
        if method == "PUT" and match:
            user = match.group(1)
            if user not in self.submissions:
                return not_found
            if set(form) - {"submission[posted_grade]", "comment[text_comment]"} or not form:
                return 400, {}, {"errors": [{"message": f"unexpected parameters {sorted(form)}"}]}
            if "submission[posted_grade]" in form:
                grade = form["submission[posted_grade]"][0]
                if not re.fullmatch(r"\d+(\.\d+)?", grade):
                    return 400, {}, {"errors": [{"message": f"not a grade in points: {grade!r}"}]}
                self.submissions[user]["score"] = float(grade)
            if "comment[text_comment]" in form:
                self.submissions[user]["comments"].append(form["comment[text_comment]"][0])
            return 200, {}, self._submission(user, True)
        return not_found

    def puts(self) -> list[tuple[str, dict]]:
        """The PUT requests: (path, form)."""
        return [(path, form) for method, path, _, form in self.log if method == "PUT"]


class Ags(_Server):
    """A platform: its token endpoint (``/login/oauth2/token``) and one line item (``/lineitems/7``,
    whose URL carries a query, as Canvas's do)."""

    LINEITEM_PATH = "/api/lti/courses/1/line_items/7"

    def __init__(self, client_id: str, public_key_pem: str, users: list[str]):
        super().__init__()
        self.client_id, self.public_key = client_id, public_key_pem
        self.users = set(users)
        self.token_url = f"{self.url}/login/oauth2/token"
        self.lineitem = f"{self.url}{self.LINEITEM_PATH}?resource_link_id=abc"
        self.tokens: set[str] = set()
        self.jtis: set[str] = set()
        self.scores: dict[str, list[dict]] = {}
        self.throttle_scores = 0

    def handle(self, method, path, query, headers, body):
        self.log.append((method, path, query, body))
        if method == "POST" and path == urlsplit(self.token_url).path:
            return self._token(headers, body)
        if method == "POST" and path == self.LINEITEM_PATH + "/scores":
            return self._score(query, headers, body)
        return 404, {}, {"error": "not found"}

    def _token(self, headers, body):
        def refuse(error, why, status=400):
            return status, {}, {"error": error, "error_description": why}

        if not headers.get("Content-Type", "").startswith("application/x-www-form-urlencoded"):
            return refuse("invalid_request", "form-encoded body expected")
        form = {k: v[0] for k, v in parse_qs(body.decode()).items()}
        if form.get("grant_type") != "client_credentials":
            return refuse("unsupported_grant_type", form.get("grant_type"))
        if (
            form.get("client_assertion_type")
            != "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
        ):
            return refuse("invalid_request", "client_assertion_type")
        try:
            claims = jwt.decode(
                form.get("client_assertion", ""),
                self.public_key,
                algorithms=["RS256"],
                audience=self.token_url,
                issuer=self.client_id,
                options={"require": ["iss", "sub", "aud", "exp", "iat", "jti"]},
            )
        except jwt.PyJWTError as err:
            return refuse("invalid_client", f"assertion: {err}", 401)
        if claims["sub"] != self.client_id or claims["jti"] in self.jtis:
            return refuse("invalid_client", "sub or a reused jti", 401)
        self.jtis.add(claims["jti"])
        if SCORE_SCOPE not in form.get("scope", "").split():
            return refuse("invalid_scope", form.get("scope"))
        token = secrets.token_urlsafe(16)
        self.tokens.add(token)
        return (
            200,
            {},
            {
                "access_token": token,
                "token_type": "Bearer",
                "expires_in": 3600,
                "scope": SCORE_SCOPE,
            },
        )

    def _score(self, query, headers, body):
        auth = headers.get("Authorization", "")
        if not auth.startswith("Bearer ") or auth[7:] not in self.tokens:
            return 401, {"WWW-Authenticate": "Bearer"}, {"error": "invalid_token"}
        if query != {"resource_link_id": ["abc"]}:
            return 404, {}, {"error": "no such line item (its query was lost)"}
        if headers.get("Content-Type") != SCORE_TYPE:
            return 415, {}, {"error": f"Content-Type must be {SCORE_TYPE}"}
        if self.throttle_scores:
            self.throttle_scores -= 1
            return 429, {"Retry-After": "0"}, {"error": "too many requests"}
        try:
            score = json.loads(body)
        except ValueError:
            return 400, {}, {"error": "not JSON"}
        problem = self._invalid(score)
        if problem:
            return 400, {}, {"error": problem}
        history = self.scores.setdefault(score["userId"], [])
        stamp = datetime.fromisoformat(score["timestamp"].replace("Z", "+00:00"))
        if history and stamp <= datetime.fromisoformat(
            history[-1]["timestamp"].replace("Z", "+00:00")
        ):
            return 409, {}, {"error": "timestamp not after the last score's"}
        history.append(score)
        return 200, {}, {"resultUrl": f"{self.url}{self.LINEITEM_PATH}/results/{score['userId']}"}

    def _invalid(self, s) -> str | None:
        """Why ``s`` is not an AGS score object (section 3.4), or None."""
        if not isinstance(s, dict):
            return "not an object"
        for key in ("userId", "activityProgress", "gradingProgress", "timestamp"):
            if key not in s:
                return f"{key} missing"
        if s["userId"] not in self.users:
            return f"unknown user {s['userId']!r}"
        if s["activityProgress"] not in (
            "Initialized",
            "Started",
            "InProgress",
            "Submitted",
            "Completed",
        ):
            return "activityProgress"
        if s["gradingProgress"] not in (
            "FullyGraded",
            "Pending",
            "PendingManual",
            "Failed",
            "NotReady",
        ):
            return "gradingProgress"
        if "scoreGiven" in s:
            given, maximum = s["scoreGiven"], s.get("scoreMaximum")
            if not isinstance(given, (int, float)) or not isinstance(maximum, (int, float)):
                return "scoreGiven needs a numeric scoreMaximum"
            if not 0 <= given <= maximum or maximum <= 0:
                return "scoreGiven must be within 0..scoreMaximum"
        if not re.fullmatch(
            r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+(Z|[+-]\d\d:\d\d)", str(s["timestamp"])
        ):
            return "timestamp: ISO 8601 with sub-seconds and a zone"
        if "comment" in s and (not isinstance(s["comment"], str) or not s["comment"].strip()):
            return "comment: plain text, omitted when empty"
        return None


class Elsewhere:
    """Another host, which no push may ever contact: 127.0.0.2 by default (all of 127/8 is loopback
    on Linux), or 127.0.0.1 on another port. It counts every connection (a TLS hello an https
    redirect would send included) and logs every request as (method, path, headers, body); it
    answers a POST as a token endpoint would (an ``access_token``) and anything else with ``{}``, so
    that a push which followed a redirect here would carry on as if nothing had happened, with a
    token this host made."""

    STOLEN = "token-minted-elsewhere"

    def __init__(self, host: str = "127.0.0.2"):
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def _any(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with owner.lock:
                    owner.log.append((self.command, self.path, dict(self.headers), body))
                payload = (
                    {
                        "access_token": owner.STOLEN,
                        "token_type": "Bearer",
                        "expires_in": 3600,
                        "scope": SCORE_SCOPE,
                    }
                    if self.command == "POST"
                    else {}
                )
                data = json.dumps(payload).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _any

        class Server(ThreadingHTTPServer):
            def verify_request(self, request, client_address):
                with owner.lock:
                    owner.connections += 1
                return True

            def handle_error(self, request, client_address):  # a TLS hello is not HTTP: not shown
                pass

        self.lock = threading.Lock()
        self.log: list[tuple[str, str, dict, bytes]] = []
        self.connections = 0
        self.httpd = Server((host, 0), Handler)
        self.url = f"http://{host}:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()
