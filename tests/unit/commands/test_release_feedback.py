"""Feedback that reaches students: `grade release-feedback` (a folder per student, and nbgrader's
feedback/ layout), and every export with a comment field (moodle, lti, gradescope, csv) carrying the
diagnoses the Canvas comment carries, from one function (exporters.common.student_comment)."""

from __future__ import annotations

import csv
import io
import json
import shutil

import pytest
from conftest import EXAMPLES, PROJECT, THE_BLOCK, course_copy, grade

from grader.lms.exporters.common import student_comment

LAYERNORM_DDOF = "diagnosis: this matches LayerNorm with the sample variance"
ROSTER = PROJECT / "examples" / "roster.csv"


@pytest.fixture(scope="module")
def scores(tmp_path_factory):
    """Three examples graded with their pages, and an nbgrader course's submission graded from its
    notebook (with nbgrader's timestamp.txt and submission_secret.txt)."""
    tmp = tmp_path_factory.mktemp("release")
    subs = tmp / "subs"
    for student in ("ada_correct", "alan_ddof1", "linus_no_mask"):
        shutil.copytree(EXAMPLES / student, subs / student)
    code, output = grade(
        "autograde",
        "--course",
        course_copy(),
        "-a",
        THE_BLOCK,
        subs,
        "--out",
        tmp / "scores",
        "--html",
        "-j",
        2,
    )
    assert code == 0, output
    course = tmp / "nbgrader_course"
    submitted = course / "submitted" / "grace_partial" / THE_BLOCK
    submitted.mkdir(parents=True)
    shutil.copy(
        PROJECT / "examples" / "notebooks" / "grace_partial.ipynb", submitted / f"{THE_BLOCK}.ipynb"
    )
    (submitted / "timestamp.txt").write_text("2026-05-01 20:00:00.000000 Europe/Lisbon\n")
    (submitted / "submission_secret.txt").write_text("s3cret\n")
    code, output = grade(
        "autograde",
        "--course",
        course_copy(),
        "-a",
        THE_BLOCK,
        "--nbgrader",
        course,
        "--out",
        tmp / "scores-nbgrader",
    )
    assert code == 0, output
    return tmp


def test_a_folder_per_student_with_their_page_and_the_lms_comment(scores, tmp_path):
    code, output = grade(
        "release-feedback",
        scores / "scores",
        "--to",
        tmp_path / "feedback",
        "--course",
        course_copy(),
    )
    assert code == 0, output
    assert "feedback of 3 students of the-block, 0 left out" in output
    for student in ("ada_correct", "alan_ddof1", "linus_no_mask"):
        folder = tmp_path / "feedback" / student
        assert sorted(p.name for p in folder.iterdir()) == [
            "the-block-feedback.txt",
            "the-block.html",
        ]
        assert (folder / "the-block.html").read_bytes() == (
            scores / "scores" / f"{student}.html"
        ).read_bytes()
        doc = json.loads((scores / "scores" / f"{student}.json").read_text())
        assert (folder / "the-block-feedback.txt").read_text() == student_comment(
            doc, doc["score"]
        ) + "\n"
    alan = (tmp_path / "feedback" / "alan_ddof1" / "the-block-feedback.txt").read_text()
    assert (
        LAYERNORM_DDOF in alan and "hidden test(s) failed (their details are not released)" in alan
    )


def test_an_edited_score_file_is_not_delivered(scores, tmp_path):
    edited = shutil.copytree(scores / "scores", tmp_path / "scores")
    doc = json.loads((edited / "alan_ddof1.json").read_text())
    doc["problems"][0]["score"] = doc["problems"][0]["max_score"]
    (edited / "alan_ddof1.json").write_text(json.dumps(doc))
    code, output = grade(
        "release-feedback", edited, "--to", tmp_path / "feedback", "--course", course_copy()
    )
    assert (
        code == 1
        and "left out: alan_ddof1 (alan_ddof1.json): its signature does not match" in output
    )
    assert sorted(p.name for p in (tmp_path / "feedback").iterdir()) == [
        "ada_correct",
        "linus_no_mask",
    ]


def test_nbgrader_layout_is_what_generate_feedback_writes(scores):
    """nbgrader's generate_feedback writes feedback/<student>/<assignment>/<notebook>.html and
    copies the submission's other files (release_feedback then reads timestamp.txt and
    submission_secret.txt)."""
    course = scores / "nbgrader_course"
    code, output = grade(
        "release-feedback",
        scores / "scores-nbgrader",
        "--nbgrader",
        course,
        "--course",
        course_copy(),
        "-a",
        THE_BLOCK,
    )
    assert code == 0, output
    folder = course / "feedback" / "grace_partial" / THE_BLOCK
    assert sorted(p.name for p in folder.iterdir()) == [
        "submission_secret.txt",
        f"{THE_BLOCK}.html",
        "timestamp.txt",
    ]
    page = (
        folder / f"{THE_BLOCK}.html"
    ).read_text()  # graded without --html: the comment as a page
    assert (
        page.startswith("<!DOCTYPE html>") and "grace_partial" in page and "attention 0/25" in page
    )
    assert (folder / "timestamp.txt").read_text().startswith("2026-05-01 20:00:00")


def test_every_export_with_a_comment_field_carries_the_canvas_comments_diagnoses(scores, tmp_path):
    folder = scores / "scores"
    alan = json.loads((folder / "alan_ddof1.json").read_text())
    comment = student_comment(alan, alan["score"])
    assert LAYERNORM_DDOF in comment and comment.startswith("the-block: 87.5/100")

    def export(fmt: str, *extra) -> str:
        out = tmp_path / f"out-{fmt}"
        code, output = grade(
            "export",
            folder,
            "--format",
            fmt,
            "--roster",
            ROSTER,
            "--out",
            out,
            "--course",
            course_copy(),
            "--allow-missing",
            *extra,
        )
        assert code == 0, output
        return out

    moodle = list(
        csv.DictReader(
            io.StringIO(export("moodle", "--moodle-key", "username").read_text(encoding="utf-8"))
        )
    )
    assert next(r for r in moodle if r["Username"] == "aturing")["Feedback: the-block"] == comment
    lti = [json.loads(line) for line in export("lti").read_text().splitlines()]
    assert next(o for o in lti if o["userId"] == "102")["comment"] == comment
    gradescope = json.loads((export("gradescope") / "alan_ddof1" / "results.json").read_text())
    assert gradescope["output"] == comment
    table = list(csv.DictReader(io.StringIO(export("csv").read_text(encoding="utf-8-sig"))))
    assert next(r for r in table if r["student"] == "alan_ddof1")["feedback"] == comment
