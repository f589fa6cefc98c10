"""Loopback LMS platforms for issue 29's push tests, each written from the platform's documentation
(the sources are named at each class), answering a malformed request as the platform would so
that it fails the test instead of passing silently.

- :class:`CanvasCourse`: a Canvas course and assignment behind the REST API: the submissions list
  (``include[]=submission_comments``; each submission with ``score``, ``entered_score``,
  ``excused``, comments with their ``attachments``), grade or comment on a submission (``PUT``
  with ``submission[posted_grade]``, ``comment[text_comment]``, ``comment[file_ids][]``), a
  submission comment's file upload in its three documented steps (``POST .../comments/files``,
  the upload to a :class:`FileStore`, the confirmation), the bulk ``update_grades`` with its
  Progress (``GET /api/v1/progress/:id``), throttling (403 "Rate Limit Exceeded"), a sign-in
  page's 401.
- :class:`FileStore`: where Canvas's ``upload_url`` points (an S3 bucket, inst-fs): another host,
  which takes the signed ``upload_params`` and ``file`` last as multipart/form-data, never the
  token, and answers with a redirect (or 201 Created) to Canvas's confirmation.
- :class:`LtiPlatform`: an LTI 1.3 platform's OAuth 2.0 token endpoint that reads the tool's
  keys from a registered JWKS (Moodle's "Keyset URL", Canvas's "Public JWK URL") and so needs the
  assertion's ``kid``, tokens that expire after ``expires_in`` (401 ``invalid_token``, RFC 6750,
  after), and a line item's scores as Canvas (a timestamp not before the result's, the
  ``https://canvas.instructure.com/lti/submission`` extension, a submission attempt per new
  submission) or Moodle (a timestamp not after the stored one, to the second: 409) take them.

Sources: Canvas REST API "Submissions" (update, bulk_update; canvas-lms
app/controllers/submissions_api_controller.rb), "Submission Comments" (create_file), "Uploading
Files" (doc/api/file_uploads.md), "Progress"; Submission.process_bulk_update
(app/models/submission.rb: a missing user fails the Progress with "Couldn't find User(s) with API
ids ..."); canvas-lms app/controllers/lti/ims/scores_controller.rb; 1EdTech AGS 2.0 section 3.4;
RFC 6749 5.1/5.2, RFC 6750 3.1, RFC 7523, RFC 7638; Moodle mod/lti (lti_verify_jwt_signature:
JWK::parseKeySet then JWT::decode, which needs a kid) and gradebookservices scores.php.
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
import re
import secrets
import threading
import time
from datetime import datetime
from email.parser import BytesParser
from email.policy import HTTP
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs

import jwt
from lms_servers import SCORE_SCOPE, SCORE_TYPE, Ags, _Server

CANVAS_EXT = "https://canvas.instructure.com/lti/submission"
SIGN_IN_PAGE = (
    b"<!DOCTYPE html>\n<html><head><title>Log In to Canvas</title>\n<style>p{}</style>"
    b"</head>\n<body><h1>Your session has expired</h1><p>Please log in again.</p>"
    b"</body></html>"
)


def thumbprint(jwk: dict) -> str:
    """RFC 7638: the SHA-256 of the JWK's required members (RSA: e, kty, n) in lexicographic order,
    no whitespace, base64url without padding (computed here from the RFC, not by a library)."""
    canonical = json.dumps(
        {k: jwk[k] for k in ("e", "kty", "n")}, separators=(",", ":"), sort_keys=True
    )
    return (
        base64.urlsafe_b64encode(hashlib.sha256(canonical.encode()).digest()).rstrip(b"=").decode()
    )


def multipart(headers, body: bytes) -> list[tuple[str, str | None, bytes]]:
    """A multipart/form-data body's parts, in order: (name, filename, content)."""
    message = BytesParser(policy=HTTP).parsebytes(
        f"Content-Type: {headers.get('Content-Type', '')}\r\n\r\n".encode() + body
    )
    if not message.is_multipart():
        return []
    parts = []
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        parts.append((name, part.get_filename(), part.get_payload(decode=True) or b""))
    return parts


class FileStore:
    """Where Canvas's upload_url points: another host. Each upload slot (made by
    :meth:`CanvasCourse`'s step 1) has its signed params; a POST must carry exactly them and
    ``file`` last (Uploading Files, step 2), and no Authorization header ("The access token is not
    sent with this request"). It answers ``mode`` "redirect": 301 to Canvas's create_success,
    "created": 201 Created with that Location (and no body), "elsewhere": a 301 to another host's
    confirmation (which a tool must not follow with the token)."""

    def __init__(self):
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with owner.lock:
                    status, headers = owner.take(self.path, self.headers, body)
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.lock = threading.Lock()
        self.slots: dict[str, dict] = {}
        self.log: list[tuple[str, dict, list]] = []
        self.mode = "redirect"
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()

    def take(self, path, headers, body):
        parts = multipart(headers, body)
        self.log.append((path, dict(headers), parts))
        slot = self.slots.get(path)
        if slot is None or "Authorization" in headers:
            return 403, {}
        fields = [(n, c.decode()) for n, f, c in parts[:-1]]
        last = parts[-1] if parts else (None, None, b"")
        if fields != list(slot["params"].items()) or last[0] != "file" or not last[1]:
            return 400, {}  # the signed params, as given, then file
        slot["content"] = last[2]
        confirm = slot["confirm"]
        if self.mode == "created":
            return 201, {"Location": confirm}
        if self.mode == "elsewhere":
            return 301, {"Location": confirm.replace("127.0.0.1", "127.0.0.2")}
        return 301, {"Location": confirm}


class CanvasCourse(_Server):
    """One course, one assignment worth ``points``, its students (Canvas user ids). State per user:
    ``score`` (and the ``entered_score`` a grade was posted as), ``excused``, ``comments`` (dicts:
    ``comment``, ``attachments``), ``attempt``. The token is ``token``; ``sign_in`` answers every
    request with a login page's 401 (what a proxy or an SSO front does to an expired token)."""

    PAGE_MAX = 50

    def __init__(
        self,
        token: str,
        course_id: str,
        assignment_id: str,
        points: float,
        users: list[str],
        store: FileStore,
    ):
        super().__init__()
        self.token, self.course_id, self.assignment_id = token, course_id, assignment_id
        self.points, self.store = points, store
        self.users = {
            u: {"score": None, "excused": False, "comments": [], "graded_by": []} for u in users
        }
        self.files: dict[int, dict] = {}
        self.jobs: dict[int, dict] = {}
        self.ids = itertools.count(501)
        self.sign_in = False
        self.stall_jobs = False  # a job's Progress stays "running" for ever
        self.throttle_when = lambda method, path: False
        self.late_deduction = 0.0  # Canvas's late policy: points off what is posted
        self.unexcused: list[str] = []  # users whose excuse a grade ended (must stay empty)

    # -- the answers -----------------------------------------------------------------------

    def _submission(self, user: str) -> dict:
        s = self.users[user]
        entered = s["score"]
        score = None if entered is None else max(entered - self.late_deduction, 0.0)
        return {
            "id": 2000 + int(user),
            "user_id": int(user),
            "assignment_id": int(self.assignment_id),
            "score": score,
            "entered_score": entered,
            "points_deducted": self.late_deduction
            if entered is not None and self.late_deduction
            else None,
            "grade": None if score is None else f"{score:g}",
            "excused": s["excused"],
            "workflow_state": "graded" if score is not None or s["excused"] else "submitted",
            "submission_comments": [
                {
                    "id": 9000 + i,
                    "author_id": 1,
                    "comment": c["comment"],
                    "attachments": [self._file_json(f) for f in c["attachments"]],
                }
                for i, c in enumerate(s["comments"])
            ],
        }

    def _file_json(self, file_id: int) -> dict:
        f = self.files[file_id]
        return {
            "id": file_id,
            "display_name": f["name"],
            "filename": f["name"],
            "content-type": f["content_type"],
            "size": len(f.get("content") or b""),
            "url": f"{self.url}/files/{file_id}/download",
        }

    def _progress(self, job_id: int) -> dict:
        job = self.jobs[job_id]
        return {
            "id": job_id,
            "context_id": int(self.course_id),
            "context_type": "Course",
            "user_id": 1,
            "tag": "submissions_update",
            "completion": job["completion"],
            "workflow_state": job["state"],
            "message": job.get("message"),
            "url": f"{self.url}/api/v1/progress/{job_id}",
        }

    def handle(self, method, path, query, headers, body):
        form = (
            parse_qs(body.decode(), keep_blank_values=True)
            if body and "form-urlencoded" in headers.get("Content-Type", "")
            else {}
        )
        self.log.append((method, path, query, form))
        if self.sign_in:
            return 401, {"Content-Type": "text/html; charset=utf-8"}, SIGN_IN_PAGE
        if headers.get("Authorization") != f"Bearer {self.token}":
            return (
                401,
                {"WWW-Authenticate": 'Bearer realm="canvas-lms"'},
                {"errors": [{"message": "Invalid access token."}]},
            )
        if self.throttle_when(method, path):
            return 403, {"X-Rate-Limit-Remaining": "0.0"}, b"403 Forbidden (Rate Limit Exceeded)\n"
        not_found = (404, {}, {"errors": [{"message": "The specified resource does not exist."}]})
        course = f"/api/v1/courses/{self.course_id}"
        assignment = f"{course}/assignments/{self.assignment_id}"
        if method == "GET" and path == course:
            return 200, {}, {"id": int(self.course_id), "name": "GPT-2 from scratch"}
        if method == "GET" and path == assignment:
            return (
                200,
                {},
                {
                    "id": int(self.assignment_id),
                    "course_id": int(self.course_id),
                    "name": "the-block",
                    "points_possible": self.points,
                    "grading_type": "points",
                    "published": True,
                },
            )
        if method == "GET" and path == f"{assignment}/submissions":
            return self._list(path, query)
        if method == "POST" and path == f"{assignment}/submissions/update_grades":
            return self._bulk(form)
        match = re.fullmatch(re.escape(assignment) + r"/submissions/(\d+)(/comments/files)?", path)
        if match and match.group(1) not in self.users:
            return not_found
        if match and method == "PUT" and not match.group(2):
            return self._update(match.group(1), form)
        if match and method == "POST" and match.group(2):
            return self._create_file(match.group(1), form)
        match = re.fullmatch(r"/api/v1/files/(\d+)/create_success", path)
        if match and method == "GET":
            return self._create_success(int(match.group(1)), query)
        match = re.fullmatch(r"/api/v1/progress/(\d+)", path)
        if match and method == "GET" and int(match.group(1)) in self.jobs:
            return 200, {}, self._advance(int(match.group(1)))
        return not_found

    def _list(self, path, query):
        unknown = set(query) - {"include[]", "per_page", "page"}
        if unknown or query.get("include[]") != ["submission_comments"]:
            return 400, {}, {"errors": [{"message": f"unexpected parameters {sorted(query)}"}]}
        per_page = min(int(query.get("per_page", ["10"])[0]), self.PAGE_MAX)
        page = int(query.get("page", ["1"])[0])
        users = sorted(self.users, key=int)
        link = {}
        if page * per_page < len(users):
            link["Link"] = (
                f"<{self.url}{path}?include[]=submission_comments&page={page + 1}"
                f'&per_page={per_page}>; rel="next"'
            )
        return (
            200,
            link,
            [self._submission(u) for u in users[(page - 1) * per_page : page * per_page]],
        )

    def _grade(self, user: str, grade: str | None, text: str | None, file_ids: list[str]):
        """Assignment#grade_student and update_submission, as the PUT and the bulk job do them;
        an error message, or None."""
        s = self.users[user]
        if grade is not None:
            if not re.fullmatch(r"\d+(\.\d+)?", grade):
                return f"not a grade in points: {grade!r}"
        attached = []
        for file_id in file_ids:
            f = self.files.get(int(file_id)) if file_id.isdigit() else None
            # only a file uploaded through this submission's comments/files, and confirmed
            if f is None or f["user"] != user or not f["available"]:
                return f"file {file_id} may not be attached to a comment of user {user}"
            attached.append(int(file_id))
        if grade is not None:
            if s["excused"]:
                self.unexcused.append(user)  # a grade ends the excuse: the push must never
                s["excused"] = False
            s["score"] = float(grade)
            s["graded_by"].append("api")
        if text is not None or attached:
            s["comments"].append({"comment": text or "", "attachments": attached})
        return None

    def _update(self, user, form):
        allowed = {"submission[posted_grade]", "comment[text_comment]", "comment[file_ids][]"}
        if not form or set(form) - allowed:
            return 400, {}, {"errors": [{"message": f"unexpected parameters {sorted(form)}"}]}
        error = self._grade(
            user,
            form.get("submission[posted_grade]", [None])[0],
            form.get("comment[text_comment]", [None])[0],
            form.get("comment[file_ids][]", []),
        )
        if error and error.startswith("file"):
            return 401, {}, {"status": "unauthorized", "errors": [{"message": error}]}
        if error:
            return 400, {}, {"error": error}
        return 200, {}, self._submission(user)

    def _create_file(self, user, form):
        """Step 1 of the upload: name, size and content_type; an upload slot in the store."""
        if set(form) - {"name", "size", "content_type"} or "name" not in form:
            return 400, {}, {"errors": [{"message": f"unexpected parameters {sorted(form)}"}]}
        file_id = next(self.ids)
        uuid = secrets.token_hex(8)
        self.files[file_id] = {
            "user": user,
            "name": form["name"][0],
            "available": False,
            "size": int(form.get("size", ["0"])[0]),
            "uuid": uuid,
            "content_type": form.get("content_type", ["text/html"])[0],
        }
        slot = f"/upload/{secrets.token_hex(6)}"
        params = {
            "key": f"attachments/{file_id}/{form['name'][0]}",
            "acl": "private",
            "Policy": base64.b64encode(b"policy").decode(),
            "Signature": secrets.token_hex(10),
        }
        self.store.slots[slot] = {
            "params": params,
            "file": file_id,
            "confirm": f"{self.url}/api/v1/files/{file_id}/create_success?uuid={uuid}",
        }
        return 200, {}, {"upload_url": f"{self.store.url}{slot}", "upload_params": params}

    def _create_success(self, file_id, query):
        f = self.files.get(file_id)
        if f is None or query.get("uuid") != [f["uuid"]]:
            return 400, {}, {"errors": [{"message": "invalid upload"}]}
        slot = next((s for s in self.store.slots.values() if s["file"] == file_id), None)
        if slot is None or "content" not in slot:
            return 400, {}, {"errors": [{"message": "nothing was uploaded"}]}
        f.update(available=True, content=slot["content"])
        return 200, {}, self._file_json(file_id)

    def _bulk(self, form):
        """update_grades: grade_data[<user_id>][posted_grade|text_comment|file_ids][]: a job."""
        grade_data: dict[str, dict] = {}
        for key, values in form.items():
            match = re.fullmatch(
                r"grade_data\[([^\]]+)\]\[(posted_grade|text_comment|excuse)\]"
                r"|grade_data\[([^\]]+)\]\[file_ids\]\[\]",
                key,
            )
            if not match:
                return 400, {}, {"error": f"unexpected parameter {key}"}
            user = match.group(1) or match.group(3)
            field = match.group(2) or "file_ids"
            grade_data.setdefault(user, {})[field] = values if field == "file_ids" else values[0]
        if not grade_data:
            return 400, {}, {"error": "'grade_data' parameter required"}
        job_id = next(self.ids)
        self.jobs[job_id] = {"state": "queued", "completion": 0, "data": grade_data}
        return 200, {}, self._progress(job_id)

    def _advance(self, job_id):
        """Each read moves a job on: queued, running, then done (the grades applied at once)."""
        job = self.jobs[job_id]
        if job["state"] == "queued":
            job.update(state="running", completion=50)
        elif job["state"] == "running" and not self.stall_jobs:
            missing = []
            for user, data in job["data"].items():
                if user not in self.users:
                    missing.append(user)
                    continue
                self._grade(
                    user,
                    data.get("posted_grade"),
                    data.get("text_comment"),
                    data.get("file_ids", []),
                )
            job.update(state="failed" if missing else "completed", completion=100)
            if missing:
                job["message"] = "Couldn't find User(s) with API ids " + ", ".join(
                    f"'{u}'" for u in missing
                )
        return self._progress(job_id)

    # -- for the tests ---------------------------------------------------------------------

    def requests(self, method: str, pattern: str) -> list[tuple[str, dict]]:
        return [(p, f) for m, p, _, f in self.log if m == method and re.fullmatch(pattern, p)]

    def puts(self) -> list[tuple[str, dict]]:
        return self.requests("PUT", r".*")


class LtiPlatform(Ags):
    """An LTI 1.3 platform with the tool registered by a key set (``jwks``): the token endpoint
    picks the key by the assertion's ``kid`` and refuses one without (Moodle's keyset: JWT::decode
    with a key set; Canvas's public JWK URL), answers ``expires_in`` and lets a token expire after
    it (on ``clock``, shared with the tool under test); a score with an expired or revoked token is
    answered 401 with ``WWW-Authenticate: Bearer error="invalid_token"`` (RFC 6750 3.1).

    ``flavor`` "canvas": a score whose timestamp is before the result's last is a 400, each post
    without ``new_submission: false`` is a new attempt, each comment is added to the submission;
    "moodle": a score not after the stored one, compared to the second, is a 409."""

    def __init__(
        self,
        client_id: str,
        jwks: dict,
        users: list[str],
        *,
        clock=time.monotonic,
        expires_in: int = 3600,
        flavor: str = "canvas",
    ):
        super().__init__(client_id, "", users)
        self.jwks, self.clock, self.expires_in, self.flavor = jwks, clock, expires_in, flavor
        self.expiry: dict[str, float] = {}
        self.kids: list[str | None] = []
        self.attempts: dict[str, int] = {}
        self.comments: dict[str, list[str]] = {}
        self.refusals: list[tuple[int, str]] = []

    def revoke(self) -> None:
        """Every token issued so far is invalid from now on."""
        with self.lock:
            self.expiry = dict.fromkeys(self.expiry, float("-inf"))

    def _token(self, headers, body):
        def refuse(error, why, status=400):
            return status, {}, {"error": error, "error_description": why}

        form = {k: v[0] for k, v in parse_qs(body.decode()).items()}
        jwt_bearer = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"  # RFC 7523
        if (
            form.get("grant_type") != "client_credentials"
            or form.get("client_assertion_type") != jwt_bearer
        ):
            return refuse("invalid_request", "a client_credentials grant with a JWT assertion")
        assertion = form.get("client_assertion", "")
        try:
            kid = jwt.get_unverified_header(assertion).get("kid")
        except jwt.PyJWTError as err:
            return refuse("invalid_client", f"assertion: {err}", 401)
        self.kids.append(kid)
        if not kid:
            return refuse("invalid_client", '"kid" empty, unable to lookup correct key', 401)
        key = next((k for k in self.jwks["keys"] if k.get("kid") == kid), None)
        if key is None:
            return refuse("invalid_client", '"kid" invalid, unable to lookup correct key', 401)
        try:
            claims = jwt.decode(
                assertion,
                jwt.PyJWK(key).key,
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
        self.expiry[token] = self.clock() + self.expires_in
        return (
            200,
            {"Cache-Control": "no-store"},
            {
                "access_token": token,
                "token_type": "Bearer",
                "expires_in": self.expires_in,
                "scope": SCORE_SCOPE,
            },
        )

    def _score(self, query, headers, body):
        auth = headers.get("Authorization", "")
        token = auth[7:] if auth.startswith("Bearer ") else ""
        if self.expiry.get(token, float("-inf")) <= self.clock():
            challenge = 'Bearer error="invalid_token", error_description="The access token expired"'
            return 401, {"WWW-Authenticate": challenge}, {"error": "invalid_token"}
        if query != {"resource_link_id": ["abc"]}:
            return 404, {}, {"error": "no such line item (its query was lost)"}
        if headers.get("Content-Type") != SCORE_TYPE:
            return 415, {}, {"error": f"Content-Type must be {SCORE_TYPE}"}
        try:
            score = json.loads(body)
        except ValueError:
            return 400, {}, {"error": "not JSON"}
        problem = self._invalid(score)
        if problem:
            return 400, {}, {"error": problem}
        user = score["userId"]
        history = self.scores.setdefault(user, [])
        stamp = datetime.fromisoformat(score["timestamp"].replace("Z", "+00:00"))
        if history:
            last = datetime.fromisoformat(history[-1]["timestamp"].replace("Z", "+00:00"))
            if self.flavor == "moodle" and last.replace(microsecond=0) >= stamp.replace(
                microsecond=0
            ):
                self.refusals.append((409, user))
                return 409, {}, {"error": "Refusing score with an earlier timestamp for item"}
            if self.flavor == "canvas" and stamp < last:
                self.refusals.append((400, user))
                return (
                    400,
                    {},
                    {
                        "errors": {
                            "type": "bad_request",
                            "message": "Provided timestamp of ... before last updated timestamp",
                        }
                    },
                )
        extension = score.get(CANVAS_EXT, {})
        if self.flavor == "canvas" and extension.get("new_submission", True) is not False:
            self.attempts[user] = self.attempts.get(user, 0) + 1
        if score.get("comment"):
            self.comments.setdefault(user, []).append(score["comment"])
        history.append(score)
        return (
            200,
            {"Content-Type": SCORE_TYPE},
            {"resultUrl": f"{self.url}{self.LINEITEM_PATH}/results/{user}"},
        )
