"""Issue 27, "replayed score files": a score file is bound to what it graded. It holds, signed,
its submission's sha256; ``grade autograde`` records in --out where each submission was handed in
(a signed record, an entry a student); ``grade export``, ``grade push`` and ``grade report`` collect
each submission there again and refuse a file whose hash is not the submission's now (an earlier
attempt's signed 100 put back over the current 87.5); ``grade autograde`` regrades it. And a key
that signs them, readable by other users, is said."""

from __future__ import annotations

import csv
import json
import os
import shutil
from pathlib import Path

import nbformat
import pytest
from conftest import GOOD, grade, make_course, write_tree

WRONG_TWICE = {"mathy.py": GOOD["mathy.py"].replace("return 2 * n", "return 3 * n")}  # 3 of 4


def _autograde(course: Path, source, out: Path, *extra) -> dict:
    code, output = grade("autograde", "--course", course, *source, "--out", out, "--quiet", *extra)
    assert code == 0, output
    return {p.stem: json.loads(p.read_text()) for p in out.glob("*.json")}


def _export(course: Path, out: Path, tmp_path: Path) -> tuple[int, str, dict]:
    target = tmp_path / "grades.csv"
    target.unlink(missing_ok=True)
    code, output = grade("export", out, "--format", "csv", "--course", course, "--out", target)
    rows = {}
    if target.exists():
        with open(target, encoding="utf-8-sig", newline="") as f:
            rows = {row["student"]: row["score"] for row in csv.DictReader(f)}
    return code, output, rows


@pytest.fixture
def replayed(tmp_path):
    """ada's first attempt graded 4/4, her second 3/4, then the first's signed file put back into
    --out."""
    course = make_course(tmp_path / "course")
    subs, out = tmp_path / "subs", tmp_path / "out"
    write_tree(subs / "ada", GOOD)
    write_tree(subs / "bob", GOOD)
    assert _autograde(course, [subs], out)["ada"]["score"] == 4
    first = (out / "ada.json").read_bytes()
    write_tree(subs / "ada", WRONG_TWICE)
    assert _autograde(course, [subs], out)["ada"]["score"] == 3
    (out / "ada.json").write_bytes(first)
    return course, subs, out


def test_a_replayed_score_file_is_refused_by_export(replayed, tmp_path):
    course, subs, out = replayed
    code, output, rows = _export(course, out, tmp_path)
    assert code == 1 and "ada" not in rows and rows["bob"] == "4.00", (output, rows)
    line = next(line for line in output.splitlines() if line.startswith("refused: ada"))
    assert "submission" in line and str(subs / "ada") in line, line
    assert "rerun grade autograde" in line, line


def test_a_replayed_score_file_is_never_pushed(replayed, tmp_path):
    course, subs, out = replayed
    roster = tmp_path / "roster.csv"
    roster.write_text("student,lms_id\nada,101\nbob,102\n")
    code, output = grade(
        "push",
        "canvas",
        out,
        "--roster",
        roster,
        "--course",
        course,
        "--course-id",
        "1",
        "--assignment-id",
        "7",
    )
    assert code == 1 and "refused: ada (ada.json): " in output, output  # a dry run: none sent
    assert "bob" in output and "4" in output


def test_an_edited_record_of_the_submissions_stops_the_export_in_one_line(replayed, tmp_path):
    course, subs, out = replayed
    record = out / ".grade-submissions"
    data = json.loads(record.read_text())
    elsewhere = tmp_path / "first-attempt"
    shutil.copytree(subs, elsewhere)
    data["students"]["ada"]["path"] = str(elsewhere / "ada")  # to a copy made to match, say
    record.write_text(json.dumps(data))
    code, output, rows = _export(course, out, tmp_path)
    assert code == 2 and str(record) in output and len(output.strip().splitlines()) == 1, output
    assert rows == {}


def test_autograde_regrades_a_replayed_score_file(replayed):
    course, subs, out = replayed
    assert _autograde(course, [subs], out)["ada"]["score"] == 3


def test_a_submission_no_longer_where_it_was_graded_from_is_said_not_refused(replayed, tmp_path):
    course, subs, out = replayed
    _autograde(course, [subs], out)
    shutil.move(subs, tmp_path / "elsewhere")
    code, output, rows = _export(course, out, tmp_path)
    assert code == 0 and rows == {"ada": "3.00", "bob": "4.00"}, output
    warning = [line for line in output.splitlines() if "not checked" in line]
    assert len(warning) == 1 and str(subs / "ada") in warning[0], output


def test_score_files_graded_from_several_places_each_check_against_their_own(tmp_path):
    course = make_course(tmp_path / "course")
    out = tmp_path / "out"
    write_tree(tmp_path / "subs" / "ada", GOOD)
    write_tree(tmp_path / "late", {})
    (tmp_path / "late" / "bob.py").write_text(GOOD["mathy.py"])
    _autograde(course, [tmp_path / "subs"], out)
    _autograde(course, [tmp_path / "late" / "bob.py"], out)  # a late file, into the class's
    code, output, rows = _export(course, out, tmp_path)
    assert code == 0 and rows == {"ada": "4.00", "bob": "4.00"}, output
    (tmp_path / "late" / "bob.py").write_text(WRONG_TWICE["mathy.py"])
    code, output, rows = _export(course, out, tmp_path)
    assert code == 1 and rows == {"ada": "4.00"}, output


def test_an_nbgrader_submission_is_checked_as_it_was_collected(tmp_path):
    course = make_course(tmp_path / "course")
    data = json.loads(course.read_text())
    course.write_text(json.dumps({**data, "assignment": "ps1"}))
    folder = tmp_path / "nbgrader" / "submitted" / "ada" / "ps1"
    folder.mkdir(parents=True)
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(GOOD["mathy.py"])]
    nbformat.write(notebook, folder / "ps1.ipynb")
    out = tmp_path / "out"
    assert _autograde(course, ["--nbgrader", tmp_path / "nbgrader"], out)["ada"]["score"] == 4
    code, output, rows = _export(course, out, tmp_path)
    assert code == 0 and rows == {"ada": "4.00"}, output
    notebook.cells = [nbformat.v4.new_code_cell(WRONG_TWICE["mathy.py"])]
    nbformat.write(notebook, folder / "ps1.ipynb")
    code, output, rows = _export(course, out, tmp_path)
    assert code == 1 and rows == {}, output


@pytest.mark.skipif(os.name != "posix", reason="POSIX file modes")
def test_a_key_other_users_can_read_is_warned_of_in_one_line(tmp_path):
    course = make_course(tmp_path / "course")
    write_tree(tmp_path / "subs" / "ada", GOOD)
    out = tmp_path / "out"
    code, output = grade(
        "autograde", "--course", course, tmp_path / "subs", "--out", out, "--quiet"
    )
    assert code == 0 and "grade-key" not in output, output  # made 0600: nothing to say
    key = course.parent / ".grade-key"
    key.chmod(0o644)
    for command in (
        ["autograde", "--course", course, tmp_path / "subs", "--out", out, "--quiet"],
        ["export", out, "--format", "csv", "--course", course, "--out", tmp_path / "g.csv"],
    ):
        code, output = grade(*command)
        warning = [line for line in output.splitlines() if ".grade-key" in line]
        assert code == 0 and len(warning) == 1, output
        assert str(key) in warning[0] and "0644" in warning[0], warning
        assert "chmod 600" in warning[0], warning
