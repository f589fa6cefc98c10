"""`grade push canvas|lti` against loopback servers that answer as Canvas's REST API and the IMS
AGS/OAuth 2.0 documents say (tests/unit/lms/lms_servers.py): the dry run sends nothing, --yes sends
only what the LMS lacks (a second push sends nothing), grader errors, blank submissions and missing
students are never sent, throttled requests are retried, credentials come from outside the course
and are never printed."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from datetime import datetime, timezone

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from lms_servers import Ags, Canvas
from test_export import ROSTER, SCORES, score_doc, write_course, write_scores

from grader.commands import push
from grader.commands.export import read_folder
from grader.course.manifest import CourseFile
from grader.errors import GradeError
from grader.lms.exporters.lti import score_objects
from grader.lms.push.common import Backoff, comment

TOKEN = "s3cret-canvas-token-7f1d"
POINTS = {"layernorm": 20, "gelu": 15, "attention": 25, "block": 10.125, "params": 15}  # 85.125
FULL = {"layernorm": 20, "gelu": 15, "attention": 25, "block": 25, "params": 15}
NOW = datetime(2026, 5, 3, 12, 0, 0, 123000, tzinfo=timezone.utc)


@pytest.fixture
def course_dir(tmp_path):
    """A course; score files of ada (85.125), alan (late), zoe; grace's is a grader error, bob's is
    blank; mallory (in the roster) has none; trudy's is not in the roster."""
    folder = tmp_path / "course"
    course = write_course(folder, lms={"canvas_assignment_id": "48213"})
    (folder / "scores").mkdir()
    docs = {
        s: score_doc(s, p, course.sha256)
        for s, p in {
            "ada": POINTS,
            "alan": SCORES["alan"],
            "zoe": POINTS,
            "trudy": FULL,
            "bob": dict.fromkeys(FULL, 0),
            "grace": dict.fromkeys(FULL, 0),
        }.items()
    }
    docs["bob"]["blank"] = True
    docs["grace"].update(status="grader_error", error="the sandbox's zygote died during gelu()")
    write_scores(folder, docs)
    rows = [r for r in ROSTER if r[0] != "eve"] + [
        ("grace", "106", "", "ghopper", "g@x.edu", "Grace", "S"),
        ("bob", "107", "", "bob", "b@x.edu", "Bob", "S"),
    ]
    with open(folder / "roster.csv", "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(rows)
    return folder


@pytest.fixture
def canvas_server():
    server = Canvas(TOKEN, "1234", "48213", 100.0, ["101", "102", "103", "105", "106", "107"])
    yield server
    server.close()


def run(course_dir, lms, *, yes, env, **kwargs):
    kwargs.setdefault("backoff", Backoff(retries=3, first=0.0, sleep=lambda s: None))
    return push.main(
        lms=lms,
        scores_dir=course_dir / "scores",
        roster=course_dir / "roster.csv",
        course_path=CourseFile(course_dir / "course.json", None),
        yes=yes,
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


def test_the_dry_run_sends_nothing_and_says_what_it_would_post(course_dir, canvas_server, capsys):
    status = run(
        course_dir, "canvas", yes=False, env=canvas_env(canvas_server, course_dir), course_id="1234"
    )
    out, err = capsys.readouterr()
    assert canvas_server.log == []  # not even a GET
    assert "would post: ada (user 101): grade 85.13, comment:" in out
    assert "    layernorm 20/20 (1/1 tests passed)" in out
    assert "would post: alan (user 102): grade 80.00" in out
    assert not any(f"would post: {s} " in out for s in ("grace", "bob", "mallory", "trudy"))
    assert "grader error (not the student's grade, not pushed): grace (grace.json)" in err
    assert "skipped: bob: a blank submission" in err
    assert "missing: mallory: in the roster, no score file" in err
    assert "missing: trudy: has a score file, not in the roster" in err
    assert status == 1  # as the push would: students are left out
    assert run(course_dir, "canvas", yes=False, env={}, course_id="1234", allow_missing=True) == 0


def test_push_posts_grades_and_comments_then_a_second_push_posts_nothing(
    course_dir, canvas_server, capsys
):
    env = canvas_env(canvas_server, course_dir)
    status = run(course_dir, "canvas", yes=True, env=env, course_id="1234", allow_missing=True)
    out, err = capsys.readouterr()
    assert status == 0, out + err
    puts = dict(canvas_server.puts())
    base = "/api/v1/courses/1234/assignments/48213/submissions/"
    assert sorted(puts) == [
        base + "101",
        base + "102",
        base + "103",
    ]  # ada, alan, zoe: never grace or bob
    assert puts[base + "101"]["submission[posted_grade]"] == ["85.13"]
    assert puts[base + "102"]["submission[posted_grade]"] == [
        "80.00"
    ]  # after the grader's late penalty
    text = puts[base + "101"]["comment[text_comment]"][0]
    assert text.startswith("the-block: 85.125/100\nlayernorm 20/20 (1/1 tests passed)\n")
    assert (
        "block 10.125/25 (0/1 tests passed)\n  first failure: block of a 3×4 input: values differ"
        in text
    )
    assert canvas_server.submissions["106"] == {
        "score": None,
        "comments": [],
    }  # grace's grader error
    assert canvas_server.submissions["107"] == {
        "score": None,
        "comments": [],
    }  # bob's blank submission
    assert "posted: ada: grade 85.13 (was none) and comment" in out
    assert "3 posted, 0 unchanged, 0 failed, 4 left out" in out

    canvas_server.log.clear()
    assert run(course_dir, "canvas", yes=True, env=env, course_id="1234", allow_missing=True) == 0
    out, _ = capsys.readouterr()
    assert canvas_server.puts() == []
    assert "0 posted, 3 unchanged, 0 failed" in out

    # a TA's grade, set in Canvas by hand since the last push: kept (issue 29, item 4), and said
    canvas_server.submissions["101"]["score"] = 70.0
    canvas_server.log.clear()
    assert run(course_dir, "canvas", yes=True, env=env, course_id="1234", allow_missing=True) == 0
    out = capsys.readouterr().out
    assert canvas_server.puts() == [] and canvas_server.submissions["101"]["score"] == 70.0
    assert (
        "kept: ada: Canvas's grade 70.00 was set in Canvas (the last push recorded here "
        "posted 85.13): kept, 85.13 not posted (--overwrite-lms-grades posts it)"
    ) in out
    assert "0 posted, 2 unchanged, 1 kept, 0 failed, 4 left out" in out

    # asked to, the push puts the grade back; the comment (there) is not posted again
    canvas_server.log.clear()
    assert (
        run(
            course_dir,
            "canvas",
            yes=True,
            env=env,
            course_id="1234",
            allow_missing=True,
            overwrite_lms_grades=True,
        )
        == 0
    )
    assert canvas_server.puts() == [(base + "101", {"submission[posted_grade]": ["85.13"]})]
    assert "posted: ada: grade 85.13 (was 70.00)" in capsys.readouterr().out


def test_left_out_students_make_the_exit_status_1_unless_allowed(course_dir, canvas_server, capsys):
    assert (
        run(
            course_dir,
            "canvas",
            yes=True,
            env=canvas_env(canvas_server, course_dir),
            course_id="1234",
        )
        == 1
    )
    assert "grader error (not the student's grade, not pushed): grace" in capsys.readouterr().err


@pytest.mark.parametrize("status", [403, 429])
def test_a_rate_limited_request_is_retried_after_a_growing_wait(
    course_dir, canvas_server, capsys, status
):
    waits = []
    canvas_server.throttle, canvas_server.throttle_status = 3, status
    status = run(
        course_dir,
        "canvas",
        yes=True,
        env=canvas_env(canvas_server, course_dir),
        course_id="1234",
        allow_missing=True,
        backoff=Backoff(retries=4, first=0.5, sleep=waits.append),
    )
    assert status == 0, capsys.readouterr()
    assert waits == [0.5, 1.0, 2.0]
    assert len(canvas_server.puts()) == 3
    canvas_server.throttle = 10  # never lets up: a one-line error, nothing posted
    with pytest.raises(GradeError, match="Rate Limit Exceeded"):
        run(
            course_dir,
            "canvas",
            yes=True,
            env=canvas_env(canvas_server, course_dir),
            course_id="1234",
            backoff=Backoff(retries=2, first=0.0, sleep=waits.append),
        )


def test_a_user_canvas_does_not_know_fails_alone(course_dir, capsys):
    server = Canvas(TOKEN, "1234", "48213", 100.0, ["101", "102"])  # zoe (103) is not enrolled
    try:
        status = run(
            course_dir,
            "canvas",
            yes=True,
            env=canvas_env(server, course_dir),
            course_id="1234",
            allow_missing=True,
        )
    finally:
        server.close()
    out, err = capsys.readouterr()
    assert status == 1
    assert "failed: zoe: Canvas has no submission of user 103" in err
    assert sorted(p for p, _ in server.puts()) == [
        "/api/v1/courses/1234/assignments/48213/submissions/101",
        "/api/v1/courses/1234/assignments/48213/submissions/102",
    ]


def test_an_assignment_worth_other_points_is_refused_before_anything_is_posted(course_dir):
    server = Canvas(TOKEN, "1234", "48213", 10.0, ["101", "102", "103"])
    try:
        with pytest.raises(
            GradeError, match="worth 10.0 points in Canvas, the score files' max_score is 100"
        ):
            run(
                course_dir, "canvas", yes=True, env=canvas_env(server, course_dir), course_id="1234"
            )
    finally:
        server.close()
    assert server.puts() == []


def _grade(course_dir, env, *args):
    # timeout: a backstop against a hang, not a measurement (quiet: 1 s; 120x margin)
    proc = subprocess.run(
        [sys.executable, "-m", "grader", *map(str, args)],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=120,
    )
    return proc.returncode, proc.stdout + proc.stderr


def test_the_cli_never_prints_the_token_and_a_bad_token_is_one_line_error(
    course_dir, canvas_server
):
    env = canvas_env(canvas_server, course_dir)
    args = [
        "push",
        "canvas",
        course_dir / "scores",
        "--roster",
        course_dir / "roster.csv",
        "--course-id",
        "1234",
        "--course",
        course_dir / "course.json",
        "--allow-missing",
        "--yes",
    ]
    code, output = _grade(course_dir, env, *args)
    assert code == 0, output
    assert "3 posted" in output and TOKEN not in output
    code, output = _grade(course_dir, {**env, "GRADE_CANVAS_TOKEN": "wrong-" + TOKEN}, *args)
    assert code == 2 and output.startswith("Error: Canvas course 1234, assignment 48213: "), output
    assert TOKEN not in output


def test_credentials_come_from_a_config_file_outside_the_course_never_inside(
    course_dir, canvas_server, tmp_path
):
    config = tmp_path / "lms.toml"
    config.write_text(f'[canvas]\nurl = "{canvas_server.url}"\ntoken = "{TOKEN}"\n')
    code, output = _grade(
        course_dir,
        {"XDG_CONFIG_HOME": str(tmp_path / "none")},
        "push",
        "canvas",
        course_dir / "scores",
        "--roster",
        course_dir / "roster.csv",
        "--course-id",
        "1234",
        "--course",
        course_dir / "course.json",
        "--allow-missing",
        "--yes",
        "--config",
        config,
    )
    assert code == 0 and "3 posted" in output, output
    inside = course_dir / "lms.toml"
    inside.write_text(config.read_text())
    with pytest.raises(GradeError, match="inside the course folder"):
        push.main(
            lms="canvas",
            scores_dir=course_dir / "scores",
            roster=course_dir / "roster.csv",
            course_path=CourseFile(course_dir / "course.json", None),
            yes=True,
            config=inside,
            env={},
            course_id="1234",
        )
    with pytest.raises(GradeError, match="field 'canvas.token': not set"):
        run(
            course_dir,
            "canvas",
            yes=True,
            env={"GRADE_CANVAS_URL": canvas_server.url, "XDG_CONFIG_HOME": str(tmp_path / "none")},
            course_id="1234",
        )
    with pytest.raises(GradeError, match="must be an https:// URL"):
        run(
            course_dir,
            "canvas",
            yes=True,
            env={"GRADE_CANVAS_URL": "http://canvas.example.edu", "GRADE_CANVAS_TOKEN": TOKEN},
            course_id="1234",
        )


def test_hidden_tests_show_only_a_count_unless_the_course_releases_them():
    doc = score_doc("ada", POINTS)
    doc["tests"].append(
        {
            "name": "test_block_hidden_case",
            "problem": "block",
            "score": 0,
            "max_score": 5,
            "status": "failed",
            "visibility": "after_published",
            "output": "block of the course's h_5: values differ\ndiagnosis: this matches post-LN",
        }
    )
    closed = comment(doc, 85.125, release_hidden=False, late_by_lms=False)
    assert "1 hidden test(s) failed (their details are not released)" in closed
    assert (
        "test_block_hidden_case" not in closed and "post-LN" not in closed and "h_5" not in closed
    )
    opened = comment(doc, 85.125, release_hidden=True, late_by_lms=False)
    assert "  diagnosis: this matches post-LN" in opened and "test_block_hidden_case" in opened
    doc["tests"] += [
        dict(doc["tests"][-1], name=f"test_{i}", visibility="visible") for i in range(7)
    ]
    named = comment(doc, 85.125, release_hidden=False, late_by_lms=False)
    assert "  failed: test_block, test_0, test_1, test_2, test_3 and 3 more\n" in named


@pytest.fixture
def tool_key(tmp_path):
    """The tool's RSA key pair: the private key's PEM file (outside the course), the public key's
    PEM."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    path = tmp_path / "tool-key.pem"
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


def lti_env(server, key_path, tmp_path):
    return {
        "GRADE_LTI_CLIENT_ID": "10000000000042",
        "GRADE_LTI_TOKEN_URL": server.token_url,
        "GRADE_LTI_KEY_FILE": str(key_path),
        "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
    }


def test_lti_push_posts_the_exported_score_objects_with_a_signed_token(
    course_dir, tool_key, tmp_path, capsys
):
    key_path, public = tool_key
    server = Ags("10000000000042", public, ["101", "102", "103", "106", "107"])
    server.throttle_scores = 1
    try:
        status = run(
            course_dir,
            "lti",
            yes=True,
            env=lti_env(server, key_path, tmp_path),
            lineitem=server.lineitem,
            allow_missing=True,
            now=NOW,
        )
    finally:
        server.close()
    out, err = capsys.readouterr()
    assert status == 0, out + err
    folder = read_folder(
        course_dir / "scores",
        course_dir / "roster.csv",
        CourseFile(course_dir / "course.json", None),
        late_by_lms=False,
    )
    expected, _ = score_objects([r for r in folder.rows if not r.doc.get("blank")], NOW)
    # each is the exported object, stamped NOW (a first push), with Canvas's Score API extension
    # saying it is a grade, not a new submission attempt (new_submission defaults to true: each
    # post would add an attempt); other platforms ignore a URL-keyed extension (AGS 2.0)
    canvas = {"https://canvas.instructure.com/lti/submission": {"new_submission": False}}
    sent = {user: objects[-1] for user, objects in server.scores.items()}
    assert sent == {o["userId"]: {**o, **canvas} for _, o in expected}
    assert all(len(v) == 1 for v in server.scores.values())  # the 429 retried, posted once
    assert sorted(server.scores) == ["101", "102", "103"]  # never grace (106) nor bob (107)
    assert "3 posted, 0 unchanged, 0 failed, 4 left out" in out
    assert key_path.read_text().splitlines()[1] not in out + err


def test_lti_a_key_the_platform_does_not_know_is_refused_at_the_token(
    course_dir, tool_key, tmp_path
):
    key_path, _ = tool_key
    other = (
        rsa.generate_private_key(public_exponent=65537, key_size=2048)
        .public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )
    server = Ags("10000000000042", other, ["101"])
    try:
        with pytest.raises(GradeError, match="refused the tool's token request: 401"):
            run(
                course_dir,
                "lti",
                yes=True,
                env=lti_env(server, key_path, tmp_path),
                lineitem=server.lineitem,
                now=NOW,
            )
    finally:
        server.close()
    assert server.scores == {}


def test_lti_dry_run_prints_the_objects_and_reads_no_key(course_dir, capsys):
    assert (
        run(
            course_dir,
            "lti",
            yes=False,
            env={},
            lineitem="https://lms.example.edu/li/7?x=1",
            now=NOW,
            allow_missing=True,
        )
        == 0
    )
    out = capsys.readouterr().out
    lines = [
        json.loads(line.split(": ", 2)[2])
        for line in out.splitlines()
        if line.startswith("would post: ")
    ]
    assert [o["userId"] for o in lines] == ["101", "102", "103"]
    assert all(o["timestamp"] == "2026-05-03T12:00:00.123+00:00" for o in lines)


class _EchoingCanvas(Canvas):
    """A Canvas (or a proxy in front of it) whose 400 echoes the request's headers, the bearer token
    with them."""

    def handle(self, method, path, query, headers, body):
        if method == "PUT":
            return (
                400,
                {},
                {
                    "errors": [
                        {"message": f"bad request (Authorization: {headers.get('Authorization')})"}
                    ]
                },
            )
        return super().handle(method, path, query, headers, body)


def test_a_token_the_lms_echoes_in_an_error_is_never_printed(course_dir, capsys):
    server = _EchoingCanvas(TOKEN, "1234", "48213", 100.0, ["101", "102", "103"])
    try:
        status = run(
            course_dir,
            "canvas",
            yes=True,
            env=canvas_env(server, course_dir),
            course_id="1234",
            allow_missing=True,
        )
    finally:
        server.close()
    out, err = capsys.readouterr()
    assert status == 1 and "failed: ada: Canvas refused it: BadRequest" in err, out + err
    assert TOKEN not in out + err and "Bearer [redacted]" in err


class _OddAgs(Ags):
    """A platform whose score endpoint echoes the bearer token in a short 401 (``mode`` "echo"),
    answers a score it took with a body that is not JSON ("text"), or whose token URL answers
    without a token ("notoken")."""

    mode = "echo"

    def handle(self, method, path, query, headers, body):
        if method == "POST" and path.endswith("/scores") and self.mode == "echo":
            return 401, {}, {"error": headers.get("Authorization")}
        if method == "POST" and path.endswith("/scores") and self.mode == "text":
            super().handle(method, path, query, headers, body)
            return 200, {"Content-Type": "text/plain"}, b"OK"
        if method == "POST" and path.endswith("/token") and self.mode == "notoken":
            return 200, {}, {"token_type": "Bearer"}
        return super().handle(method, path, query, headers, body)


@pytest.mark.parametrize("mode", ["echo", "text", "notoken"])
def test_lti_odd_answers_are_one_line_each_and_never_show_the_token(
    course_dir, tool_key, tmp_path, capsys, mode
):
    key_path, public = tool_key
    server = _OddAgs("10000000000042", public, ["101", "102", "103"])
    server.mode = mode
    try:
        if mode == "notoken":
            with pytest.raises(GradeError, match="answered without an access_token"):
                run(
                    course_dir,
                    "lti",
                    yes=True,
                    env=lti_env(server, key_path, tmp_path),
                    lineitem=server.lineitem,
                    allow_missing=True,
                    now=NOW,
                )
            return
        status = run(
            course_dir,
            "lti",
            yes=True,
            env=lti_env(server, key_path, tmp_path),
            lineitem=server.lineitem,
            allow_missing=True,
            now=NOW,
        )
    finally:
        server.close()
    out, err = capsys.readouterr()
    assert server.tokens and not any(token in out + err for token in server.tokens), out + err
    if mode == "echo":
        assert (
            status == 1
            and "failed: ada: the platform refused it: 401" in err
            and "[redacted]" in err
        )
    else:  # the platform took the scores: they are posted, not failed
        assert status == 0 and "3 posted, 0 unchanged, 0 failed" in out, out + err
        assert sorted(server.scores) == ["101", "102", "103"]


@pytest.mark.parametrize("lms", ["canvas", "lti"])
def test_an_lms_that_never_answers_fails_the_push_in_one_line(
    course_dir, tool_key, tmp_path, capsys, monkeypatch, lms
):
    import socket
    import threading
    import time

    from grader.lms.push import common

    monkeypatch.setattr(common, "TIMEOUT", 0.5)
    silent = socket.socket()  # takes the connection, says nothing, hangs up after 10 s
    silent.bind(("127.0.0.1", 0))  # (so that a push with no timeout fails this test, late,
    silent.listen(8)  # instead of hanging it)

    def hang_up_late():
        taken = []
        while True:
            try:
                taken.append(silent.accept()[0])
            except OSError:
                break
            timer = threading.Timer(10, taken[-1].close)
            timer.daemon = True
            timer.start()

    threading.Thread(target=hang_up_late, daemon=True).start()
    url = f"http://127.0.0.1:{silent.getsockname()[1]}"
    if lms == "canvas":
        env, kwargs = (
            {
                "GRADE_CANVAS_URL": url,
                "GRADE_CANVAS_TOKEN": TOKEN,
                "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
            },
            {"course_id": "1234"},
        )
    else:
        env = {
            "GRADE_LTI_CLIENT_ID": "10000000000042",
            "GRADE_LTI_TOKEN_URL": f"{url}/token",
            "GRADE_LTI_KEY_FILE": str(tool_key[0]),
            "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
        }
        kwargs = {"lineitem": f"{url}/lineitems/1"}
    started = time.monotonic()
    try:
        with pytest.raises(GradeError, match="cannot be reached"):
            run(course_dir, lms, yes=True, env=env, **kwargs)
    finally:
        silent.close()
    # quiet: 0.5 s (TIMEOUT); 15x margin for a busy machine, and short of the 10 s a push with no
    # timeout would wait for the silent server to hang up
    assert time.monotonic() - started < 8
