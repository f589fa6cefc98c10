"""`grade export` with several score folders: one gradebook file, a column per assignment, for
canvas, moodle, blackboard and csv, on a synthetic course of two assignments. Each column is checked
as one folder is (its own assignment's fingerprint, the course's key, the roster); a refused or
missing student gets an empty cell and a stderr line under that assignment's name. Each file is read
back with the csv module."""

from __future__ import annotations

import csv
import io
import json
import re

import pytest
from click.testing import CliRunner

from grader import __version__
from grader.cli import main
from grader.course.manifest import load as load_course
from grader.grading.signature import load_key, sign

# Two small assignments; the ids are what each LMS matches its column on.
ASSIGNMENTS = {
    "attention": {
        "problems": {"softmax": 4, "attend": 6},
        "lms": {"canvas_assignment_id": "111", "blackboard_column_id": "_11_1"},
    },
    "mlp": {
        "problems": {"mlp": 5},
        "lms": {"canvas_assignment_id": "222", "blackboard_column_id": "_22_1"},
    },
}
# Roster order is not alphabetical: the gradebook must keep it. mallory has no score file anywhere.
ROSTER = [
    ("student", "lms_id", "sis_id", "login", "email", "name", "section"),
    ("zoe", "103", "0012347", "zoe", "zoe@example.edu", "Zoë Ñúñez", "S2"),
    ("ada", "101", "0012345", "alovelace", "ada@example.edu", "Lovelace, Ada", "S1"),
    ("alan", "102", "0012346", "aturing", "alan@example.edu", "Turing, Alan", "S1"),
    ("mallory", "105", "0012349", "mallory", "mallory@example.edu", "Mallory", "S2"),
]
# assignment -> student -> per-problem points. zoe's attention file is a grader error (refused);
# alan has
# no mlp file (missing).
POINTS = {
    "attention": {
        "ada": {"softmax": 4, "attend": 4.5},
        "alan": {"softmax": 4, "attend": 6},
        "zoe": {"softmax": 0, "attend": 0},
    },
    "mlp": {"ada": {"mlp": 5}, "zoe": {"mlp": 2.25}},
}
REFUSED = {("attention", "zoe")}


def score_doc(assignment: str, student: str, points: dict, course_sha256: str) -> dict:
    """A score file as `grade autograde` writes it (unsigned)."""
    maxima = ASSIGNMENTS[assignment]["problems"]
    status = "grader_error" if (assignment, student) in REFUSED else "graded"
    return {
        "student": student,
        "assignment": assignment,
        "status": status,
        "score": round(sum(points.values()), 6),
        "max_score": float(sum(maxima.values())),
        "problems": [
            {"name": n, "score": points[n], "max_score": m, "tests": [f"test_{n}"]}
            for n, m in maxima.items()
        ],
        "tests": [
            {
                "name": f"test_{n}",
                "problem": n,
                "score": points[n],
                "max_score": m,
                "status": "passed" if points[n] == m else "failed",
                "output": "",
                "visibility": "visible",
            }
            for n, m in maxima.items()
        ],
        "execution_time": 0.5,
        "graded_at": "2026-05-02T10:00:00.000+00:00",
        "grader_version": __version__,
        "submission_sha256": "a" * 64,
        "course_sha256": course_sha256,
        "sandbox": "process+rlimits",
        **(
            {"error": "the grader failed, not your code: the worker died"}
            if status == "grader_error"
            else {}
        ),
    }


def write_course(root, lms: dict | None = None) -> None:
    """course.json of the two assignments (each with its own lms ids, or ``lms`` for every one)."""
    (root / "tests").mkdir(parents=True, exist_ok=True)
    (root / "tests" / "test_p.py").write_text("")
    (root / "course.json").write_text(
        json.dumps(
            {
                "course": "ML 101",
                "assignments": [
                    {
                        "assignment": name,
                        "lms": lms if lms is not None else spec["lms"],
                        "problems": [
                            {
                                "name": n,
                                "module": n,
                                "functions": [n],
                                "points": m,
                                "public": "tests/test_p.py",
                            }
                            for n, m in spec["problems"].items()
                        ],
                    }
                    for name, spec in ASSIGNMENTS.items()
                ],
            }
        )
    )


def write_scores(root, assignment: str, docs: dict[str, dict]) -> None:
    """Each doc as scores/<assignment>/<student>.json, signed with the course's key as autograde
    signs it."""
    key = load_key(root / "course.json", create=True)
    folder = root / "scores" / assignment
    folder.mkdir(parents=True, exist_ok=True)
    for student, doc in docs.items():
        (folder / f"{student}.json").write_text(json.dumps(sign(doc, key)), encoding="utf-8")


@pytest.fixture
def course(tmp_path):
    """The course, POINTS' score files graded with it (signed), and the roster; returns the
    folder."""
    write_course(tmp_path)
    for name, students in POINTS.items():
        sha = load_course(tmp_path / "course.json", name).sha256
        write_scores(tmp_path, name, {s: score_doc(name, s, p, sha) for s, p in students.items()})
    with open(tmp_path / "roster.csv", "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(ROSTER)
    return tmp_path


def export(root, fmt: str, *extra, roster: bool = True):
    """`grade export scores/attention scores/mlp --format fmt`: the click result and the file
    written."""
    out = root / f"gradebook-{fmt}"
    args = [
        "export",
        root / "scores" / "attention",
        root / "scores" / "mlp",
        "--format",
        fmt,
        "--out",
        out,
        "--course",
        root / "course.json",
        *(["--roster", root / "roster.csv"] if roster else []),
        *extra,
    ]
    return CliRunner().invoke(main, [str(a) for a in args]), out


def read(out, delimiter: str = ",") -> list[list[str]]:
    return list(
        csv.reader(
            io.StringIO(out.read_text(encoding="utf-8-sig"), newline=""), delimiter=delimiter
        )
    )


def test_canvas_gradebook_has_a_title_and_id_column_per_assignment(course):
    result, out = export(course, "canvas")
    assert result.exit_code == 1, result.output
    assert not out.read_bytes().startswith(b"\xef\xbb\xbf")
    header, *body = read(out)
    assert header == [
        "Student",
        "ID",
        "SIS User ID",
        "SIS Login ID",
        "Section",
        "attention (111)",
        "mlp (222)",
    ]
    assert all(
        re.fullmatch(r"(.*)\s\((\d+)\)", h) for h in header[5:]
    )  # Canvas's title-and-id pattern
    assert [r[1] for r in body] == ["103", "101", "102"]  # roster order; mallory left out
    assert {r[1]: r[5:] for r in body} == {
        "103": ["", "2.25"],
        "101": ["8.50", "5.00"],
        "102": ["10.00", ""],
    }


def test_canvas_points_possible_row_has_each_assignments_maximum(course):
    result, out = export(course, "canvas", "--points-possible")
    assert read(out)[1] == ["    Points Possible", "", "", "", "", "10.00", "5.00"]


def test_canvas_and_moodle_warn_that_a_blank_cell_clears_a_grade(course):
    for fmt, lms in (("canvas", "Canvas"), ("moodle", "Moodle")):
        result, _ = export(course, fmt)
        assert (
            "warning: 2 empty grade cell(s), for students refused or without a score file in an "
            "assignment: "
            f"{lms} clears a grade already there" in result.stderr
        )


def test_moodle_gradebook_has_a_grade_and_a_feedback_column_per_assignment(course):
    result, out = export(course, "moodle", "--moodle-key", "username")
    assert result.exit_code == 1, result.output
    header, *body = read(out)
    assert header == ["Username", "attention", "Feedback: attention", "mlp", "Feedback: mlp"]
    assert all(len(r) == len(header) for r in body)  # no csvweirdcolumns
    by_key = {r[0]: r for r in body}
    assert [r[0] for r in body] == ["zoe", "alovelace", "aturing"]
    assert by_key["alovelace"][1] == "8.50" and by_key["alovelace"][3] == "5.00"
    assert "attend 4.5/6" in by_key["alovelace"][2] and "mlp 5/5" in by_key["alovelace"][4]
    assert (
        by_key["zoe"][1:3] == ["", ""] and by_key["zoe"][3] == "2.25"
    )  # refused in attention: both empty
    assert by_key["aturing"][1] == "10.00" and by_key["aturing"][3:5] == ["", ""]  # no mlp file


def test_blackboard_gradebook_has_a_total_pts_and_column_id_header_per_assignment(course):
    result, out = export(course, "blackboard")
    assert result.exit_code == 1, result.output
    header, *body = read(out, delimiter="\t")
    assert header == [
        "Username",
        "attention [Total Pts: 10 Score] |_11_1",
        "mlp [Total Pts: 5 Score] |_22_1",
    ]
    assert all(
        re.fullmatch(r"(.+) \[Total Pts: (\d+(?:\.\d+)?) Score\] \|(\S+)", h) for h in header[1:]
    )
    assert body == [["zoe", "", "2.25"], ["alovelace", "8.50", "5.00"], ["aturing", "10.00", ""]]
    assert out.read_text().splitlines()[2] == '"alovelace"\t8.50\t5.00'  # text quoted, numbers not


def test_csv_gradebook_is_the_student_then_a_column_per_assignment(course):
    result, out = export(course, "csv")
    assert result.exit_code == 1, result.output
    assert out.read_bytes().startswith(b"\xef\xbb\xbf")  # a BOM, for Excel
    assert read(out) == [
        ["student", "attention", "mlp"],
        ["zoe", "", "2.25"],
        ["ada", "8.50", "5.00"],
        ["alan", "10.00", ""],
    ]


def test_refused_and_missing_students_are_listed_per_assignment_on_stderr(course):
    result, _ = export(course, "csv")
    assert result.exit_code == 1
    lines = result.stderr.splitlines()
    assert (
        "refused: attention: zoe (zoe.json): the grader failed on it, not the student (the grader "
        "failed, "
        "not your code: the worker died): rerun grade autograde to regrade it" in lines
    )
    assert "missing: mlp: alan: in the roster, no score file" in lines
    assert {
        "missing: attention: mallory: in the roster, no score file",
        "missing: mlp: mallory: in the roster, no score file",
    } <= set(lines)
    assert (
        "missing: attention: zoe: in the roster, no score file" not in lines
    )  # listed once, as refused
    assert len([line for line in lines if line.startswith(("refused:", "missing:"))]) == 4
    assert result.stdout.strip().endswith(": 3 students (csv)")


def test_allow_missing_exits_0_and_still_lists_them(course):
    result, out = export(course, "canvas", "--allow-missing")
    assert result.exit_code == 0, result.output
    assert "missing: mlp: alan: in the roster, no score file" in result.stderr
    assert "refused: attention: zoe (zoe.json)" in result.stderr


def test_without_a_roster_a_student_of_another_folder_is_missing(course):
    result, out = export(course, "csv", roster=False)
    assert result.exit_code == 1
    assert read(out)[1:] == [
        ["ada", "8.50", "5.00"],
        ["alan", "10.00", ""],
        ["zoe", "", "2.25"],
    ]  # by id
    assert (
        "missing: mlp: alan: no score file (another assignment has one)"
        in result.stderr.splitlines()
    )
    assert "zoe" not in "".join(
        line for line in result.stderr.splitlines() if line.startswith("missing")
    )


def test_each_column_is_checked_with_its_own_assignments_fingerprint(course):
    attention_sha = load_course(course / "course.json", "attention").sha256
    write_scores(course, "mlp", {"zoe": score_doc("mlp", "zoe", {"mlp": 2.25}, attention_sha)})
    result, out = export(course, "csv")
    assert (
        "refused: mlp: zoe (zoe.json): graded with another version of the course" in result.stderr
    )
    assert read(out)[1:] == [
        ["ada", "8.50", "5.00"],
        ["alan", "10.00", ""],
    ]  # zoe now has no cell at all


def test_a_hand_edited_score_in_one_column_is_refused_there_only(course):
    path = course / "scores" / "mlp" / "ada.json"
    doc = json.loads(path.read_text())
    path.write_text(json.dumps({**doc, "score": 4}))
    result, out = export(course, "csv")
    assert "refused: mlp: ada (ada.json): its signature does not match its content" in result.stderr
    assert read(out)[2] == ["ada", "8.50", ""]


@pytest.mark.parametrize("fmt", ["lti", "gradescope"])
def test_formats_of_one_assignment_refuse_several_folders(course, fmt):
    result, out = export(course, fmt)
    assert result.exit_code == 2
    assert (
        result.stderr
        == f"Error: --format {fmt}: one assignment per file: export each score folder on its own "
        "(canvas, moodle, blackboard and csv take several, a column each)\n"
    )
    assert not out.exists()


@pytest.mark.parametrize(
    "flag",
    [["--assignment", "mlp"], ["--canvas-assignment-id", "9"], ["--blackboard-column-id", "_9_1"]],
)
def test_a_flag_that_names_one_assignment_is_refused_with_several_folders(course, flag):
    result, out = export(course, "canvas", *flag)
    assert result.exit_code == 2 and result.stderr.startswith(
        f"Error: {flag[0]}: not with several score folders"
    )
    assert len(result.stderr.splitlines()) == 1 and not out.exists()


def test_two_folders_of_one_assignment_are_refused(course):
    args = [
        "export",
        course / "scores" / "mlp",
        course / "scores" / "mlp",
        "--format",
        "csv",
        "--course",
        course / "course.json",
        "--out",
        course / "g.csv",
    ]
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert (
        result.exit_code == 2
        and "field 'assignment': 'mlp' is also the assignment of" in result.stderr
    )
    assert not (course / "g.csv").exists()


def test_an_assignment_without_its_lms_id_is_named(course):
    write_course(course, lms={})  # no ids in course.json
    result, out = export(course, "blackboard")
    assert result.exit_code == 2
    assert (
        result.stderr
        == "Error: course.json: field 'lms.blackboard_column_id' of assignment 'attention': "
        "needed for blackboard (or pass --blackboard-column-id; it is after '|' in a "
        "downloaded file's header)\n"
    )
    assert not out.exists()


def test_a_folder_of_an_assignment_course_json_lacks_is_named(course):
    write_scores(
        course,
        "extra",
        {"ada": {**score_doc("mlp", "ada", {"mlp": 5}, "b" * 64), "assignment": "rnn"}},
    )
    args = [
        "export",
        course / "scores" / "mlp",
        course / "scores" / "extra",
        "--format",
        "csv",
        "--course",
        course / "course.json",
        "--out",
        course / "g.csv",
    ]
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exit_code == 2 and "no assignment named 'rnn'" in result.stderr
    assert not (course / "g.csv").exists()


def test_one_folder_is_exported_as_the_assignment_its_files_name(course):
    """In a course of several assignments one folder needs no --assignment: its files say which."""
    out = course / "mlp.csv"
    result = CliRunner().invoke(
        main,
        [
            str(a)
            for a in [
                "export",
                course / "scores" / "mlp",
                "--format",
                "csv",
                "--out",
                out,
                "--course",
                course / "course.json",
                "--allow-missing",
            ]
        ],
    )
    assert result.exit_code == 0, result.output
    assert sorted(row[0] for row in read(out)[1:]) == ["ada", "zoe"]  # mlp's two score files


@pytest.mark.parametrize("stale", [[], ["--allow-stale"]])
def test_another_assignments_scores_are_never_exported_under_this_one(course, stale):
    """`-a attention` on mlp's folder: a one-line error naming both, whatever --allow-stale says (it
    would put mlp's scores in attention's LMS column)."""
    out = course / "x.csv"
    result = CliRunner().invoke(
        main,
        [
            str(a)
            for a in [
                "export",
                course / "scores" / "mlp",
                "--format",
                "canvas",
                "--roster",
                course / "roster.csv",
                "--out",
                out,
                "--course",
                course / "course.json",
                "-a",
                "attention",
                *stale,
            ]
        ],
    )
    assert (
        result.exit_code == 2 and "its score files are 'mlp''s, not 'attention''s" in result.output
    )
    assert not out.exists()
