"""`grade push` against a hostile or broken LMS (issue 27), on loopback servers that answer as
Canvas's REST API and the IMS AGS / OAuth 2.0 documents say (lms_servers.py), with chosen answers
replaced:

- a redirect to another host, port or scheme, of any request the push makes, directly or after
  hops on the same host, is a one-line error naming both, and the other host hears nothing (no
  token, no assertion, no student's grade);
- any answer of the wrong shape (a list or an object without the fields the API documents, HTML, an
  empty body, 5xx, a dropped connection, no answer in time, a 3xx with nowhere to go) fails that
  student in one line and the push goes on, or stops when the LMS is clearly down; every student
  ends up listed once as posted, unchanged, failed or not tried, and the exit status is 0 only when
  every grade went through.
"""

from __future__ import annotations

import csv
import re
import time

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from lms_servers import Ags, Canvas, Elsewhere
from test_export import ROSTER, score_doc, write_course, write_scores

from grader.commands import push
from grader.course.manifest import CourseFile
from grader.errors import GradeError
from grader.lms.push import common
from grader.lms.push.common import Backoff

TOKEN = "s3cret-canvas-token-hostile-9c2e"
CLIENT_ID = "10000000000042"
POINTS = {"layernorm": 20, "gelu": 15, "attention": 25, "block": 10.125, "params": 15}  # 85.125
STUDENTS = [f"s{i}" for i in range(1, 8)]
USERS = {s: str(200 + i) for i, s in enumerate(STUDENTS, 1)}  # s1 -> 201 ... s7 -> 207
COURSE = "/api/v1/courses/1234"
ASSIGNMENT = f"{COURSE}/assignments/48213"
SUBMISSIONS = f"{ASSIGNMENT}/submissions"
# s1 and s2 posted, then three failures in a row that are the LMS's: the push stops
STOPPED_AFTER_S5 = {
    "s1": "posted",
    "s2": "posted",
    "s3": "failed",
    "s4": "failed",
    "s5": "failed",
    "s6": "not tried",
    "s7": "not tried",
}
STATUS = re.compile(r"^(posted|unchanged|failed|not tried): (s\d+): ", re.M)


@pytest.fixture
def course_dir(tmp_path):
    """Seven students with a score file each (85.125), all in the roster with an lms_id: nothing
    left out, so the exit status says only how the LMS answered."""
    folder = tmp_path / "course"
    course = write_course(folder, lms={"canvas_assignment_id": "48213"})
    (folder / "scores").mkdir()
    write_scores(folder, {s: score_doc(s, POINTS, course.sha256) for s in STUDENTS})
    with open(folder / "roster.csv", "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(
            [ROSTER[0]] + [(s, u, "", s, f"{s}@x.edu", s.upper(), "A") for s, u in USERS.items()]
        )
    return folder


@pytest.fixture(scope="module")
def tool_key(tmp_path_factory):
    """The tool's RSA key pair: the private key's PEM file, the public key's PEM."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    path = tmp_path_factory.mktemp("keys") / "tool-key.pem"
    path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    public = (
        key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )
    return path, public


@pytest.fixture
def elsewhere():
    server = Elsewhere()
    yield server
    server.close()


@pytest.fixture
def quick(monkeypatch):
    """An LMS that does not answer is given up on after 0.5 s, not 30."""
    monkeypatch.setattr(common, "TIMEOUT", 0.5)


class Faulty:
    """A fake LMS whose answer to a chosen request is replaced: ``fault(method, path, body)``
    returns an answer (status, headers, body), a function giving one (it may raise: the connection
    drops unanswered), or None (the server's own answer). The replaced ones are logged in
    ``faulted``."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fault = lambda method, path, body: None
        self.faulted: list[tuple[str, str]] = []
        self.httpd.handle_error = lambda request, address: None  # a dropped line: the point

    def handle(self, method, path, query, headers, body):
        answer = self.fault(method, path, body)
        if answer is None:
            return super().handle(method, path, query, headers, body)
        self.faulted.append((method, path))
        return answer() if callable(answer) else answer


class FaultyCanvas(Faulty, Canvas):
    pass


class FaultyAgs(Faulty, Ags):
    pass


def dropped():
    """The connection closes without an answer (a reset, a proxy that died)."""
    raise ConnectionResetError("dropped on purpose")


def stalled(server):
    """An answer that comes after the push has given up (common.TIMEOUT is 0.5 s in these tests)."""

    def answer():
        server.lock.release()  # the handler holds the server's lock: let the next requests in
        try:
            time.sleep(3)
        finally:
            server.lock.acquire()
        return 200, {}, {}

    return answer


ODD = {  # answers no documented call gets: a broken LMS's, a proxy's, a maintenance page's
    "a JSON list": (200, {}, []),
    "an object without the fields": (200, {}, {}),
    "HTML": (200, {"Content-Type": "text/html"}, b"<html><body><h1>Maintenance</h1></body></html>"),
    "an empty body": (200, {}, b""),
    "not JSON": (200, {"Content-Type": "text/plain"}, b"OK"),
    "a 503 page": (503, {"Content-Type": "text/html"}, b"<html>\n<p>Unavailable</p>\n</html>"),
    "a 3xx going nowhere": (300, {}, b""),
    "lines of its own": (
        400,
        {"Content-Type": "text/plain"},
        b"bad request\nposted: s1: grade 100.00 (was none)\n\x1b[2J",
    ),
    "a dropped connection": lambda server: dropped,
    "no answer in time": stalled,
}


def odd(name, server):
    answer = ODD[name]
    return answer(server) if callable(answer) else answer


def run(course_dir, lms, env, **kwargs):
    kwargs.setdefault("backoff", Backoff(retries=2, first=0.0, sleep=lambda s: None))
    return push.main(
        lms=lms,
        scores_dir=course_dir / "scores",
        roster=course_dir / "roster.csv",
        course_path=CourseFile(course_dir / "course.json", None),
        yes=True,
        config=None,
        env=env,
        **kwargs,
    )


def canvas_env(server, course_dir):
    return {
        "GRADE_CANVAS_URL": server.url,
        "GRADE_CANVAS_TOKEN": TOKEN,
        "XDG_CONFIG_HOME": str(course_dir.parent / "xdg"),
    }


def lti_env(server, key_path, course_dir):
    return {
        "GRADE_LTI_CLIENT_ID": CLIENT_ID,
        "GRADE_LTI_TOKEN_URL": server.token_url,
        "GRADE_LTI_KEY_FILE": str(key_path),
        "XDG_CONFIG_HOME": str(course_dir.parent / "xdg"),
    }


def report(capsys) -> tuple[dict[str, str], str]:
    """What the push printed: each student's status (each listed exactly once), and all the text."""
    out, err = capsys.readouterr()
    text = out + err
    statuses: dict[str, str] = {}
    for status, student in STATUS.findall(text):
        assert student not in statuses, f"{student} listed twice:\n{text}"
        statuses[student] = status
    assert sorted(statuses) == STUDENTS, text
    assert "Traceback" not in text
    return statuses, text


def line_of(text: str, student: str) -> str:
    [line] = [line for line in text.splitlines() if re.match(rf"[a-z ]+: {student}: ", line)]
    return line


def origin(url: str) -> str:
    return url.split("://", 1)[1]


# 1. Credentials never follow a redirect to another host
# ---------------------------------------------------


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_canvas_a_redirect_elsewhere_is_refused_before_anything_goes_there(
    course_dir, elsewhere, status
):
    server = FaultyCanvas(TOKEN, "1234", "48213", 100.0, list(USERS.values()))
    server.fault = lambda method, path, body: (
        (status, {"Location": f"{elsewhere.url}{path}"}, b"") if path == COURSE else None
    )
    try:
        with pytest.raises(GradeError) as info:
            run(course_dir, "canvas", canvas_env(server, course_dir), course_id="1234")
    finally:
        server.close()
    message = str(info.value)
    assert elsewhere.connections == 0 and elsewhere.log == []
    assert origin(server.url) in message and origin(elsewhere.url) in message, message
    assert "\n" not in message and TOKEN not in message
    assert server.puts() == []


def test_canvas_a_redirect_elsewhere_after_hops_on_the_same_host_is_refused(course_dir, elsewhere):
    """Page 2 of the submissions moves on the same host (followed), and from there to another
    host."""
    server = FaultyCanvas(TOKEN, "1234", "48213", 100.0, list(USERS.values()))

    def fault(method, path, body):
        if method == "GET" and path == f"{ASSIGNMENT}/submissions" and server.faulted == []:
            return None if len(server.log) < 3 else (302, {"Location": "/moved/once"}, b"")
        if path == "/moved/once":
            return 301, {"Location": "/moved/twice?x=1"}, b""
        if path == "/moved/twice":
            return 307, {"Location": f"{elsewhere.url}/api/v1/courses/1234"}, b""
        return None

    server.fault = fault
    try:
        with pytest.raises(GradeError) as info:
            run(course_dir, "canvas", canvas_env(server, course_dir), course_id="1234")
    finally:
        server.close()
    assert [p for _, p in server.faulted] == [SUBMISSIONS, "/moved/once", "/moved/twice"]
    assert elsewhere.connections == 0
    assert origin(server.url) in str(info.value) and origin(elsewhere.url) in str(info.value)
    assert server.puts() == []


def test_canvas_a_grade_redirected_elsewhere_mid_push_stops_the_push(course_dir, elsewhere, capsys):
    """s3's PUT answers 307 to another host (which would get the grade and comment, and answer 200):
    s3 fails naming both hosts, nobody after it is tried, s1 and s2 stay reported as posted."""
    server = FaultyCanvas(TOKEN, "1234", "48213", 100.0, list(USERS.values()))
    s3 = f"{ASSIGNMENT}/submissions/{USERS['s3']}"
    server.fault = lambda method, path, body: (
        (307, {"Location": f"{elsewhere.url}{path}"}, b"")
        if (method, path) == ("PUT", s3)
        else None
    )
    try:
        status = run(course_dir, "canvas", canvas_env(server, course_dir), course_id="1234")
    finally:
        server.close()
    statuses, text = report(capsys)
    assert elsewhere.connections == 0 and elsewhere.log == []
    assert statuses == {
        "s1": "posted",
        "s2": "posted",
        "s3": "failed",
        "s4": "not tried",
        "s5": "not tried",
        "s6": "not tried",
        "s7": "not tried",
    }
    s3_line = line_of(text, "s3")
    assert origin(server.url) in s3_line and origin(elsewhere.url) in s3_line
    assert status == 1 and TOKEN not in text
    assert len(server.puts()) == 2


@pytest.mark.parametrize("where", ["301", "302", "303", "307", "308", "port", "scheme", "hops"])
def test_lti_the_token_request_is_never_sent_to_another_host(course_dir, tool_key, where):
    """The issue's case: the token endpoint answers 307 to another host, which would get the signed
    client assertion (valid 60 s, unused) and could trade it for a token. Also another port of this
    host, another scheme, and 307 after hops on the same host."""
    key_path, public = tool_key
    other = Elsewhere("127.0.0.1" if where in ("port", "scheme") else "127.0.0.2")
    server = FaultyAgs(CLIENT_ID, public, list(USERS.values()))
    status = int(where) if where.isdigit() else 307
    target = f"{other.url}/login/oauth2/token"
    if where == "scheme":  # the same host and port, in https
        target = f"https://{origin(server.url)}/login/oauth2/token"

    def fault(method, path, body):
        if where == "hops" and path == "/login/oauth2/token":
            return 307, {"Location": "/login/oauth2/hop"}, b""
        if path == ("/login/oauth2/hop" if where == "hops" else "/login/oauth2/token"):
            return status, {"Location": target}, b""
        return None

    server.fault = fault
    try:
        with pytest.raises(GradeError) as info:
            run(course_dir, "lti", lti_env(server, key_path, course_dir), lineitem=server.lineitem)
    finally:
        server.close()
        other.close()
    message = str(info.value)
    assert other.connections == 0 and other.log == []
    assert origin(server.url) in message and origin(target.split("/login")[0]) in message, message
    assert target.split("://")[0] + "://" in message and "\n" not in message
    assert server.scores == {}


def test_lti_a_score_redirected_elsewhere_is_not_sent_there_and_stops_the_push(
    course_dir, tool_key, elsewhere, capsys
):
    key_path, public = tool_key
    server = FaultyAgs(CLIENT_ID, public, list(USERS.values()))

    def fault(method, path, body):
        if path.endswith("/scores") and f'"userId": "{USERS["s3"]}"' in body.decode():
            return 307, {"Location": f"{elsewhere.url}{path}?resource_link_id=abc"}, b""
        return None

    server.fault = fault
    try:
        status = run(
            course_dir, "lti", lti_env(server, key_path, course_dir), lineitem=server.lineitem
        )
    finally:
        server.close()
    statuses, text = report(capsys)
    assert elsewhere.connections == 0
    assert statuses == {
        "s1": "posted",
        "s2": "posted",
        "s3": "failed",
        "s4": "not tried",
        "s5": "not tried",
        "s6": "not tried",
        "s7": "not tried",
    }
    assert origin(elsewhere.url) in line_of(text, "s3") and status == 1
    assert not any(token in text for token in server.tokens)


def test_the_push_session_refuses_a_redirect_elsewhere_and_follows_its_own_host(elsewhere):
    """Every request the pushes make goes through common.session(): a GET carrying a bearer token (a
    line item's, a course's) redirected elsewhere is refused; on the same host it is followed; a
    write the same host redirects with 302 (requests would resend it as a GET, without its body) is
    refused too."""
    server = FaultyCanvas(TOKEN, "1234", "48213", 100.0, ["201"])
    server.fault = lambda method, path, body: {
        "/away": (302, {"Location": f"{elsewhere.url}{COURSE}"}, b""),
        "/home": (302, {"Location": COURSE}, b""),
        "/write": (302, {"Location": COURSE}, b""),
    }.get(path)
    auth = {"Authorization": f"Bearer {TOKEN}"}
    http = common.session()
    try:
        with pytest.raises(Exception) as info:
            http.get(f"{server.url}/away", headers=auth)
        assert origin(server.url) in str(info.value) and origin(elsewhere.url) in str(info.value)
        assert elsewhere.connections == 0
        assert http.get(f"{server.url}/home", headers=auth).json()["id"] == 1234
        with pytest.raises(Exception, match="302"):
            http.put(
                f"{server.url}/write", headers=auth, data={"submission[posted_grade]": "85.13"}
            )
    finally:
        server.close()


# 2. Answers of the wrong shape
# ------------------------------------------------------------------------------


@pytest.mark.parametrize("answer", sorted(ODD))
def test_canvas_an_odd_answer_to_one_grade_fails_that_student_alone(
    course_dir, capsys, quick, answer
):
    """The issue's case is "a JSON list": s3's PUT answered 200 [] ended the push in a traceback, s1
    and s2 posted and never reported, s4 to s7 never tried."""
    server = FaultyCanvas(TOKEN, "1234", "48213", 100.0, list(USERS.values()))
    s3 = f"{ASSIGNMENT}/submissions/{USERS['s3']}"
    server.fault = lambda method, path, body: (
        odd(answer, server) if (method, path) == ("PUT", s3) else None
    )
    try:
        status = run(course_dir, "canvas", canvas_env(server, course_dir), course_id="1234")
    finally:
        server.close()
    statuses, text = report(capsys)
    assert statuses == {**dict.fromkeys(STUDENTS, "posted"), "s3": "failed"}, text
    assert "6 posted, 0 unchanged, 1 failed" in text and status == 1
    assert "\x1b" not in text and TOKEN not in text
    assert server.submissions[USERS["s7"]]["score"] == 85.13


@pytest.mark.parametrize("answer", ["a 503 page", "a dropped connection", "no answer in time"])
def test_canvas_a_push_stops_cleanly_when_canvas_is_clearly_down(course_dir, capsys, quick, answer):
    """From s3 on every PUT fails for a reason that is Canvas's, not the student's: after three in a
    row the push stops; s6 and s7 are listed as not tried (a rerun posts them), and the exit status
    is 1."""
    server = FaultyCanvas(TOKEN, "1234", "48213", 100.0, list(USERS.values()))
    down = {f"{ASSIGNMENT}/submissions/{USERS[s]}" for s in STUDENTS[2:]}
    server.fault = lambda method, path, body: (
        odd(answer, server) if method == "PUT" and path in down else None
    )
    try:
        status = run(course_dir, "canvas", canvas_env(server, course_dir), course_id="1234")
    finally:
        server.close()
    statuses, text = report(capsys)
    assert statuses == STOPPED_AFTER_S5, text
    assert len(server.faulted) == 3 and status == 1
    assert "2 posted, 0 unchanged, 3 failed, 2 not tried" in text


BEFORE = {  # an odd answer to a request made before any grade is posted
    "the course as a list": (COURSE, lambda s: (200, {}, [])),
    "the course as HTML": (COURSE, lambda s: ODD["HTML"]),
    "the assignment as a list": (ASSIGNMENT, lambda s: (200, {}, [])),
    "points_possible not a number": (
        ASSIGNMENT,
        lambda s: (200, {}, {"id": 48213, "course_id": 1234, "points_possible": "a hundred"}),
    ),
    "the submissions as an object": (SUBMISSIONS, lambda s: (200, {}, {"submissions": []})),
    "submissions that are not objects": (SUBMISSIONS, lambda s: (200, {}, [201, 202])),
    "a submission without user_id": (SUBMISSIONS, lambda s: (200, {}, [{"id": 1, "score": None}])),
    "a next page on another host": (
        SUBMISSIONS,
        lambda s: (
            200,
            {"Link": f'<http://127.0.0.2:9{SUBMISSIONS}?page=2>; rel="next"'},
            [s._submission("201", True)],
        ),
    ),
}


@pytest.mark.parametrize("case", sorted(BEFORE))
def test_canvas_an_odd_answer_before_any_grade_is_a_one_line_error(course_dir, case):
    path, answer = BEFORE[case]
    server = FaultyCanvas(TOKEN, "1234", "48213", 100.0, list(USERS.values()))
    server.fault = lambda method, p, body: answer(server) if p == path else None
    try:
        with pytest.raises(GradeError) as info:
            run(course_dir, "canvas", canvas_env(server, course_dir), course_id="1234")
    finally:
        server.close()
    message = str(info.value)
    assert "\n" not in message and "nothing was posted" in message, message
    assert server.puts() == []


TOKEN_ANSWERS = {  # a token endpoint's 200 that is not an RFC 6749 5.1 access token response
    "a JSON list": [],
    "a number for a token": {"access_token": 42, "token_type": "Bearer"},
    "a token with a line break": {"access_token": "abc\r\nX-Injected: 1", "token_type": "Bearer"},
    "an empty token": {"access_token": "", "token_type": "Bearer"},
    "HTML": b"<html><body>Sign in</body></html>",
    "an empty body": b"",
}


@pytest.mark.parametrize("case", sorted(TOKEN_ANSWERS))
def test_lti_a_token_answer_of_the_wrong_shape_is_a_one_line_error(course_dir, tool_key, case):
    key_path, public = tool_key
    server = FaultyAgs(CLIENT_ID, public, list(USERS.values()))
    server.fault = lambda method, path, body: (
        (200, {}, TOKEN_ANSWERS[case]) if path == "/login/oauth2/token" else None
    )
    try:
        with pytest.raises(GradeError) as info:
            run(course_dir, "lti", lti_env(server, key_path, course_dir), lineitem=server.lineitem)
    finally:
        server.close()
    message = str(info.value)
    assert "token endpoint" in message and "private key" not in message, message
    assert "\n" not in message and "X-Injected" not in message
    assert [m for m, p, _, _ in server.log if p.endswith("/scores")] == []


@pytest.mark.parametrize("answer", sorted(ODD))
def test_lti_an_odd_answer_to_one_score_fails_that_student_alone(
    course_dir, tool_key, capsys, quick, answer
):
    """AGS documents no body for a score's answer: any 2xx means the platform took it (posted);
    anything else, a 3xx it gives nowhere to go included, fails that student alone."""
    key_path, public = tool_key
    server = FaultyAgs(CLIENT_ID, public, list(USERS.values()))

    def fault(method, path, body):
        if path.endswith("/scores") and f'"userId": "{USERS["s3"]}"' in body.decode():
            return odd(answer, server)
        return None

    server.fault = fault
    try:
        status = run(
            course_dir, "lti", lti_env(server, key_path, course_dir), lineitem=server.lineitem
        )
    finally:
        server.close()
    statuses, text = report(capsys)
    took = ODD[answer][0] // 100 == 2 if isinstance(ODD[answer], tuple) else False
    expected = {**dict.fromkeys(STUDENTS, "posted"), "s3": "posted" if took else "failed"}
    assert statuses == expected, text
    assert status == (0 if took else 1)
    assert "\x1b" not in text and not any(token in text for token in server.tokens)
    assert USERS["s7"] in server.scores


@pytest.mark.parametrize("answer", ["a 503 page", "a dropped connection"])
def test_lti_a_push_stops_cleanly_when_the_platform_is_clearly_down(
    course_dir, tool_key, capsys, quick, answer
):
    key_path, public = tool_key
    server = FaultyAgs(CLIENT_ID, public, list(USERS.values()))
    server.fault = lambda method, path, body: (
        odd(answer, server) if path.endswith("/scores") and len(server.scores) >= 2 else None
    )
    try:
        status = run(
            course_dir, "lti", lti_env(server, key_path, course_dir), lineitem=server.lineitem
        )
    finally:
        server.close()
    statuses, text = report(capsys)
    assert statuses == STOPPED_AFTER_S5, text
    assert len(server.faulted) == 3 and status == 1
    assert "2 posted, 0 unchanged, 3 failed, 2 not tried" in text
