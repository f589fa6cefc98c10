"""`grade export`: each format's file for a small roster with awkward names, checked against its
importer's rules (header, key column, number format, quoting), the rules every format shares
(missing students, bad input), and the score files it refuses in every format (a grader error, no or
a broken signature, a total that is not the sum of its problems, another course or grader
version)."""

from __future__ import annotations

import csv
import io
import json
import re

import jsonschema
import pytest
from test_cli import grade

from grader import __version__
from grader.commands.export import Trust, refusal
from grader.course.manifest import load as load_course
from grader.grading.signature import load_key, sign
from grader.lms.exporters import EXPORTERS
from grader.lms.exporters.lti import SCHEMA_PATH as LTI_SCHEMA

ROSTER = [
    ("student", "lms_id", "sis_id", "login", "email", "name", "section"),
    ("ada", "101", "0012345", "alovelace", "Ada@Example.edu", "Lovelace, Ada", "ML 101 - 001"),
    ("alan", "102", "0012346", "aturing", "alan@example.edu", 'Turing, "Al"', "ML 101 - 001"),
    ("zoe", "103", "", "zoe", "zoe@example.edu", "Zoë Ñúñez-Öberg", "ML 101 - 002"),
    (
        "eve",
        "104",
        "0012348",
        "eve",
        "eve@example.edu",
        '=HYPERLINK("http://evil.example","x")',
        "+1 (late)",
    ),
    (
        "mallory",
        "105",
        "0012349",
        "mallory",
        "mallory@example.edu",
        "Mallory",
        "ML 101 - 002",
    ),  # no score file
]
PROBLEMS = {"layernorm": 20.0, "gelu": 15.0, "attention": 25.0, "block": 25.0, "params": 15.0}
SCORES = {  # student -> per-problem points; alan is late
    "ada": {"layernorm": 20, "gelu": 15, "attention": 25, "block": 10.125, "params": 15},  # 85.125
    "alan": {"layernorm": 20, "gelu": 15, "attention": 25, "block": 25, "params": 5},  # 90, late
    "zoe": {"layernorm": 0.1, "gelu": 0.2, "attention": 25, "block": 25, "params": 15},  # 65.3
    "eve": {"layernorm": 20, "gelu": 15, "attention": 25, "block": 25, "params": 15},  # 100
    "trudy": {
        "layernorm": 20,
        "gelu": 0,
        "attention": 0,
        "block": 0,
        "params": 0,
    },  # not in the roster
}
TWO_DECIMALS = re.compile(r"^\d+\.\d\d$")


def score_doc(student: str, points: dict, course_sha256: str = "b" * 64) -> dict:
    problems = [
        {
            "name": n,
            "score": points[n],
            "max_score": m,
            "tests": [f"test_{n}"],
            "passed": int(points[n] == m),
        }
        for n, m in PROBLEMS.items()
    ]
    tests = [
        {
            "name": f"test_{n}",
            "problem": n,
            "score": points[n],
            "max_score": m,
            "status": "passed" if points[n] == m else "failed",
            "output": "" if points[n] == m else f"{n} of a 3×4 input: values differ",
            "visibility": "visible",
        }
        for n, m in PROBLEMS.items()
    ]
    raw = round(sum(points.values()), 6)
    doc = {
        "student": student,
        "assignment": "the-block",
        "status": "graded",
        "score": raw,
        "max_score": 100.0,
        "problems": problems,
        "tests": tests,
        "execution_time": 1.5,
        "graded_at": "2026-05-02T10:00:00.000+00:00",
        "grader_version": __version__,
        "submission_sha256": "a" * 64,
        "course_sha256": course_sha256,
        "sandbox": "process+rlimits",
    }
    if student == "alan":
        doc["score"] = 80.0
        doc["late"] = {
            "submitted_at": "2026-05-02T09:00:00.000+00:00",
            "due": "2026-05-01T23:59:00.000+00:00",
            "seconds_late": 32460.0,
            "days_late": 1,
            "percent": 10.0,
            "penalty": 10.0,
            "raw_score": raw,
        }
    return doc


def write_course(folder, **fields):
    """A course.json for the-block in ``folder`` (export reads its key, sha256 and LMS ids); the
    loaded course."""
    (folder / "tests").mkdir(parents=True, exist_ok=True)
    (folder / "tests" / "test_p.py").write_text("")
    (folder / "course.json").write_text(
        json.dumps(
            {
                "assignment": "the-block",
                **fields,
                "problems": [
                    {
                        "name": n,
                        "module": n,
                        "functions": [n],
                        "points": m,
                        "public": "tests/test_p.py",
                    }
                    for n, m in PROBLEMS.items()
                ],
            }
        )
    )
    return load_course(folder / "course.json")


def write_scores(class_dir, docs: dict, sign_them: bool = True) -> None:
    """Each doc as scores/<student>.json, signed with the course's key as `grade autograde` signs
    it."""
    key = load_key(class_dir / "course.json", create=True)
    for student, doc in docs.items():
        (class_dir / "scores" / f"{student}.json").write_text(
            json.dumps(sign(doc, key) if sign_them else doc), encoding="utf-8"
        )


def write_class(class_dir, **course_fields) -> None:
    """The course (with ``course_fields``), and SCORES graded with it, signed."""
    course = write_course(class_dir, **course_fields)
    (class_dir / "scores").mkdir(exist_ok=True)
    write_scores(
        class_dir, {s: score_doc(s, points, course.sha256) for s, points in SCORES.items()}
    )


@pytest.fixture
def class_dir(tmp_path):
    write_class(tmp_path)
    roster = tmp_path / "roster.csv"
    with open(roster, "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(ROSTER)
    return tmp_path


def export(class_dir, fmt, *extra):
    out = class_dir / f"out-{fmt}"
    result = grade(
        "export",
        class_dir / "scores",
        "--format",
        fmt,
        "--roster",
        class_dir / "roster.csv",
        "--out",
        out,
        "--course",
        class_dir / "course.json",
        *extra,
    )
    return result, out


def assert_missing_reported(result):
    assert result.exit_code == 1, result.output
    assert "mallory: in the roster, no score file" in result.output
    assert "trudy: has a score file, not in the roster" in result.output


def test_canvas_gradebook_csv(class_dir):
    result, out = export(class_dir, "canvas", "--canvas-assignment-id", "48213")
    assert_missing_reported(result)
    raw = out.read_bytes()
    assert (
        raw.startswith(b"Student,ID,SIS User ID,SIS Login ID,Section,") and b"\r\n" in raw
    )  # no BOM, CRLF
    rows = list(csv.reader(io.StringIO(raw.decode("utf-8"), newline="")))
    header, body = rows[0], rows[1:]
    assert header == [
        "Student",
        "ID",
        "SIS User ID",
        "SIS Login ID",
        "Section",
        "the-block (48213)",
    ]
    assert re.fullmatch(r"(.*)\s\((\d+)\)", header[-1])  # Canvas's title-and-id pattern
    by_id = {r[1]: r for r in body}
    assert sorted(by_id) == ["101", "102", "103", "104"]  # mallory left out, not blank
    assert (
        by_id["101"][0] == "Lovelace, Ada" and by_id["101"][2] == "0012345"
    )  # comma kept, leading zero kept
    assert by_id["102"][0] == 'Turing, "Al"' and b'"Turing, ""Al"""' in raw  # RFC 4180 quoting
    assert by_id["103"][0] == "Zoë Ñúñez-Öberg"
    assert (
        by_id["104"][0].startswith("'=") and by_id["104"][4] == "'+1 (late)"
    )  # neutralised text cells
    assert {r[5] for r in body} == {"85.13", "80.00", "65.30", "100.00"}  # rounded once, half up
    assert all(TWO_DECIMALS.match(r[5]) for r in body)
    assert not any("Points Possible" in r[0] for r in body)


def test_canvas_points_possible_row_late_by_lms_and_the_id_from_course_json(class_dir):
    write_class(class_dir, lms={"canvas_assignment_id": "777"})
    course = class_dir / "course.json"
    out = class_dir / "canvas.csv"
    result = grade(
        "export",
        class_dir / "scores",
        "--format",
        "canvas",
        "--roster",
        class_dir / "roster.csv",
        "--out",
        out,
        "--course",
        course,
        "--points-possible",
        "--late-by-lms",
        "--allow-missing",
    )
    assert result.exit_code == 0, result.output  # listed, but allowed
    assert "mallory: in the roster, no score file" in result.output
    rows = list(csv.reader(io.StringIO(out.read_text(encoding="utf-8"))))
    assert rows[0][-1] == "the-block (777)"
    assert rows[1] == ["    Points Possible", "", "", "", "", "100.00"]
    assert {r[1]: r[5] for r in rows[2:]}["102"] == "90.00"  # before the grader's late penalty


def test_moodle_csv_keyed_on_the_chosen_field_with_feedback(class_dir):
    result, out = export(class_dir, "moodle", "--moodle-key", "username")
    assert_missing_reported(result)
    text = out.read_text(encoding="utf-8")
    assert "Last downloaded from" not in text and not text.startswith("\ufeff")
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == ["Username", "the-block", "Feedback: the-block"]
    assert all(len(r) == 3 for r in rows)  # no csvweirdcolumns
    by_key = {r[0]: r for r in rows[1:]}
    assert sorted(by_key) == ["alovelace", "aturing", "eve", "zoe"]
    assert by_key["alovelace"][1] == "85.13" and all(TWO_DECIMALS.match(r[1]) for r in rows[1:])
    assert "block 10.125/25" in by_key["alovelace"][2]
    assert "1 day(s) late: 10 points off 90" in by_key["aturing"][2]
    result, out = export(class_dir, "moodle")  # default key: email, as written
    rows = list(csv.reader(io.StringIO(out.read_text(encoding="utf-8"))))
    assert rows[0][0] == "Email address" and "Ada@Example.edu" in {r[0] for r in rows}


def test_blackboard_tab_delimited_upload(class_dir):
    result, out = export(class_dir, "blackboard", "--blackboard-column-id", "664617")
    assert_missing_reported(result)
    lines = out.read_bytes().decode("utf-8").split("\r\n")
    assert lines[0] == '"Username"\t"the-block [Total Pts: 100 Score] |664617"'
    assert lines[1] == '"alovelace"\t85.13'  # text quoted, number not
    rows = list(csv.reader(io.StringIO(out.read_text(encoding="utf-8")), delimiter="\t"))
    assert re.fullmatch(r"(.+) \[Total Pts: (\d+(?:\.\d+)?) Score\] \|(\S+)", rows[0][1])
    assert {r[0]: r[1] for r in rows[1:]} == {
        "alovelace": "85.13",
        "aturing": "80.00",
        "zoe": "65.30",
        "eve": "100.00",
    }
    missing_id = grade(
        "export",
        class_dir / "scores",
        "--format",
        "blackboard",
        "--roster",
        class_dir / "roster.csv",
        "--out",
        class_dir / "bb2.txt",
        "--course",
        class_dir / "course.json",
    )
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
    assert by_user["101"]["scoreGiven"] == 85.125  # raw points, not rounded to 2
    assert by_user["102"]["scoreGiven"] == 80 and by_user["102"]["submission"][
        "submittedAt"
    ].startswith("2026-05-02")


@pytest.mark.parametrize(
    "bad",
    [
        {"scoreGiven": 3},  # scoreGiven without scoreMaximum
        {"scoreGiven": 3, "scoreMaximum": 0},
        {"timestamp": "2026-05-01T12:00:00+00:00"},  # no sub-second part
        {"timestamp": "2026-05-01T12:00:00.123"},  # no time zone
        {"comment": ""},
        {"activityProgress": "Done"},
        {"extra": 1},
    ],
)
def test_the_lti_schema_refuses_what_the_spec_forbids(bad):
    good = {
        "userId": "1",
        "scoreGiven": 1,
        "scoreMaximum": 2,
        "activityProgress": "Completed",
        "gradingProgress": "FullyGraded",
        "timestamp": "2026-05-01T12:00:00.123+00:00",
    }
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
    assert (
        alan["score"] == 80.0 and sum(t["score"] for t in alan["tests"]) == 90
    )  # score overrides the sum
    for student in ("ada", "alan", "eve", "zoe"):
        results = json.loads((out / student / "results.json").read_text())
        assert isinstance(results["execution_time"], (int, float)) and isinstance(
            results["output"], str
        )
        for test in results["tests"]:
            assert set(test) == {
                "name",
                "number",
                "score",
                "max_score",
                "status",
                "output",
                "visibility",
            }
            assert test["status"] in ("passed", "failed") and isinstance(test["number"], str)
            assert test["visibility"] in ("hidden", "after_due_date", "after_published", "visible")
            assert round(test["score"], 2) == test["score"]
    ada = json.loads((out / "ada" / "results.json").read_text())
    assert ada["score"] == 85.13 and {t["name"] for t in ada["tests"]} >= {"block: test_block"}


def test_csv_for_people_with_a_column_per_problem(class_dir):
    result, out = export(class_dir, "csv")
    assert_missing_reported(result)
    raw = out.read_bytes()
    assert raw.startswith(b"\xef\xbb\xbf")  # a BOM, for Excel
    rows = list(csv.DictReader(io.StringIO(raw.decode("utf-8-sig"))))
    header = list(rows[0])
    assert header[:8] == [
        "student",
        "name",
        "section",
        "layernorm (20)",
        "gelu (15)",
        "attention (25)",
        "block (25)",
        "params (15)",
    ]
    by_student = {r["student"]: r for r in rows}
    assert (
        by_student["alan"]["raw_score"] == "90.00" and by_student["alan"]["late_penalty"] == "10.00"
    )
    assert by_student["alan"]["score"] == "80.00" and by_student["alan"]["days_late"] == "1"
    assert by_student["zoe"]["layernorm (20)"] == "0.10" and by_student["zoe"]["score"] == "65.30"
    assert (
        by_student["eve"]["name"].startswith("'=") and by_student["eve"]["section"] == "'+1 (late)"
    )
    assert by_student["ada"]["name"] == "Lovelace, Ada"


def test_a_bad_score_file_is_named_and_nothing_already_written_is_lost(class_dir):
    out = class_dir / "grades.csv"
    out.write_text("the previous export\n")
    doc = json.loads((class_dir / "scores" / "zoe.json").read_text())
    doc["score"] = "sixty"
    (class_dir / "scores" / "zoe.json").write_text(json.dumps(doc))
    result = grade(
        "export",
        class_dir / "scores",
        "--format",
        "csv",
        "--out",
        out,
        "--course",
        class_dir / "course.json",
    )
    assert result.exit_code == 2
    assert re.search(r"zoe\.json: field 'score': .*is not of type 'number'", result.output)
    assert len(result.output.strip().splitlines()) == 1
    assert out.read_text() == "the previous export\n"


def test_bad_rosters_are_refused_with_the_line_and_field(class_dir):
    roster = class_dir / "roster.csv"
    roster.write_text(
        roster.read_text() + "zed,106,,zed,ada@example.edu,Zed,S\n"
    )  # Ada's email, other case
    result, _ = export(class_dir, "csv")
    assert result.exit_code == 2 and "roster.csv: line 7: field 'email'" in result.output
    # only the columns the format needs: csv none, blackboard the login, canvas one of its three
    # keys
    roster.write_text("student,name\nada,Ada\n")
    result, out = export(class_dir, "csv", "--allow-missing")
    assert result.exit_code == 0, result.output
    assert "Lovelace" not in out.read_text("utf-8-sig") and "Ada" in out.read_text("utf-8-sig")
    result, _ = export(class_dir, "blackboard", "--blackboard-column-id", "1")
    assert (
        result.exit_code == 2
        and "roster.csv: line 1: column missing: 'login' (--format blackboard" in result.output
    )
    result, _ = export(class_dir, "canvas", "--canvas-assignment-id", "1")
    assert (
        result.exit_code == 2 and "column missing: 'lms_id' or 'sis_id' or 'login'" in result.output
    )
    roster.write_text("name\nAda\n")
    result, _ = export(class_dir, "moodle", "--moodle-key", "username")
    assert result.exit_code == 2 and "columns missing: 'student', 'login'" in result.output
    assert len(result.output.strip().splitlines()) == 1
    roster.write_text("student,login\nada,alovelace\n")
    result, out = export(class_dir, "blackboard", "--blackboard-column-id", "1", "--allow-missing")
    assert result.exit_code == 0 and '"alovelace"\t85.13' in out.read_text("utf-8")


def test_an_out_of_the_wrong_kind_is_one_line_and_nothing_is_written(class_dir):
    folder = class_dir / "a-folder"
    folder.mkdir()
    result = grade(
        "export",
        class_dir / "scores",
        "--format",
        "csv",
        "--out",
        folder,
        "--course",
        class_dir / "course.json",
    )
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert f"--out {folder}: is a folder, and --format csv writes one file" in result.output
    assert list(folder.iterdir()) == []
    a_file = class_dir / "results.txt"
    a_file.write_text("mine\n")
    result = grade(
        "export",
        class_dir / "scores",
        "--format",
        "gradescope",
        "--out",
        a_file,
        "--course",
        class_dir / "course.json",
    )
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert f"--out {a_file}: is a file, and --format gradescope writes a folder" in result.output
    result = grade(
        "export",
        class_dir / "scores",
        "--format",
        "csv",
        "--out",
        a_file / "g.csv",
        "--course",
        class_dir / "course.json",
    )
    assert result.exit_code == 2 and f"{a_file} is a file, not a folder" in result.output
    assert a_file.read_text() == "mine\n"


def test_blackboards_default_file_is_the_xls_its_help_names(class_dir):
    result = grade(
        "export",
        class_dir / "scores",
        "--format",
        "blackboard",
        "--roster",
        class_dir / "roster.csv",
        "--blackboard-column-id",
        "1",
        "--course",
        class_dir / "course.json",
        cwd=class_dir,
    )
    assert result.exit_code == 1, result.output  # mallory and trudy listed
    assert (class_dir / "the-block-blackboard.xls").read_text("utf-8").startswith('"Username"\t')


def test_an_id_that_starts_like_a_formula_is_refused_not_changed(class_dir):
    roster = class_dir / "roster.csv"
    roster.write_text(roster.read_text().replace("alovelace", "=alovelace"))
    result, out = export(class_dir, "blackboard", "--blackboard-column-id", "1")
    assert result.exit_code == 2 and "roster.csv: student 'ada': field 'login'" in result.output
    assert not out.exists()


def test_the_lms_formats_need_a_roster(class_dir):
    result = grade(
        "export",
        class_dir / "scores",
        "--format",
        "lti",
        "--out",
        class_dir / "x.jsonl",
        "--course",
        class_dir / "course.json",
    )
    assert result.exit_code == 2 and "--roster is needed for lti" in result.output


# Score files `grade export` must refuse, whatever the format: student -> (how the file is made, the
# reason shown).
REFUSED = {
    "gina": "the grader failed on it, not the student",  # status grader_error
    "hank": "not signed",  # e.g. a `grade check --json` file
    "ivan": "its signature does not match its content (edited after grading?)",  # 50 -> 100 by hand
    "judy": "score 90 is not the sum of its problems' scores (80)",
    "kim": "graded with another version of the course",
    "leo": "graded by grader 0.1.0",
    "mia": "score 75 is not late.raw_score - late.penalty (70)",
    "nora": "late.raw_score 90 is not the sum of its problems' scores (80)",
}
EIGHTY = {"layernorm": 20, "gelu": 15, "attention": 25, "block": 10, "params": 10}


def refused_docs(course_sha256: str) -> dict[str, tuple[dict, bool]]:
    """student -> (score document, whether to sign it as autograde would), one per reason in
    REFUSED."""

    def doc(student, points=EIGHTY, **changes):
        return {**score_doc(student, points, course_sha256), **changes}

    gina = doc(
        "gina",
        dict.fromkeys(PROBLEMS, 0),
        status="grader_error",
        error="the grader failed, not your code: the sandbox's zygote died during gelu()",
    )
    late = {
        "submitted_at": "2026-05-02T09:00:00.000+00:00",
        "due": "2026-05-01T23:59:00.000+00:00",
        "seconds_late": 32460.0,
        "days_late": 1,
        "percent": 10.0,
        "penalty": 10.0,
        "raw_score": 80,
    }
    return {
        "gina": (gina, True),
        "hank": (doc("hank"), False),
        "ivan": (doc("ivan"), True),
        "judy": (doc("judy", score=90), True),
        "kim": (doc("kim", course_sha256="c" * 64), True),
        "leo": (doc("leo", grader_version="0.1.0"), True),
        "mia": (doc("mia", late=late, score=75), True),
        "nora": (doc("nora", late={**late, "raw_score": 90}, score=80), True),
    }


def add_refused(class_dir) -> None:
    """Write REFUSED's score files (and roster rows, so every format could key them)."""
    course = load_course(class_dir / "course.json")
    for student, (doc, signed) in refused_docs(course.sha256).items():
        write_scores(class_dir, {student: doc}, sign_them=signed)
    ivan = (
        class_dir / "scores" / "ivan.json"
    )  # edited by hand after grading: 80 -> 100, consistently
    edited = json.loads(ivan.read_text())
    edited["score"] = 100
    edited["problems"][3]["score"], edited["problems"][4]["score"] = 25, 15
    ivan.write_text(json.dumps(edited))
    with open(class_dir / "roster.csv", "a", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(
            [
                (s, str(200 + i), f"00200{i}", s, f"{s}@example.edu", s.title(), "ML 101 - 003")
                for i, s in enumerate(REFUSED)
            ]
        )


def exported_students(fmt: str, out, class_dir) -> set[str]:
    """The student ids an export wrote, read back from its file through the roster."""
    roster = list(csv.DictReader(open(class_dir / "roster.csv", encoding="utf-8")))
    by = {
        column: {r[column]: r["student"] for r in roster} for column in ("lms_id", "login", "email")
    }
    if fmt == "gradescope":
        return {p.name for p in out.iterdir()}
    text = out.read_text(encoding="utf-8-sig")
    if fmt == "lti":
        return {by["lms_id"][json.loads(line)["userId"]] for line in text.splitlines()}
    delimiter = "\t" if fmt == "blackboard" else ","
    rows = [r for r in csv.reader(io.StringIO(text), delimiter=delimiter)][1:]
    column, index = {
        "canvas": ("lms_id", 1),
        "moodle": ("email", 0),
        "blackboard": ("login", 0),
    }.get(fmt, (None, 0))
    return {by[column][r[index]] if column else r[index] for r in rows}


FORMAT_OPTIONS = {
    "canvas": ["--canvas-assignment-id", "48213"],
    "blackboard": ["--blackboard-column-id", "664617"],
}


@pytest.mark.parametrize("fmt", list(EXPORTERS))
def test_refused_score_files_are_left_out_and_listed_in_every_format(class_dir, fmt):
    add_refused(class_dir)
    result, out = export(class_dir, fmt, *FORMAT_OPTIONS.get(fmt, []))
    assert result.exit_code == 1, result.output
    for student, reason in REFUSED.items():
        assert f"refused: {student} ({student}.json): {reason}" in result.output, (
            student,
            result.output,
        )
        assert (
            f"{student}: in the roster, no score file" not in result.output
        )  # listed once, as refused
    exported = exported_students(fmt, out, class_dir)
    assert not exported & set(REFUSED), exported
    assert exported >= {"ada", "alan", "eve", "zoe"}
    if fmt == "lti":  # a failed grading used to go out as FullyGraded 0
        assert all(json.loads(line)["scoreGiven"] > 0 for line in out.read_text().splitlines())


def test_allow_missing_exports_the_rest_and_exits_0(class_dir):
    add_refused(class_dir)
    result, out = export(class_dir, "gradescope", "--allow-missing")
    assert result.exit_code == 0, result.output
    assert (
        "refused: gina (gina.json)" in result.output
        and "mallory: in the roster, no score file" in result.output
    )
    assert sorted(p.name for p in out.iterdir()) == ["ada", "alan", "eve", "zoe"]


def test_a_refused_file_alone_makes_the_exit_status_1(class_dir):
    (class_dir / "scores" / "trudy.json").unlink()
    roster = class_dir / "roster.csv"
    roster.write_text(
        "".join(
            line for line in roster.read_text().splitlines(True) if not line.startswith("mallory")
        )
    )
    assert export(class_dir, "csv")[0].exit_code == 0  # no one missing
    write_scores(class_dir, {"ada": {**score_doc("ada", SCORES["ada"]), "status": "grader_error"}})
    result, _ = export(class_dir, "csv")
    assert (
        result.exit_code == 1
        and "refused: ada (ada.json): the grader failed on it" in result.output
    )


def test_allow_stale_lets_through_only_another_course_or_grader_version(class_dir):
    add_refused(class_dir)
    result, out = export(class_dir, "lti", "--allow-stale")
    assert result.exit_code == 1
    exported = exported_students("lti", out, class_dir)
    assert exported & set(REFUSED) == {"kim", "leo"}
    for student in set(REFUSED) - {"kim", "leo"}:
        assert f"refused: {student} ({student}.json)" in result.output


@pytest.mark.parametrize("student", list(REFUSED))
def test_refusal_names_each_reason(student):
    doc, signed = refused_docs("d" * 64)[student]
    key = b"k" * 32
    doc = sign(doc, key) if signed else doc
    if student == "ivan":
        doc = {**doc, "score": 50}  # changed after signing
    trust = Trust(key, "d" * 64, __version__)
    assert REFUSED[student].split(" (")[0].split(":")[0] in refusal(doc, trust)
    assert refusal(sign(score_doc("ada", SCORES["ada"], "d" * 64), key), trust) is None


def test_export_needs_the_course_and_its_key(class_dir, tmp_path):
    result = grade(
        "export",
        class_dir / "scores",
        "--format",
        "csv",
        "--out",
        class_dir / "g.csv",
        "--course",
        tmp_path / "nowhere.json",
    )
    assert result.exit_code == 2 and "nowhere.json: not found" in result.output
    assert len(result.output.strip().splitlines()) == 1
    (class_dir / ".grade-key").unlink()
    result = grade(
        "export",
        class_dir / "scores",
        "--format",
        "csv",
        "--out",
        class_dir / "g.csv",
        "--course",
        class_dir / "course.json",
    )
    assert result.exit_code == 2 and ".grade-key: not found" in result.output
    assert len(result.output.strip().splitlines()) == 1 and not (class_dir / "g.csv").exists()


def test_a_score_file_of_the_old_format_is_named_not_exported(class_dir):
    old = json.loads((class_dir / "scores" / "ada.json").read_text())
    del old["status"], old["signature"]
    (class_dir / "scores" / "ada.json").write_text(json.dumps(old))
    result, out = export(class_dir, "csv")
    assert (
        result.exit_code == 2
        and "ada.json: field '(top level)': 'status' is a required property" in result.output
    )
    assert not out.exists()
