"""The TA's work: `grade override add` appends a row checked as the overrides CSV's rows are, the
next `grade autograde` applies it (re-scored, not regraded), and the regrade log says what each run
changed, per student (on stderr and in OUT/.grade-log)."""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import EXAMPLES, THE_BLOCK, course_copy, grade


@pytest.fixture
def course(tmp_path):
    """A course of its own (its overrides file is written here), with two of the examples."""
    root = shutil.copytree(course_copy().parent, tmp_path / "course")
    for student in ("alan_ddof1", "edsger_post_ln"):
        shutil.copytree(EXAMPLES / student, tmp_path / "subs" / student)
    return root / "course.json"


def _autograde(course, tmp_path):
    return grade(
        "autograde",
        "--course",
        course,
        "-a",
        THE_BLOCK,
        tmp_path / "subs",
        "--out",
        tmp_path / "scores",
        "-j",
        2,
    )


def test_an_override_added_is_applied_by_the_next_run_and_the_log_says_what_changed(
    course, tmp_path
):
    code, output = _autograde(course, tmp_path)
    assert code == 0, output
    assert "changed since the last run" not in output  # a first run: nothing to compare
    before = json.loads((tmp_path / "scores" / "edsger_post_ln.json").read_text())
    block = next(p["score"] for p in before["problems"] if p["name"] == "block")
    code, output = grade(
        "override",
        "add",
        "edsger_post_ln",
        "--course",
        course,
        "-a",
        THE_BLOCK,
        "--problem",
        "block",
        "--points",
        "+5",
        "--reason",
        "pre-LN wiring right in a later cell, regraded by hand",
        "--by",
        "ta.dijkstra",
    )
    assert code == 0, output
    overrides = course.parent / "overrides" / "the-block.csv"
    assert overrides.read_text().splitlines()[-1] == (
        'edsger_post_ln,adjust,block,+5,,"pre-LN wiring right in a later cell, regraded by hand",'
        "ta.dijkstra"
    )
    assert f"{overrides}: line 2: adjust block +5 for edsger_post_ln" in output

    code, output = _autograde(course, tmp_path)
    assert code == 0, output
    assert "1 re-scored for overrides or lateness, not regraded" in output
    assert "(adjusted +5)" in output  # the summary table
    after = json.loads((tmp_path / "scores" / "edsger_post_ln.json").read_text())
    assert after["score"] == before["score"] + 5 and after["graded_at"] == before["graded_at"]
    line = (
        f"changed since the last run: edsger_post_ln: {before['score']:g} -> {after['score']:g} "
        f"(re-scored: block {block:g} -> {block + 5:g}; block +5 by hand: pre-LN wiring right in a "
        "later cell, regraded by hand [ta.dijkstra])"
    )
    assert line in " ".join(output.split()), output
    log = [json.loads(x) for x in (tmp_path / "scores" / ".grade-log").read_text().splitlines()]
    assert [(e["student"], e["how"]) for e in log] == [
        ("alan_ddof1", "new"),
        ("edsger_post_ln", "new"),
        ("edsger_post_ln", "re-scored"),
    ]
    assert log[-1]["before"] == before["score"] and log[-1]["after"] == after["score"]

    code, output = _autograde(course, tmp_path)
    assert code == 0 and "no score changed since the last run" in output


@pytest.mark.parametrize(
    "args, said",
    [
        (["--problem", "blok", "--points", "+5"], "field 'problem': no problem named 'blok'"),
        (
            ["--kind", "bonus", "--problem", "block", "--points", "500"],
            "a bonus of at most the problem's own",
        ),
        (["--kind", "extension"], "field 'due': empty (extension needs it)"),
        (
            ["--problem", "block", "--points", "0"],
            "field 'points': must be a number of points other than 0",
        ),
    ],
)
def test_a_bad_override_is_one_line_naming_the_file_and_nothing_is_written(course, args, said):
    overrides = course.parent / "overrides" / "the-block.csv"
    was = overrides.read_bytes()
    code, output = grade(
        "override",
        "add",
        "alan_ddof1",
        "--course",
        course,
        "-a",
        THE_BLOCK,
        *args,
        "--reason",
        "r",
        "--by",
        "ta",
    )
    assert code == 2 and output.startswith(f"Error: {overrides}: line 2: ") and said in output, (
        output
    )
    assert "nothing was written" in output and overrides.read_bytes() == was


def test_an_assignment_without_an_overrides_file_says_how_to_name_one(course):
    code, output = grade(
        "override",
        "add",
        "ada",
        "--course",
        course,
        "-a",
        "the-modern-block",
        "--problem",
        "gqa",
        "--points",
        "+1",
        "--reason",
        "r",
        "--by",
        "ta",
    )
    assert code == 2 and 'add "overrides": "overrides/the-modern-block.csv"' in output
