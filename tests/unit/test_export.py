"""`grade export`: each format's file for a small roster with awkward names, checked against its importer's rules
(header, key column, number format, quoting), and the rules every format shares (missing students, bad input)."""
from __future__ import annotations

import csv
import io
import json
import re

import jsonschema
import pytest
from test_cli import grade

from grader.exporters.lti import SCHEMA_PATH as LTI_SCHEMA

ROSTER = [
    ("student", "lms_id", "sis_id", "login", "email", "name", "section"),
    ("ada", "101", "0012345", "alovelace", "Ada@Example.edu", "Lovelace, Ada", "ML 101 - 001"),
    ("alan", "102", "0012346", "aturing", "alan@example.edu", 'Turing, "Al"', "ML 101 - 001"),
    ("zoe", "103", "", "zoe", "zoe@example.edu", "Zoë Ñúñez-Öberg", "ML 101 - 002"),
    ("eve", "104", "0012348", "eve", "eve@example.edu", '=HYPERLINK("http://evil.example","x")', "+1 (late)"),
    ("mallory", "105", "0012349", "mallory", "mallory@example.edu", "Mallory", "ML 101 - 002"),   # no score file
]
PROBLEMS = {"layernorm": 20.0, "gelu": 15.0, "attention": 25.0, "block": 25.0, "params": 15.0}
SCORES = {   # student -> per-problem points; alan is late
    "ada": {"layernorm": 20, "gelu": 15, "attention": 25, "block": 10.125, "params": 15},        # 85.125
    "alan": {"layernorm": 20, "gelu": 15, "attention": 25, "block": 25, "params": 5},            # 90, late
    "zoe": {"layernorm": 0.1, "gelu": 0.2, "attention": 25, "block": 25, "params": 15},          # 65.3
    "eve": {"layernorm": 20, "gelu": 15, "attention": 25, "block": 25, "params": 15},            # 100
    "trudy": {"layernorm": 20, "gelu": 0, "attention": 0, "block": 0, "params": 0},              # not in the roster
}
TWO_DECIMALS = re.compile(r"^\d+\.\d\d$")


def score_doc(student: str, points: dict) -> dict:
    problems = [{"name": n, "score": points[n], "max_score": m, "tests": [f"test_{n}"], "passed": int(points[n] == m)}
                for n, m in PROBLEMS.items()]
    tests = [{"name": f"test_{n}", "problem": n, "score": points[n], "max_score": m,
              "status": "passed" if points[n] == m else "failed",
              "output": "" if points[n] == m else f"{n} of a 3×4 input: values differ", "visibility": "visible"}
             for n, m in PROBLEMS.items()]
    raw = round(sum(points.values()), 6)
    doc = {"student": student, "assignment": "the-block", "score": raw, "max_score": 100.0, "problems": problems,
           "tests": tests, "execution_time": 1.5, "graded_at": "2026-05-02T10:00:00.000+00:00",
           "grader_version": "0.1.0", "submission_sha256": "a" * 64, "course_sha256": "b" * 64,
           "sandbox": "process+rlimits"}
    if student == "alan":
        doc["score"] = 80.0
        doc["late"] = {"submitted_at": "2026-05-02T09:00:00.000+00:00", "due": "2026-05-01T23:59:00.000+00:00",
                       "seconds_late": 32460.0, "days_late": 1, "percent": 10.0, "penalty": 10.0, "raw_score": raw}
    return doc


@pytest.fixture
def class_dir(tmp_path):
    scores = tmp_path / "scores"
    scores.mkdir()
    for student, points in SCORES.items():
        (scores / f"{student}.json").write_text(json.dumps(score_doc(student, points)), encoding="utf-8")
    roster = tmp_path / "roster.csv"
    with open(roster, "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(ROSTER)
    return tmp_path


def export(class_dir, fmt, *extra):
    out = class_dir / f"out-{fmt}"
    result = grade("export", class_dir / "scores", "--format", fmt, "--roster", class_dir / "roster.csv",
                   "--out", out, "--course", class_dir / "no-course.json", *extra)
    return result, out


def assert_missing_reported(result):
    assert result.exit_code == 1, result.output
    assert "mallory: in the roster, no score file" in result.output
    assert "trudy: has a score file, not in the roster" in result.output


def test_canvas_gradebook_csv(class_dir):
    result, out = export(class_dir, "canvas", "--canvas-assignment-id", "48213")
    assert_missing_reported(result)
    raw = out.read_bytes()
    assert raw.startswith(b"Student,ID,SIS User ID,SIS Login ID,Section,") and b"\r\n" in raw   # no BOM, CRLF
    rows = list(csv.reader(io.StringIO(raw.decode("utf-8"), newline="")))
    header, body = rows[0], rows[1:]
    assert header == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "the-block (48213)"]
    assert re.fullmatch(r"(.*)\s\((\d+)\)", header[-1])                   # Canvas's title-and-id pattern
    by_id = {r[1]: r for r in body}
    assert sorted(by_id) == ["101", "102", "103", "104"]                  # mallory left out, not blank
    assert by_id["101"][0] == "Lovelace, Ada" and by_id["101"][2] == "0012345"    # comma kept, leading zero kept
    assert by_id["102"][0] == 'Turing, "Al"' and b'"Turing, ""Al"""' in raw       # RFC 4180 quoting
    assert by_id["103"][0] == "Zoë Ñúñez-Öberg"
    assert by_id["104"][0].startswith("'=") and by_id["104"][4] == "'+1 (late)"    # neutralised text cells
    assert {r[5] for r in body} == {"85.13", "80.00", "65.30", "100.00"}       # rounded once, half up
    assert all(TWO_DECIMALS.match(r[5]) for r in body)
    assert not any("Points Possible" in r[0] for r in body)


def test_canvas_points_possible_row_late_by_lms_and_the_id_from_course_json(class_dir):
    course = class_dir / "course.json"
    course.write_text(json.dumps({"assignment": "the-block", "lms": {"canvas_assignment_id": "777"},
                                  "problems": [{"name": "p", "module": "p", "functions": ["f"], "points": 1,
                                                "public": "roster.csv"}]}))
    out = class_dir / "canvas.csv"
    result = grade("export", class_dir / "scores", "--format", "canvas", "--roster", class_dir / "roster.csv",
                   "--out", out, "--course", course, "--points-possible", "--late-by-lms", "--allow-missing")
    assert result.exit_code == 0, result.output                            # listed, but allowed
    assert "mallory: in the roster, no score file" in result.output
    rows = list(csv.reader(io.StringIO(out.read_text(encoding="utf-8"))))
    assert rows[0][-1] == "the-block (777)"
    assert rows[1] == ["    Points Possible", "", "", "", "", "100.00"]
    assert {r[1]: r[5] for r in rows[2:]}["102"] == "90.00"               # before the grader's late penalty


def test_moodle_csv_keyed_on_the_chosen_field_with_feedback(class_dir):
    result, out = export(class_dir, "moodle", "--moodle-key", "username")
    assert_missing_reported(result)
    text = out.read_text(encoding="utf-8")
    assert "Last downloaded from" not in text and not text.startswith("\ufeff")
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == ["Username", "the-block", "Feedback: the-block"]
    assert all(len(r) == 3 for r in rows)                                  # no csvweirdcolumns
    by_key = {r[0]: r for r in rows[1:]}
    assert sorted(by_key) == ["alovelace", "aturing", "eve", "zoe"]
    assert by_key["alovelace"][1] == "85.13" and all(TWO_DECIMALS.match(r[1]) for r in rows[1:])
    assert "block 10.125/25" in by_key["alovelace"][2]
    assert "1 day(s) late: 10 points off 90" in by_key["aturing"][2]
    result, out = export(class_dir, "moodle")                             # default key: email, as written
    rows = list(csv.reader(io.StringIO(out.read_text(encoding="utf-8"))))
    assert rows[0][0] == "Email address" and "Ada@Example.edu" in {r[0] for r in rows}


def test_blackboard_tab_delimited_upload(class_dir):
    result, out = export(class_dir, "blackboard", "--blackboard-column-id", "664617")
    assert_missing_reported(result)
    lines = out.read_bytes().decode("utf-8").split("\r\n")
    assert lines[0] == '"Username"\t"the-block [Total Pts: 100 Score] |664617"'
    assert lines[1] == '"alovelace"\t85.13'                                 # text quoted, number not
    rows = list(csv.reader(io.StringIO(out.read_text(encoding="utf-8")), delimiter="\t"))
    assert re.fullmatch(r"(.+) \[Total Pts: (\d+(?:\.\d+)?) Score\] \|(\S+)", rows[0][1])
    assert {r[0]: r[1] for r in rows[1:]} == {"alovelace": "85.13", "aturing": "80.00", "zoe": "65.30", "eve": "100.00"}
    missing_id = grade("export", class_dir / "scores", "--format", "blackboard", "--roster", class_dir / "roster.csv",
                       "--out", class_dir / "bb2.txt", "--course", class_dir / "none.json")
    assert missing_id.exit_code == 2 and "blackboard_column_id" in missing_id.output
    assert not (class_dir / "bb2.txt").exists()


def test_lti_ags_score_objects_one_per_line(class_dir):
    result, out = export(class_dir, "lti")
    assert_missing_reported(result)
    objects = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    schema = json.loads(LTI_SCHEMA.read_text())
    by_user = {o["userId"]: o for o in objects}
    assert sorted(by_user) == ["101", "102", "103", "104"]
    for obj in objects:
        jsonschema.validate(obj, schema)
        assert obj["activityProgress"] == "Completed" and obj["gradingProgress"] == "FullyGraded"
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00", obj["timestamp"])
        assert obj["scoreMaximum"] == 100 and "scoringUserId" not in obj
        assert "comment" not in obj or obj["comment"].strip()
    assert by_user["101"]["scoreGiven"] == 85.125                           # raw points, not rounded to 2
    assert by_user["102"]["scoreGiven"] == 80 and by_user["102"]["submission"]["submittedAt"].startswith("2026-05-02")


@pytest.mark.parametrize("bad", [
    {"scoreGiven": 3},                                                     # scoreGiven without scoreMaximum
    {"scoreGiven": 3, "scoreMaximum": 0},
    {"timestamp": "2026-05-01T12:00:00+00:00"},                            # no sub-second part
    {"timestamp": "2026-05-01T12:00:00.123"},                              # no time zone
    {"comment": ""},
    {"activityProgress": "Done"},
    {"extra": 1},
])
def test_the_lti_schema_refuses_what_the_spec_forbids(bad):
    good = {"userId": "1", "scoreGiven": 1, "scoreMaximum": 2, "activityProgress": "Completed",
            "gradingProgress": "FullyGraded", "timestamp": "2026-05-01T12:00:00.123+00:00"}
    schema = json.loads(LTI_SCHEMA.read_text())
    jsonschema.validate(good, schema)
    obj = {**good, **bad}
    if bad == {"scoreGiven": 3}:
        obj.pop("scoreMaximum")
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(obj, schema)


def test_gradescope_results_json_per_student(class_dir):
    result, out = export(class_dir, "gradescope")
    assert_missing_reported(result)
    assert sorted(p.name for p in out.iterdir()) == ["ada", "alan", "eve", "zoe"]
    alan = json.loads((out / "alan" / "results.json").read_text())
    assert alan["score"] == 80.0 and sum(t["score"] for t in alan["tests"]) == 90    # score overrides the sum
    for student in ("ada", "alan", "eve", "zoe"):
        results = json.loads((out / student / "results.json").read_text())
        assert isinstance(results["execution_time"], (int, float)) and isinstance(results["output"], str)
        for test in results["tests"]:
            assert set(test) == {"name", "number", "score", "max_score", "status", "output", "visibility"}
            assert test["status"] in ("passed", "failed") and isinstance(test["number"], str)
            assert test["visibility"] in ("hidden", "after_due_date", "after_published", "visible")
            assert round(test["score"], 2) == test["score"]
    ada = json.loads((out / "ada" / "results.json").read_text())
    assert ada["score"] == 85.13 and {t["name"] for t in ada["tests"]} >= {"block: test_block"}


def test_csv_for_people_with_a_column_per_problem(class_dir):
    result, out = export(class_dir, "csv")
    assert_missing_reported(result)
    raw = out.read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf")                                  # a BOM, for Excel
    rows = list(csv.DictReader(io.StringIO(raw.decode("utf-8-sig"))))
    header = list(rows[0])
    assert header[:8] == ["student", "name", "section", "layernorm (20)", "gelu (15)", "attention (25)",
                          "block (25)", "params (15)"]
    by_student = {r["student"]: r for r in rows}
    assert by_student["alan"]["raw_score"] == "90.00" and by_student["alan"]["late_penalty"] == "10.00"
    assert by_student["alan"]["score"] == "80.00" and by_student["alan"]["days_late"] == "1"
    assert by_student["zoe"]["layernorm (20)"] == "0.10" and by_student["zoe"]["score"] == "65.30"
    assert by_student["eve"]["name"].startswith("'=") and by_student["eve"]["section"] == "'+1 (late)"
    assert by_student["ada"]["name"] == "Lovelace, Ada"


def test_a_bad_score_file_is_named_and_nothing_already_written_is_lost(class_dir):
    out = class_dir / "grades.csv"
    out.write_text("the previous export\n")
    doc = json.loads((class_dir / "scores" / "zoe.json").read_text())
    doc["score"] = "sixty"
    (class_dir / "scores" / "zoe.json").write_text(json.dumps(doc))
    result = grade("export", class_dir / "scores", "--format", "csv", "--out", out)
    assert result.exit_code == 2
    assert re.search(r"zoe\.json: field 'score': .*is not of type 'number'", result.output)
    assert len(result.output.strip().splitlines()) == 1
    assert out.read_text() == "the previous export\n"


def test_bad_rosters_are_refused_with_the_line_and_field(class_dir):
    roster = class_dir / "roster.csv"
    roster.write_text(roster.read_text() + "zed,106,,zed,ada@example.edu,Zed,S\n")    # Ada's email, other case
    result, _ = export(class_dir, "csv")
    assert result.exit_code == 2 and "roster.csv: line 7: field 'email'" in result.output
    roster.write_text("student,name\nada,Ada\n")
    result, _ = export(class_dir, "csv")
    assert result.exit_code == 2 and "field 'lms_id': column missing" in result.output


def test_an_id_that_starts_like_a_formula_is_refused_not_changed(class_dir):
    roster = class_dir / "roster.csv"
    roster.write_text(roster.read_text().replace("alovelace", "=alovelace"))
    result, out = export(class_dir, "blackboard", "--blackboard-column-id", "1")
    assert result.exit_code == 2 and "roster.csv: student 'ada': field 'login'" in result.output
    assert not out.exists()


def test_the_lms_formats_need_a_roster(class_dir):
    result = grade("export", class_dir / "scores", "--format", "lti", "--out", class_dir / "x.jsonl")
    assert result.exit_code == 2 and "--roster is needed for lti" in result.output
