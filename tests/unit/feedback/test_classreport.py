"""`grade report`: the class report of a class of 304 with known mistakes (a few distinct
submissions graded once, their score files copied under other names and re-signed with the course's
key), on the terminal (plain text off a terminal) and as a page that headless Chromium renders with
the counts this test expects."""

from __future__ import annotations

import copy
import json
import re
import shutil
from collections import Counter
from pathlib import Path

import pytest
from conftest import PROJECT, THE_BLOCK, course_copy, grade
from mutants import MUTANTS, write_faults

from grader.course.manifest import CourseFile
from grader.grading.signature import load_key, sign

# distinct submission -> (its faults: catalogued mistakes, each written as a student would; copies
# in the class)
KINDS = {
    "correct": ((), 160),
    "ddof": (("layernorm.ddof1",), 38),
    "nomask": (("attention.no_mask",), 45),
    "postln": (("block.post_ln",), 30),
    "nobias": (("params.no_bias",), 12),
    "ddof_nomask": (("layernorm.ddof1", "attention.no_mask"), 10),
    "stub": (None, 5),  # the released stubs: a blank submission
}
CLASS = sum(copies for _, copies in KINDS.values())  # 300 counted ...
LATE = 4  # ... of them late (correct ones, 10 % off)
ERRORS = 3  # + grader errors: listed, never counted
TAMPERED = 1  # + an edited score file: refused


def _edits(mistakes) -> dict:
    edits: dict[str, list] = {}
    for mistake in mistakes:
        module, changes = MUTANTS[mistake]
        edits.setdefault(module, []).extend(changes)
    return edits


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> dict[str, dict]:
    """Each distinct submission's score file, graded once."""
    tmp = tmp_path_factory.mktemp("distinct")
    for name, (mistakes, _) in KINDS.items():
        if mistakes is None:
            shutil.copytree(PROJECT / "exercises" / THE_BLOCK, tmp / "subs" / name)
        else:
            write_faults(tmp / "subs" / name, _edits(mistakes))
    code, output = grade(
        "autograde",
        "--course",
        course_copy(),
        "-a",
        THE_BLOCK,
        tmp / "subs",
        "--out",
        tmp / "out",
        "--jobs",
        2,
        "-q",
    )
    assert code == 0, output
    return {name: json.loads((tmp / "out" / f"{name}.json").read_text()) for name in KINDS}


def _late(doc: dict) -> dict:
    penalty = round(doc["max_score"] * 0.1, 2)
    stamp = "2026-05-03T10:00:00.000+00:00"
    return {
        **doc,
        "score": doc["score"] - penalty,
        "late": {
            "submitted_at": stamp,
            "due": "2026-05-02T09:00:00.000+00:00",
            "seconds_late": 90000.0,
            "days_late": 2,
            "percent": 10.0,
            "penalty": penalty,
            "raw_score": doc["score"],
        },
    }


@pytest.fixture(scope="module")
def scores(graded, tmp_path_factory) -> Path:
    """The class's score folder: each kind's file copied under student names, re-signed; plus grader
    errors and one file edited after grading; and a roster with one student who handed in
    nothing."""
    key = load_key(course_copy())
    folder = tmp_path_factory.mktemp("class") / "scores"
    folder.mkdir()
    students = []

    def write(student: str, doc: dict) -> None:
        students.append(student)
        (folder / f"{student}.json").write_text(json.dumps(doc, indent=2))

    for name, (_, copies) in KINDS.items():
        for i in range(copies):
            doc = {**copy.deepcopy(graded[name]), "student": f"{name}_{i:03d}"}
            write(doc["student"], sign(_late(doc) if name == "correct" and i < LATE else doc, key))
    for i in range(ERRORS):
        doc = {
            **copy.deepcopy(graded["correct"]),
            "student": f"crashed_{i}",
            "status": "grader_error",
            "error": "the sandbox's zygote died during gelu()",
        }
        write(doc["student"], sign(doc, key))
    edited = sign({**copy.deepcopy(graded["ddof"]), "student": "edited_0"}, key)
    edited["problems"][0]["score"] = edited["problems"][0]["max_score"]
    write("edited_0", edited)
    roster = folder.parent / "roster.csv"
    rows = [
        f"{s},{100 + i},{i},login{i},{s}@example.edu,Student {i},A"
        for i, s in enumerate(students + ["zoe"])
    ]
    roster.write_text("student,lms_id,sis_id,login,email,name,section\n" + "\n".join(rows) + "\n")
    return folder


def _copies_with(mistake: str) -> int:
    return sum(copies for mistakes, copies in KINDS.values() if mistakes and mistake in mistakes)


@pytest.fixture(scope="module")
def report(scores):
    from grader.commands.report import reports

    (found,) = reports(
        [scores], CourseFile(course_copy(), THE_BLOCK), roster=scores.parent / "roster.csv"
    )
    return found


def test_grader_errors_and_refused_files_are_listed_apart_and_never_counted(report):
    assert report.counted == CLASS
    assert [s for s, _ in report.grader_errors] == [f"crashed_{i}" for i in range(ERRORS)]
    assert "zygote died" in report.grader_errors[0][1]
    assert [s for s, _ in report.refused] == ["edited_0"] and "signature" in report.refused[0][1]
    assert not {s.student for s in report.students} & {"crashed_0", "edited_0"}
    assert report.missing == ("zoe",)
    assert len(report.blank) == KINDS["stub"][1] and all(
        s.startswith("stub_") for s in report.blank
    )
    assert [x.student for x in report.late] == [f"correct_{i:03d}" for i in range(LATE)]


def test_each_mistake_is_counted_once_per_student_with_its_share_of_the_class(report):
    counts = {d.mistake: len(d.students) for d in report.diagnoses}
    for mistake in ("layernorm.ddof1", "attention.no_mask", "block.post_ln", "params.no_bias"):
        assert counts.get(mistake) == _copies_with(mistake), (mistake, counts)
    ddof = next(d for d in report.diagnoses if d.mistake == "layernorm.ddof1")
    assert ddof.share == pytest.approx(48 / CLASS)
    assert "sample variance" in ddof.message
    assert set(ddof.students) == {f"ddof_{i:03d}" for i in range(38)} | {
        f"ddof_nomask_{i:03d}" for i in range(10)
    }


def test_failure_rates_and_lost_points_add_up_the_copies(report, graded):
    weights = {name: copies for name, (_, copies) in KINDS.items()}
    failed = Counter()
    for name, doc in graded.items():
        for t in doc["tests"]:
            failed[(t["problem"], t["name"])] += weights[name] * (t["status"] != "passed")
    assert {(r.problem, r.name): r.failed for r in report.tests} == dict(failed)
    assert all(r.taken == CLASS for r in report.tests)
    assert [r.rate for r in report.tests] == sorted((r.rate for r in report.tests), reverse=True)
    assert {r.public for r in report.tests} == {True, False}
    for p in report.problems:
        full = sum(
            weights[n]
            * next(q["max_score"] - q["score"] for q in d["problems"] if q["name"] == p.name)
            for n, d in graded.items()
        )
        assert p.lost == pytest.approx(full)
    assert sum(p.lost_share for p in report.problems) == pytest.approx(1.0)


def test_the_terminal_report_off_a_terminal_is_plain_text_with_the_counts(scores):
    code, output = grade(
        "report",
        "--course",
        course_copy(),
        "-a",
        THE_BLOCK,
        scores,
        "--roster",
        scores.parent / "roster.csv",
    )
    assert code == 0, output
    assert "\x1b[" not in output  # no colour codes in a CI log
    text = " ".join(output.split())
    assert f"{CLASS} students graded" in text and f"{ERRORS} grader errors (not counted)" in text
    assert re.search(rf"layernorm\.ddof1\W+48\W+{100 * 48 / CLASS:.1f} %", text), (
        text
    )  # 48 = 38 + 10
    assert (
        "crashed_0: the sandbox's zygote died" in text
        and "edited_0: edited_0.json: its signature" in text
    )
    assert "missing (no score file): 1 zoe" in text


def test_a_bad_score_file_is_a_one_line_error_naming_it(scores, tmp_path):
    bad = shutil.copytree(scores, tmp_path / "bad")
    doc = json.loads((bad / "ddof_000.json").read_text())
    del doc["problems"]
    (bad / "ddof_000.json").write_text(json.dumps(doc))
    code, output = grade(
        "report", "--course", course_copy(), "-a", THE_BLOCK, bad, "--html", tmp_path / "class.html"
    )
    assert (
        code == 2
        and output.startswith("Error: ")
        and "ddof_000.json" in output
        and "problems" in output
    )
    assert not (tmp_path / "class.html").exists()


@pytest.fixture(scope="module")
def page(scores) -> Path:
    out = scores.parent / "class.html"
    code, output = grade(
        "report", "--course", course_copy(), "-a", THE_BLOCK, scores, "--html", out
    )
    assert code == 0, output
    return out


def test_the_page_is_self_contained_and_escaped(page):
    text = page.read_text()
    assert not re.search(r"<(script|link|img|iframe|object|embed)\b", text)
    assert not re.search(r"\bsrc=", text) and not re.search(r'href="(?!#)', text)
    assert not re.search(r"url\((?!#)|@import", text)
    assert text.count("<svg") == 1 + 5  # the total and each problem
    assert "zygote died during gelu()" in text and "<script" not in text


def test_headless_chromium_renders_the_counts_and_a_non_blank_page(page, tmp_path):
    import numpy as np
    from PIL import Image
    from test_page import _browser

    dom = _browser("--dump-dom", page.as_uri()).stdout
    row = re.search(
        r'<tr data-mistake="layernorm.ddof1">.*?class="count">(\d+)<.*?class="share">([\d.]+) %',
        dom,
        re.S,
    )
    assert row and row.groups() == ("48", f"{100 * 48 / CLASS:.1f}"), dom[:800]
    assert re.search(rf'id="a0-counted">{CLASS}<', dom) and re.search(
        rf'id="a0-errors">{ERRORS}<', dom
    )
    links = re.findall(r'href="#(a0-s\d+)">ddof_nomask_000<', dom)
    assert links and f'id="{links[0]}"' in dom  # a diagnosis links to its student's row
    shot = tmp_path / "class.png"
    _browser("--window-size=1200,1600", f"--screenshot={shot}", page.as_uri())
    pixels = np.asarray(Image.open(shot).convert("RGB"))
    assert (pixels.min(axis=2) < 200).mean() > 0.02 and len(
        {tuple(c) for c in pixels.reshape(-1, 3)[::7]}
    ) > 20


def test_several_assignments_get_a_section_each(scores, tmp_path):
    modern = tmp_path / "modern"
    code, output = grade(
        "autograde",
        "--course",
        course_copy(),
        "-a",
        "the-modern-block",
        PROJECT / "examples" / "the-modern-block",
        "--out",
        modern,
        "--jobs",
        2,
        "-q",
    )
    assert code == 0, output
    code, output = grade(
        "report", "--course", course_copy(), scores, modern, "--html", tmp_path / "both.html"
    )
    assert code == 0, output
    text = (tmp_path / "both.html").read_text()
    assert re.findall(r'data-assignment="([^"]+)"', text) == [THE_BLOCK, "the-modern-block"]
    assert "the-modern-block: 10 students graded" in " ".join(output.split())


def test_adjustments_extensions_and_missing_submission_times_are_shown():
    import io

    from rich.console import Console

    from grader.feedback import classpage, classreport, classview

    def doc(student, score, **extra):
        return {
            "student": student,
            "status": "graded",
            "score": score,
            "max_score": 10.0,
            "tests": [],
            "problems": [{"name": "gelu", "score": score, "max_score": 10.0}],
            **extra,
        }

    docs = [
        doc("on_time", 10.0),
        doc(
            "adjusted",
            8.0,
            adjustments=[
                {
                    "problem": "gelu",
                    "kind": "adjust",
                    "points": 3,
                    "applied": 2.0,
                    "reason": "regrade request #4",
                    "by": "ta_maria",
                }
            ],
        ),
        doc(
            "extended",
            10.0,
            late={
                "due": "2026-05-08T23:59:00+01:00",
                "percent": 0,
                "penalty": 0.0,
                "raw_score": 10.0,
                "days_late": 0,
                "extension": "2026-05-08T23:59:00+01:00",
            },
        ),
        doc(
            "no_time",
            9.0,
            late={
                "due": "2026-05-01T23:59:00+01:00",
                "percent": 10,
                "penalty": 1.0,
                "raw_score": 10.0,
                "timestamp": "missing",
                "counted_as": "late",
            },
        ),
    ]
    report = classreport.build("mini", docs)
    assert [(a.student, a.applied, a.by) for a in report.adjusted] == [
        ("adjusted", 2.0, "ta_maria")
    ]
    assert {x.student: (x.extension, x.flag) for x in report.late} == {
        "extended": ("2026-05-08T23:59:00+01:00", ""),
        "no_time": ("", "no timestamp (missing), counted as late"),
    }
    out = io.StringIO()
    classview.show(report, Console(file=out, width=200, force_terminal=False))
    text = out.getvalue()
    assert "adjusted: gelu +2: regrade request #4 (ta_maria)" in text
    assert "no_time: no timestamp (missing), counted as late, 1 points off 10" in text
    assert "extended to 2026-05-08T23:59:00+01:00" in text
    page = classpage.render([report], "Mini")
    assert "regrade request #4" in page and "ta_maria" in page and "no timestamp (missing)" in page
