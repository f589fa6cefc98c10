"""Push at scale (issue 29, item 4), against lms_platforms.CanvasCourse and LtiPlatform (written
from Canvas's Submissions and Progress docs, canvas-lms's bulk update, AGS 2.0): a throttled or
hanging LMS stops the push after three students in a row, in one line, and a rerun continues; a
class goes in Canvas's bulk update_grades jobs, polled to their end and reported per student; a
grade a TA changed in Canvas is kept unless --overwrite-lms-grades, an excused submission is never
graded, Canvas's own late deduction is not taken for a TA's change; a 401 sign-in page is said,
not "cannot be reached"."""

from __future__ import annotations

import json
import re
import time

import pytest
from lms_platforms import SIGN_IN_PAGE, CanvasCourse, FileStore, LtiPlatform
from push_class import (
    POINTS,
    TOKEN,
    canvas_env,
    lti_env,
    regrade,
    report,
    run,
    students,
    write_class,
)

from grader.commands import push_lti_key
from grader.errors import GradeError
from grader.lms.push import canvas as canvas_push
from grader.lms.push import common

BASE = "/api/v1/courses/1234/assignments/48213/submissions"
STOPPED = re.compile(r"^stopped: .*run the same command again to continue", re.M)


@pytest.fixture
def store():
    server = FileStore()
    yield server
    server.close()


def course(store, users, points: float = 100.0) -> CanvasCourse:
    return CanvasCourse(TOKEN, "1234", "48213", points, list(users.values()), store)


def statuses(text: str) -> dict[str, str]:
    return {s: status for s, (status, _) in report(text).items()}


# 1. A throttled or hanging LMS: three students in a row stop the push; a rerun continues
# ------------------------------------------------------------------------------------------


def test_a_throttled_canvas_stops_after_three_students_and_a_rerun_continues(
    tmp_path, store, capsys
):
    users = students(12)
    folder = write_class(tmp_path / "course", users, pages=False)
    server = course(store, users)
    throttled = {str(u) for u in range(303, 313)}
    server.throttle_when = lambda method, path: method == "PUT" and path[-3:] in throttled
    waits: list[float] = []
    try:
        status = run(folder, "canvas", canvas_env(server, folder), course_id="1234", waits=waits)
        out, err = capsys.readouterr()
        assert status == 1
        got = statuses(out + err)
        assert [got[s] for s in users] == ["posted"] * 2 + ["failed"] * 3 + ["not tried"] * 7
        assert len(STOPPED.findall(err)) == 1, err  # one line says why, and what next
        assert "3 failures in a row" in err and "Rate Limit Exceeded" in err
        assert waits == [1.0, 2.0] * 3  # 9 s of waiting, not 31 s each
        server.throttle_when = lambda method, path: False  # Canvas lets up: run it again
        server.log.clear()
        assert run(folder, "canvas", canvas_env(server, folder), course_id="1234") == 0
    finally:
        server.close()
    out, _ = capsys.readouterr()
    got = statuses(out)
    assert [got[s] for s in users] == ["unchanged"] * 2 + ["posted"] * 10
    assert len(server.puts()) == 10


class Hanging(CanvasCourse):
    """A Canvas whose PUTs for ``hang`` users are answered after the push gave up on them."""

    hang: set = set()

    def handle(self, method, path, query, headers, body):
        if method == "PUT" and path[-3:] in self.hang:
            self.lock.release()  # let the next requests in while this one hangs
            try:
                time.sleep(3)
            finally:
                self.lock.acquire()
        return super().handle(method, path, query, headers, body)


def test_a_hanging_canvas_stops_after_three_students(tmp_path, store, capsys, monkeypatch):
    monkeypatch.setattr(common, "TIMEOUT", 0.5)
    users = students(10)
    folder = write_class(tmp_path / "course", users, pages=False)
    server = Hanging(TOKEN, "1234", "48213", 100.0, list(users.values()), store)
    server.hang = {str(u) for u in range(302, 311)}
    started = time.monotonic()
    try:
        status = run(folder, "canvas", canvas_env(server, folder), course_id="1234")
    finally:
        server.close()
    # quiet: 3 timeouts of 0.5 s; a push without the stop would take 9 x 0.5 s and more
    elapsed = time.monotonic() - started
    out, err = capsys.readouterr()
    got = statuses(out + err)
    assert status == 1 and elapsed < 8
    assert [got[s] for s in users] == ["posted"] + ["failed"] * 3 + ["not tried"] * 6
    assert "no answer within 0.5 s" in err and len(STOPPED.findall(err)) == 1


class Throttling(LtiPlatform):
    """A platform that answers 429 to every score after the first ``let`` while ``on``."""

    on, let = True, 2

    def _score(self, query, headers, body):
        if self.on and sum(len(h) for h in self.scores.values()) >= self.let:
            return 429, {"Retry-After": "1"}, {"error": "too many requests"}
        return super()._score(query, headers, body)


def test_a_throttled_lti_platform_stops_and_a_rerun_sends_only_the_rest(tmp_path, capsys):
    users = students(8)
    folder = write_class(tmp_path / "course", users, pages=False)
    key = tmp_path / "keys"
    push_lti_key.main(out=key)
    platform = Throttling(
        "10000000000077", json.loads((key / "jwks.json").read_text()), list(users.values())
    )
    env = lti_env(platform, key / "lti-key.pem", folder)
    try:
        assert run(folder, "lti", env, lineitem=platform.lineitem) == 1
        out, err = capsys.readouterr()
        got = statuses(out + err)
        assert [got[s] for s in users] == ["posted"] * 2 + ["failed"] * 3 + ["not tried"] * 3
        assert len(STOPPED.findall(err)) == 1
        platform.on = False
        assert run(folder, "lti", env, lineitem=platform.lineitem) == 0
    finally:
        platform.close()
    got = statuses(capsys.readouterr().out)
    assert [got[s] for s in users] == ["unchanged"] * 2 + ["posted"] * 6
    assert all(len(h) == 1 for h in platform.scores.values())  # nobody twice
    assert len(platform.scores) == 8


# 2. A class in Canvas's bulk update_grades jobs, polled to their end, reported per student
# ------------------------------------------------------------------------------------------


def test_a_class_goes_in_one_bulk_job_polled_to_its_end(tmp_path, store, capsys):
    users = students(30)
    folder = write_class(tmp_path / "course", users)
    server = course(store, users)
    try:
        status = run(
            folder, "canvas", canvas_env(server, folder), course_id="1234", attach_pages=True
        )
        out, err = capsys.readouterr()
        assert status == 0, out + err
        assert server.puts() == []  # no request per student
        [(_, form)] = server.requests("POST", rf"{BASE}/update_grades")
        assert form["grade_data[301][posted_grade]"] == ["85.13"]
        assert form["grade_data[330][text_comment]"][0].startswith("the-block: 85.125/100\n")
        assert all(form[f"grade_data[{u}][file_ids][]"] for u in users.values())
        assert len(server.requests("GET", r"/api/v1/progress/\d+")) == 2  # running, completed
        got = report(out)
        assert all(got[s][0] == "posted" for s in users)
        assert re.fullmatch(
            r"grade 85\.13 \(was none\) and comment with the page \(bulk job "
            r"\d+ completed\)",
            got["s17"][1],
        )
        assert all(
            server.users[u]["score"] == 85.13 and server.users[u]["comments"][0]["attachments"]
            for u in users.values()
        )
        server.log.clear()
        assert (
            run(folder, "canvas", canvas_env(server, folder), course_id="1234", attach_pages=True)
            == 0
        )
    finally:
        server.close()
    assert "0 posted, 30 unchanged, 0 failed" in capsys.readouterr().out
    assert server.requests("POST", r".*") == [] and server.puts() == []


def test_a_bulk_job_that_never_ends_is_said_per_student_and_a_rerun_finishes(
    tmp_path, store, capsys
):
    users = students(canvas_push.BULK_FROM)
    folder = write_class(tmp_path / "course", users, pages=False)
    server = course(store, users)
    server.stall_jobs = True
    try:
        assert run(folder, "canvas", canvas_env(server, folder), course_id="1234") == 1
        out, err = capsys.readouterr()
        got = report(out + err)
        assert {status for status, _ in got.values()} == {"failed"}
        assert re.fullmatch(
            r"bulk job \d+ still running after 40 reads of its progress, and "
            r"Canvas does not have the grade and the comment: push again .*",
            got["s01"][1],
        )
        server.stall_jobs = False
        assert run(folder, "canvas", canvas_env(server, folder), course_id="1234") == 0
    finally:
        server.close()
    assert all(s == "posted" for s in statuses(capsys.readouterr().out).values())


class FailingJob(CanvasCourse):
    """A Canvas whose bulk jobs fail (as a closed grading period or a lock makes them) having
    graded only ``take`` of the students, or whose submissions cannot be read again after
    (``down_after``: a 503 page)."""

    take, down_after = 0, False

    def _advance(self, job_id):
        job = self.jobs[job_id]
        if job["state"] == "running":
            for user, data in list(job["data"].items())[: self.take]:
                self._grade(user, data.get("posted_grade"), data.get("text_comment"), [])
            job.update(state="failed", completion=100, message="Grades are locked for s03..s20")
            return self._progress(job_id)
        return super()._advance(job_id)

    def handle(self, method, path, query, headers, body):
        if self.down_after and method == "GET" and path.endswith("/submissions") and self.jobs:
            return 503, {"Content-Type": "text/html"}, b"<html><h1>Service Unavailable</h1>"
        return super().handle(method, path, query, headers, body)


def test_a_failed_bulk_job_is_reported_per_student_from_what_canvas_has(tmp_path, store, capsys):
    users = students(canvas_push.BULK_FROM)
    folder = write_class(tmp_path / "course", users, pages=False)
    server = FailingJob(TOKEN, "1234", "48213", 100.0, list(users.values()), store)
    server.take = 2
    try:
        assert run(folder, "canvas", canvas_env(server, folder), course_id="1234") == 1
    finally:
        server.close()
    got = report("".join(capsys.readouterr()))
    assert [got[s][0] for s in users] == ["posted"] * 2 + ["failed"] * 18
    assert re.fullmatch(
        r"grade 85\.13 \(was none\) and comment \(bulk job \d+ failed: Grades "
        r"are locked for s03\.\.s20\)",
        got["s02"][1],
    )
    assert re.fullmatch(
        r"bulk job \d+ failed: Grades are locked for s03\.\.s20, and Canvas does "
        r"not have the grade and the comment: push again .*",
        got["s03"][1],
    )


def test_submissions_unreadable_after_a_bulk_job_leave_it_unknown_not_a_crash(
    tmp_path, store, capsys
):
    users = students(canvas_push.BULK_FROM)
    folder = write_class(tmp_path / "course", users, pages=False)
    server = FailingJob(TOKEN, "1234", "48213", 100.0, list(users.values()), store)
    server.down_after = True
    try:
        assert run(folder, "canvas", canvas_env(server, folder), course_id="1234") == 1
    finally:
        server.close()
    got = report("".join(capsys.readouterr()))
    assert {status for status, _ in got.values()} == {"failed"}
    assert (
        'but Canvas answered 503 text/html, not JSON: "Service Unavailable" to the '
        "submissions, read again after the bulk jobs: whether Canvas took it is not known"
    ) in got["s07"][1]


def test_one_by_one_on_request(tmp_path, store, capsys):
    users = students(canvas_push.BULK_FROM)
    folder = write_class(tmp_path / "course", users, pages=False)
    server = course(store, users)
    try:
        assert run(folder, "canvas", canvas_env(server, folder), course_id="1234", bulk=False) == 0
    finally:
        server.close()
    assert len(server.puts()) == canvas_push.BULK_FROM
    assert server.requests("POST", r".*update_grades") == []


# 3. What Canvas has that is not the push's: a TA's grade, an excuse, its late deduction
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("bulk", [False, True])
def test_a_grade_a_ta_changed_in_canvas_is_kept_unless_overwrite(tmp_path, store, capsys, bulk):
    users = students(4)
    folder = write_class(tmp_path / "course", users, pages=False)
    server = course(store, users)
    env = canvas_env(server, folder)
    try:
        assert run(folder, "canvas", env, course_id="1234", bulk=bulk) == 0
        server.users["302"]["score"] = 95.0  # a TA regrades s02 in SpeedGrader
        regrade(folder, "s02", {**POINTS, "params": 5})  # and the class is regraded: 75.125
        regrade(folder, "s03", {**POINTS, "params": 5})
        capsys.readouterr()
        server.log.clear()
        assert run(folder, "canvas", env, course_id="1234", bulk=bulk) == 0
        out, _ = capsys.readouterr()
        got = report(out)
        assert got["s02"] == (
            "kept",
            "Canvas's grade 95.00 was set in Canvas (the last push "
            "recorded here posted 85.13): kept, 75.13 not posted "
            "(--overwrite-lms-grades posts it)",
        )
        assert got["s03"][0] == "posted" and server.users["303"]["score"] == 75.13
        assert server.users["302"]["score"] == 95.0 and "1 kept" in out
        assert run(folder, "canvas", env, course_id="1234", bulk=bulk) == 0  # still kept
        assert server.users["302"]["score"] == 95.0
        capsys.readouterr()
        assert (
            run(folder, "canvas", env, course_id="1234", bulk=bulk, overwrite_lms_grades=True) == 0
        )
    finally:
        server.close()
    assert report(capsys.readouterr().out)["s02"][1].startswith("grade 75.13 (was 95.00)")
    assert server.users["302"]["score"] == 75.13


def test_a_grade_in_canvas_before_any_push_is_kept(tmp_path, store, capsys):
    users = students(2)
    folder = write_class(tmp_path / "course", users, pages=False)
    server = course(store, users)
    server.users["301"]["score"] = 60.0  # graded by hand before the grader
    try:
        assert run(folder, "canvas", canvas_env(server, folder), course_id="1234") == 0
    finally:
        server.close()
    got = report(capsys.readouterr().out)
    assert got["s01"][0] == "kept" and "no push recorded here posted it" in got["s01"][1]
    assert server.users["301"]["score"] == 60.0 and server.users["301"]["comments"] == []


@pytest.mark.parametrize("bulk", [False, True])
def test_an_excused_submission_is_never_graded(tmp_path, store, capsys, bulk):
    users = students(3)
    folder = write_class(tmp_path / "course", users, pages=False)
    server = course(store, users)
    server.users["302"]["excused"] = True
    try:
        assert (
            run(
                folder,
                "canvas",
                canvas_env(server, folder),
                course_id="1234",
                bulk=bulk,
                overwrite_lms_grades=True,
            )
            == 0
        )
    finally:
        server.close()
    got = report(capsys.readouterr().out)
    assert got["s02"][0] == "kept" and got["s02"][1].startswith("excused in Canvas")
    assert server.unexcused == [] and server.users["302"]["excused"]
    assert server.users["302"]["comments"] == [] and got["s01"][0] == got["s03"][0] == "posted"


def test_canvas_late_deduction_is_not_taken_for_a_change(tmp_path, store, capsys):
    """Canvas's late policy takes points_deducted off what is posted (score), and keeps what was
    posted as entered_score: the push compares that, so it neither re-posts nor keeps."""
    users = students(2)
    folder = write_class(tmp_path / "course", users, pages=False)
    server = course(store, users)
    server.late_deduction = 10.0
    try:
        assert (
            run(folder, "canvas", canvas_env(server, folder), course_id="1234", late_by_lms=True)
            == 0
        )
        capsys.readouterr()
        server.log.clear()
        assert (
            run(folder, "canvas", canvas_env(server, folder), course_id="1234", late_by_lms=True)
            == 0
        )
    finally:
        server.close()
    assert "0 posted, 2 unchanged, 0 failed" in capsys.readouterr().out
    assert server.puts() == []


# 4. A 401 with an HTML body says what the LMS answered
# ------------------------------------------------------------------------------------------


def test_a_canvas_401_sign_in_page_is_said_not_cannot_be_reached(tmp_path, store):
    users = students(2)
    folder = write_class(tmp_path / "course", users, pages=False)
    server = course(store, users)
    server.sign_in = True
    try:
        with pytest.raises(GradeError) as info:
            run(folder, "canvas", canvas_env(server, folder), course_id="1234")
    finally:
        server.close()
    message = str(info.value)
    assert "cannot be reached" not in message and "\n" not in message
    assert 'Canvas answered 401 text/html, not JSON: "Log In to Canvas"' in message, message
    assert "nothing was posted" in message and TOKEN not in message


class SignInMidway(CanvasCourse):
    """Canvas's session ends after the first grade: every later request meets the sign-in
    page."""

    def handle(self, method, path, query, headers, body):
        if method == "PUT" and self.puts():
            self.sign_in = True
        return super().handle(method, path, query, headers, body)


def test_a_401_sign_in_page_mid_push_is_said_on_each_line(tmp_path, store, capsys):
    users = students(5)
    folder = write_class(tmp_path / "course", users, pages=False)
    server = SignInMidway(TOKEN, "1234", "48213", 100.0, list(users.values()), store)
    try:
        assert run(folder, "canvas", canvas_env(server, folder), course_id="1234") == 1
    finally:
        server.close()
    got = report("".join(capsys.readouterr()))
    assert got["s01"][0] == "posted"
    assert got["s02"][0] == "failed" and got["s02"][1].startswith(
        'Canvas answered 401 text/html, not JSON: "Log In to Canvas" to it'
    )


class SignInTokenEndpoint(LtiPlatform):
    def _token(self, headers, body):
        return 401, {"Content-Type": "text/html"}, SIGN_IN_PAGE.replace(b"Canvas", b"the site")


def test_an_lti_token_endpoint_401_page_is_said_in_its_words(tmp_path):
    users = students(2)
    folder = write_class(tmp_path / "course", users, pages=False)
    key = tmp_path / "keys"
    push_lti_key.main(out=key)
    platform = SignInTokenEndpoint(
        "10000000000077", json.loads((key / "jwks.json").read_text()), list(users.values())
    )
    try:
        with pytest.raises(GradeError) as info:
            run(
                folder,
                "lti",
                lti_env(platform, key / "lti-key.pem", folder),
                lineitem=platform.lineitem,
            )
    finally:
        platform.close()
    message = str(info.value)
    assert "refused the tool's token request: 401 Log In to the site" in message, message
    assert "<html" not in message and "cannot be reached" not in message


def test_the_cli_takes_bulk_and_overwrite(tmp_path, store):
    import os
    import subprocess
    import sys

    users = students(3)
    folder = write_class(tmp_path / "course", users, pages=False)
    server = course(store, users)
    server.users["302"]["score"] = 50.0  # set by hand: overwritten on request
    try:
        # timeout: a backstop against a hang, not a measurement (quiet: about 2 s)
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "grader",
                "push",
                "canvas",
                str(folder / "scores"),
                "--roster",
                str(folder / "roster.csv"),
                "--course",
                str(folder / "course.json"),
                "--course-id",
                "1234",
                "--bulk",
                "--overwrite-lms-grades",
                "--yes",
            ],
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, **canvas_env(server, folder)},
        )
    finally:
        server.close()
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert len(server.requests("POST", r".*/update_grades")) == 1 and server.puts() == []
    assert server.users["302"]["score"] == 85.13 and TOKEN not in proc.stdout + proc.stderr
