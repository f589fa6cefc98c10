"""The class report at 300 students: a diagnosis's "who" list collapsed with its count, each
student's row linking to their feedback page, each zero with its reason, the similarity section
saying "top N of M pairs", its threshold and the class's baseline; and the demo's two assignments
one class (neither reports the other's students as missing)."""

from __future__ import annotations

import copy
import json
import re
import shutil
from pathlib import Path

import pytest
from conftest import EXAMPLES, PROJECT, THE_BLOCK, course_copy, grade
from mutants import MUTANTS, write_faults

from grader.grading.signature import load_key, sign

# distinct submission -> copies in the class of 300
KINDS = {"correct": 60, "ddof": 200, "import_error": 25, "partial": 10, "stub": 5}
NAMES_SHOWN = 10


@pytest.fixture(scope="module")
def classroom(tmp_path_factory) -> Path:
    """300 score files with their pages: each kind graded once with --html, then copied under other
    names (score files re-signed, pages copied)."""
    tmp = tmp_path_factory.mktemp("scale")
    subs = tmp / "subs"
    write_faults(subs / "correct", {})
    module, changes = MUTANTS["layernorm.ddof1"]
    write_faults(subs / "ddof", {module: changes})
    shutil.copytree(EXAMPLES / "barbara_import_error", subs / "import_error")
    shutil.copytree(EXAMPLES / "grace_partial", subs / "partial")
    shutil.copytree(PROJECT / "exercises" / THE_BLOCK, subs / "stub")
    code, output = grade(
        "autograde",
        "--course",
        course_copy(),
        "-a",
        THE_BLOCK,
        subs,
        "--out",
        tmp / "graded",
        "--html",
        "-j",
        2,
        "-q",
    )
    assert code == 0, output
    key = load_key(course_copy())
    scores = tmp / "report" / "scores"
    scores.mkdir(parents=True)
    for kind, copies in KINDS.items():
        doc = json.loads((tmp / "graded" / f"{kind}.json").read_text())
        for i in range(copies):
            student = f"{kind}_{i:03d}"
            (scores / f"{student}.json").write_text(
                json.dumps(sign({**copy.deepcopy(doc), "student": student}, key))
            )
            shutil.copyfile(tmp / "graded" / f"{kind}.html", scores / f"{student}.html")
    code, output = grade(
        "report",
        "--course",
        course_copy(),
        "-a",
        THE_BLOCK,
        scores,
        "--html",
        tmp / "report" / "class.html",
    )
    assert code == 0, output
    (tmp / "report" / "terminal.txt").write_text(output)
    return tmp / "report"


def test_a_long_who_list_is_collapsed_with_its_count(classroom):
    page = (classroom / "class.html").read_text()
    row = re.search(r'<tr data-mistake="layernorm.ddof1">(.*?)</tr>', page, re.S).group(1)
    who = re.search(r'<td class="l who">(.*)</td>', row, re.S).group(1)
    summary = re.search(r"<details><summary>(.*?)</summary>", who, re.S).group(1)
    assert summary.count("<a ") == NAMES_SHOWN and "and 190 more: all 200" in summary
    assert who.count('<a href="#a0-s') == NAMES_SHOWN + 200  # all of them, inside
    assert "</a><a" not in who  # a space between names: a line breaks there, never past the page
    terminal = " ".join((classroom / "terminal.txt").read_text().split())
    assert "ddof_000, ddof_001" in terminal and "and 192 more" in terminal  # 8 named on a terminal


def test_each_student_row_links_to_their_page(classroom):
    page = (classroom / "class.html").read_text()
    links = re.findall(r'<a class="page" href="([^"]+)">([^<]+)</a>', page)
    assert len(links) == sum(KINDS.values())
    for href, student in links:
        assert href == f"scores/{student}.html" and (classroom / href).is_file()


def test_a_zero_says_why(classroom):
    page = (classroom / "class.html").read_text()

    def why(student: str) -> str:
        row = re.search(
            rf'<tr id="a0-s\d+"><td class="l"><a class="page" href="scores/{student}.html">'
            r'.*?<td class="l why">(.*?)</td></tr>',
            page,
            re.S,
        )
        return re.sub(r"<[^>]+>", "", row.group(1))

    assert "attention: import error: importing attention.py failed" in why("import_error_000")
    assert "params: not implemented: count_params() is not implemented yet" in why("partial_000")
    assert "layernorm: blank: every exercise function missing or the released stub" in why(
        "stub_000"
    )
    assert why("correct_000") == "" and why("ddof_000") == ""
    assert re.search(
        r"<td class=\"l\">attention</td><td class=\"l\">import error</td><td>25</td>", page
    )
    terminal = " ".join((classroom / "terminal.txt").read_text().split())
    assert "attention: import error: 25 (import_error_000" in terminal


def test_similarity_says_top_n_of_m_its_threshold_and_the_baseline(tmp_path):
    subs = tmp_path / "subs"
    for student in ("ada_correct", "alan_ddof1", "kathy_erf_gelu", "linus_no_mask"):
        shutil.copytree(EXAMPLES / student, subs / student)
    shutil.copytree(EXAMPLES / "alan_ddof1", subs / "copycat")
    code, output = grade(
        "autograde",
        "--course",
        course_copy(),
        "-a",
        THE_BLOCK,
        subs,
        "--out",
        tmp_path / "scores",
        "-j",
        2,
        "-q",
    )
    assert code == 0, output
    code, output = grade(
        "report",
        "--course",
        course_copy(),
        "-a",
        THE_BLOCK,
        tmp_path / "scores",
        "--similarity",
        subs,
        "--html",
        tmp_path / "class.html",
    )
    assert code == 0, output
    text = " ".join(output.split())
    said = re.search(
        r"similar code \(instructors only\): top (\d+) of (\d+) pairs at least 33\.0 % alike, "
        r"of 10 compared; the class's baseline \(median of all pairs\): (\d+\.\d) %",
        text,
    )
    assert said, text
    assert int(said.group(1)) == int(said.group(2)) >= 1 and "alan_ddof1 ~ copycat: 100.0 %" in text
    page = " ".join((tmp_path / "class.html").read_text().split())
    assert re.search(
        r"Top \d+ of \d+ pairs at least 33 % alike \(copydetect's threshold; at most 50 "
        r"listed\), of 10 pairs compared\. The class's baseline, the median likeness of all "
        r"pairs: \d+\.\d %",
        page,
    ), page


def test_the_demos_two_assignments_are_one_class(tmp_path):
    """make demo's report: the same students in both, the roster naming each, none missing."""
    folders = {
        a: sorted(p.name for p in (PROJECT / "examples" / a).iterdir() if p.is_dir())
        for a in (THE_BLOCK, "the-modern-block")
    }
    assert folders[THE_BLOCK] == folders["the-modern-block"]
    roster = (PROJECT / "examples" / "roster.csv").read_text().splitlines()[1:]
    assert sorted(line.split(",")[0] for line in roster) == folders[THE_BLOCK]
    for assignment in folders:
        code, output = grade(
            "autograde",
            "--course",
            course_copy(),
            "-a",
            assignment,
            PROJECT / "examples" / assignment,
            "--out",
            tmp_path / assignment,
            "-j",
            2,
            "-q",
        )
        assert code == 0, output
    code, output = grade(
        "report",
        "--course",
        course_copy(),
        tmp_path / THE_BLOCK,
        tmp_path / "the-modern-block",
        "--roster",
        PROJECT / "examples" / "roster.csv",
    )
    assert code == 0, output
    text = " ".join(output.split())
    for assignment in folders:
        assert re.search(rf"{assignment}: 10 students graded, .* 0 missing", text), text
