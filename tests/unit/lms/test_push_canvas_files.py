"""`grade push canvas --attach-pages` (issue 29, item 2): each student's feedback page goes to
Canvas as a submission-comment file through the three documented steps (Uploading Files: the
POST to .../comments/files, the upload to the file store, the confirmation), attached to the one
comment that carries the grade's feedback and its diagnoses; against lms_platforms.CanvasCourse
and FileStore (written from Canvas's "Submissions", "Submission Comments" and "Uploading Files"
docs)."""

from __future__ import annotations

import pytest
from lms_platforms import CanvasCourse, FileStore
from lms_servers import Elsewhere
from push_class import (
    DIAGNOSIS,
    POINTS,
    TOKEN,
    canvas_env,
    regrade,
    report,
    run,
    students,
    write_class,
)

from grader.errors import GradeError

USERS = students(3)
BASE = "/api/v1/courses/1234/assignments/48213/submissions"


@pytest.fixture
def store():
    server = FileStore()
    yield server
    server.close()


@pytest.fixture
def canvas(store):
    server = CanvasCourse(TOKEN, "1234", "48213", 100.0, list(USERS.values()), store)
    yield server
    server.close()


@pytest.fixture
def folder(tmp_path):
    return write_class(tmp_path / "course", USERS)


def test_each_page_goes_up_in_three_steps_and_rides_on_the_one_comment(
    folder, canvas, store, capsys
):
    status = run(folder, "canvas", canvas_env(canvas, folder), course_id="1234", attach_pages=True)
    out, err = capsys.readouterr()
    assert status == 0, out + err
    for student, user in USERS.items():
        # step 1: name, size and content type, with the token
        [(_, form)] = canvas.requests("POST", rf"{BASE}/{user}/comments/files")
        page = (folder / "scores" / f"{student}.html").read_bytes()
        assert form == {
            "name": [f"{student}-feedback.html"],
            "size": [str(len(page))],
            "content_type": ["text/html"],
        }
        # one comment: the feedback, its diagnoses, and the page confirmed in step 3
        [submitted] = canvas.users[user]["comments"]
        assert submitted["comment"].startswith("the-block: 85.125/100\n")
        assert f"  {DIAGNOSIS}" in submitted["comment"].splitlines()
        [file_id] = submitted["attachments"]
        assert canvas.files[file_id]["content"] == page and canvas.files[file_id]["available"]
        assert canvas.users[user]["score"] == 85.13
        [(_, put)] = canvas.requests("PUT", rf"{BASE}/{user}")
        assert put["comment[file_ids][]"] == [str(file_id)]
        assert put["submission[posted_grade]"] == ["85.13"]
    # step 2: the store got the signed params as given, the file last, and never the token
    assert len(store.log) == 3
    for path, headers, parts in store.log:
        assert "Authorization" not in headers and TOKEN not in str(headers)
        assert [n for n, _, _ in parts] == ["key", "acl", "Policy", "Signature", "file"]
    # step 3: the confirmation, on Canvas, with the token
    assert len(canvas.requests("GET", r"/api/v1/files/\d+/create_success")) == 3
    assert report(out)["s01"] == ("posted", "grade 85.13 (was none) and comment with the page")

    canvas.log.clear()
    store.log.clear()
    assert (
        run(folder, "canvas", canvas_env(canvas, folder), course_id="1234", attach_pages=True) == 0
    )
    out, _ = capsys.readouterr()
    assert canvas.puts() == [] and store.log == []  # a second push sends nothing
    assert report(out)["s02"] == ("unchanged", "grade 85.13 and comment and page already there")


def test_a_regraded_page_goes_up_again_with_its_comment(folder, canvas, capsys):
    env = canvas_env(canvas, folder)
    assert run(folder, "canvas", env, course_id="1234", attach_pages=True) == 0
    capsys.readouterr()
    regrade(folder, "s02", {**POINTS, "params": 5})  # 75.125 now
    canvas.log.clear()
    assert run(folder, "canvas", env, course_id="1234", attach_pages=True) == 0
    out, _ = capsys.readouterr()
    assert [p for p, _ in canvas.puts()] == [f"{BASE}/302"]
    first, second = canvas.users["302"]["comments"]
    assert second["comment"].startswith("the-block: 75.125/100") and second["attachments"]
    assert (
        canvas.files[second["attachments"][0]]["content"]
        == (folder / "scores" / "s02.html").read_bytes()
    )
    assert report(out)["s02"] == ("posted", "grade 75.13 (was 85.13) and comment with the page")


def test_a_store_that_answers_201_created_is_confirmed_at_its_location(folder, canvas, store):
    store.mode = "created"
    assert (
        run(folder, "canvas", canvas_env(canvas, folder), course_id="1234", attach_pages=True) == 0
    )
    assert all(canvas.users[u]["comments"][0]["attachments"] for u in USERS.values())


def test_a_confirmation_on_another_host_is_never_sent_the_token(folder, canvas, store, capsys):
    """The store's 301 points at another host: the tool would send it Canvas's token (step 3 is
    authenticated); it is not followed, the student fails, and nothing is attached or graded."""
    elsewhere = Elsewhere()  # 127.0.0.2, counting connections
    store.mode = "elsewhere"
    try:
        status = run(
            folder, "canvas", canvas_env(canvas, folder), course_id="1234", attach_pages=True
        )
    finally:
        elsewhere.close()
    out, err = capsys.readouterr()
    assert status == 1 and elsewhere.connections == 0 and TOKEN not in out + err
    statuses = report(out + err)
    assert statuses["s01"][0] == "failed" and "not on this Canvas" in statuses["s01"][1]
    assert all(
        canvas.users[u]["comments"] == [] and canvas.users[u]["score"] is None
        for u in USERS.values()
    )


def test_a_missing_or_stale_page_is_said_before_anything_is_sent(folder, canvas, store):
    (folder / "scores" / "s02.html").unlink()
    with pytest.raises(
        GradeError,
        match=r"--attach-pages: no feedback page for s02 .*"
        r"grade autograde --html",
    ):
        run(folder, "canvas", canvas_env(canvas, folder), course_id="1234", attach_pages=True)
    with pytest.raises(GradeError, match="no feedback page for s02"):  # dry run too
        run(folder, "canvas", {}, course_id="1234", attach_pages=True, yes=False)
    regrade(folder, "s02", POINTS)
    page = folder / "scores" / "s03.html"  # an older grading's page
    page.write_text(page.read_text().replace("2026-05-02T10:00", "2026-04-01T08:00"))
    with pytest.raises(GradeError, match="a page of another grading than the score file for s03"):
        run(folder, "canvas", canvas_env(canvas, folder), course_id="1234", attach_pages=True)
    assert canvas.log == [] and store.log == []


def test_the_dry_run_names_each_page_and_sends_nothing(folder, canvas, capsys):
    assert run(folder, "canvas", {}, course_id="1234", attach_pages=True, yes=False) == 0
    out = capsys.readouterr().out
    assert (
        "would post: s01 (user 301): grade 85.13, comment (with the page s01.html attached):" in out
    )
    assert f"      {DIAGNOSIS}" in out.splitlines()  # the comment, indented
    assert canvas.log == []


def test_the_cli_takes_attach_pages(folder, canvas):
    from test_cli import grade

    result = grade(
        "push",
        "canvas",
        folder / "scores",
        "--roster",
        folder / "roster.csv",
        "--course",
        folder / "course.json",
        "--course-id",
        "1234",
        "--attach-pages",
    )
    assert result.exit_code == 0, result.output
    assert "(with the page s03.html attached)" in result.output


class PlainHttpStore(CanvasCourse):
    """A Canvas (or something answering as it) naming an upload URL in clear text elsewhere."""

    def _create_file(self, user, form):
        status, headers, answer = super()._create_file(user, form)
        return status, headers, {**answer, "upload_url": "http://files.example.invalid/upload"}


def test_a_page_is_never_uploaded_in_clear_text(folder, store, capsys):
    server = PlainHttpStore(TOKEN, "1234", "48213", 100.0, list(USERS.values()), store)
    try:
        assert (
            run(folder, "canvas", canvas_env(server, folder), course_id="1234", attach_pages=True)
            == 1
        )
    finally:
        server.close()
    got = report("".join(capsys.readouterr()))
    assert got["s01"][0] == "failed" and "is not https: the page was not sent" in got["s01"][1]
    assert store.log == [] and server.puts() == []
