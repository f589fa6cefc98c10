"""`grade collect`: LMS downloads built here from each LMS's documented naming scheme (Canvas's
ContentZipper, Moodle's download_submissions, Blackboard's attempt files, Gradescope's export with
submission_metadata.yml, a GitHub Classroom clone folder) turned into one entry per roster student,
then graded by `grade autograde`, whose late policy uses the LMS's submission time where the
download has one."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest
from conftest import EXAMPLES, MODULES, PROJECT, THE_BLOCK, course_copy, grade

ROSTER = PROJECT / "examples" / "roster.csv"


def _zip_folder(folder: Path, out: Path, prefix: str = "") -> Path:
    with zipfile.ZipFile(out, "w") as zf:
        for path in sorted(folder.rglob("*.py")):
            zf.write(path, prefix + path.relative_to(folder).as_posix())
    return out


def _zip_files(files: dict[str, Path | bytes], out: Path) -> Path:
    with zipfile.ZipFile(out, "w") as zf:
        for name, data in files.items():
            zf.writestr(name, data if isinstance(data, bytes) else data.read_bytes())
    return out


def _scores(folder: Path) -> dict[str, dict]:
    return {p.stem: json.loads(p.read_text()) for p in folder.glob("*.json")}


def _autograde(subs: Path, out: Path) -> dict[str, dict]:
    code, output = grade(
        "autograde", "--course", course_copy(), "-a", THE_BLOCK, subs, "--out", out, "-j", 2
    )
    assert code == 0, output
    return _scores(out)


@pytest.fixture(scope="module")
def folder_scores(tmp_path_factory) -> dict[str, dict]:
    """The examples graded from their own folders: what a collected entry must score."""
    return _autograde(EXAMPLES, tmp_path_factory.mktemp("folders"))


def _points(doc: dict) -> dict:
    return {p["name"]: p["score"] for p in doc["problems"]}


def test_canvas_download_one_entry_per_person_named_by_the_roster(tmp_path, folder_scores):
    """The issue's case: Ada's zip, Alan's five files (one re-uploaded: layernorm-1.py), Linus LATE,
    an anonymous file and a stray file: 3 students, not 7, each under the roster's id; 2 lines not
    placed."""
    alan = {
        f"turingal_102_55512{i}_{m}.py": EXAMPLES / "alan_ddof1" / f"{m}.py"
        for i, m in enumerate(MODULES)
    }
    alan["turingal_102_555199_layernorm-1.py"] = alan.pop("turingal_102_555120_layernorm.py")
    files = {
        "lovelaceada_101_5551234_hand-in.zip": _zip_folder(
            EXAMPLES / "ada_correct", tmp_path / "ada.zip", "hand-in/"
        ).read_bytes(),
        **alan,
        **{
            f"torvaldslinus_LATE_107_66612{i}_{m}.py": EXAMPLES / "linus_no_mask" / f"{m}.py"
            for i, m in enumerate(MODULES)
        },
        # Canvas user 999 is no lms_id of the roster: placed by the sortable name's slug
        **{
            f"dijkstraedsger_999_7771{i}_{m}.py": EXAMPLES / "edsger_post_ln" / f"{m}.py"
            for i, m in enumerate(MODULES)
        },
        "anon_Xk9p2_5551299_gelu.py": b"def gelu(x):\n    return x\n",
        "readme.txt": b"not a submission\n",
    }
    download = _zip_files(files, tmp_path / "canvas.zip")
    code, output = grade(
        "collect", "canvas", download, "--roster", ROSTER, "--out", tmp_path / "subs"
    )
    assert code == 1, output  # something not placed: listed, the rest written
    assert "not placed: anon_Xk9p2_5551299_gelu.py: anonymous grading" in output
    assert "not placed: readme.txt: not a Canvas submission name" in output
    assert "no submission: grace_partial" in output
    subs = tmp_path / "subs"
    assert sorted(p.name for p in subs.iterdir()) == [
        ".grade-collected.json",
        "ada_correct.zip",
        "alan_ddof1",
        "edsger_post_ln",
        "linus_no_mask",
    ]
    assert sorted(p.name for p in (subs / "alan_ddof1").iterdir()) == sorted(
        f"{m}.py" for m in MODULES
    )
    record = json.loads((subs / ".grade-collected.json").read_text())
    assert record["lms"] == "canvas" and len(record["unplaced"]) == 2
    assert not any("submitted_at" in e for e in record["students"].values())  # Canvas gives no time
    scores = _autograde(subs, tmp_path / "scores")
    assert sorted(scores) == ["ada_correct", "alan_ddof1", "edsger_post_ln", "linus_no_mask"]
    for student, doc in scores.items():
        assert _points(doc) == _points(folder_scores[student]), student
        assert "late" not in doc  # Canvas's own late policy applies
    [late] = [
        n for n in scores["linus_no_mask"]["submission_notes"] if "Canvas marked it LATE" in n
    ]
    assert "--" not in late  # a note goes to the student: no instructor's option in it
    assert "push with --late-by-lms" in output  # said to the instructor instead
    assert any(
        "layernorm-1.py renamed layernorm.py" in n for n in scores["alan_ddof1"]["submission_notes"]
    )


def test_moodle_download_placed_by_full_name_blind_and_ambiguous_ones_listed(tmp_path):
    root = tmp_path / "moodle"
    ada = root / "Ada Lovelace_12345_assignsubmission_file"  # Moodle >= 3.1: a folder each
    shutil.copytree(EXAMPLES / "ada_correct", ada / "my work")
    alan = root / "Al Turing_12346_assignsubmission_file_"  # older: a trailing _
    shutil.copytree(EXAMPLES / "alan_ddof1", alan)
    (root / "Al Turing_12346_assignsubmission_onlinetext_").mkdir()
    (root / "Al Turing_12346_assignsubmission_onlinetext_" / "onlinetext.html").write_text(
        "<p>done</p>"
    )
    # flat, "download as folders" off
    (root / "Grace Hopper_12350_assignsubmission_file_gelu.py").write_bytes(
        (EXAMPLES / "grace_partial" / "gelu.py").read_bytes()
    )
    (root / "Participant_12360_assignsubmission_file").mkdir()
    (root / "Participant_12360_assignsubmission_file" / "gelu.py").write_text("x = 1\n")
    (root / "Nobody Known_12370_assignsubmission_file").mkdir()
    (root / "Nobody Known_12370_assignsubmission_file" / "gelu.py").write_text("x = 1\n")
    code, output = grade("collect", "moodle", root, "--roster", ROSTER, "--out", tmp_path / "subs")
    assert code == 1, output
    assert "Participant_12360_assignsubmission_file: blind marking" in output
    assert "Nobody Known (Moodle participant 12370): no roster row has this name" in output
    subs = tmp_path / "subs"
    assert sorted(p.name for p in subs.iterdir()) == [
        ".grade-collected.json",
        "ada_correct",
        "alan_ddof1",
        "grace_partial.py",
    ]
    assert (subs / "ada_correct" / "my work" / "layernorm.py").is_file()
    assert (subs / "alan_ddof1" / "onlinetext.html").is_file()

    # two roster rows with one name: neither is guessed
    twin = tmp_path / "twins.csv"
    twin.write_text(
        ROSTER.read_text() + "ada_two,201,0099999,alovelace2,ada2@example.edu,Ada Lovelace,X\n"
    )
    code, output = grade("collect", "moodle", root, "--roster", twin, "--out", tmp_path / "subs2")
    assert "Ada Lovelace (Moodle participant 12345): its name fits 2 roster rows" in output


def _blackboard(tmp_path: Path) -> Path:
    """Blackboard's Assignment File Download: per attempt a .txt and the files, the username after
    the assignment's name (which has an underscore of its own here)."""
    files: dict[str, Path | bytes] = {}

    def attempt(user: str, stamp: str, folder: Path) -> None:
        head = f"The_Block_{user}_attempt_{stamp}"
        files[f"{head}.txt"] = (
            f"Name: someone ({user})\nAssignment: The Block\nDate Submitted: ...\nFiles:\n"
        ).encode()
        for m in MODULES:
            files[f"{head}_{m}.py"] = folder / f"{m}.py"

    attempt("aturing", "2026-05-01-20-00-00", EXAMPLES / "ada_correct")  # an earlier attempt
    attempt("aturing", "2026-05-02-10-00-00", EXAMPLES / "alan_ddof1")  # the latest: a day late
    attempt("kjohnson", "2026-05-01-23-50-00", EXAMPLES / "kathy_erf_gelu")  # on time
    return _zip_files(files, tmp_path / "gradebook_The_Block.zip")


def test_blackboard_download_keeps_the_attempt_time_for_the_late_policy(tmp_path, folder_scores):
    download = _blackboard(tmp_path)
    code, output = grade(
        "collect",
        "blackboard",
        download,
        "--roster",
        ROSTER,
        "--out",
        tmp_path / "subs",
        "--timezone",
        "Europe/Lisbon",
    )
    assert code == 0, output
    assert "left out an earlier hand-in (attempt 2026-05-01-20-00-00)" in output
    record = json.loads((tmp_path / "subs" / ".grade-collected.json").read_text())
    assert record["students"]["alan_ddof1"]["submitted_at"] == "2026-05-02T10:00:00.000+01:00"
    scores = _autograde(tmp_path / "subs", tmp_path / "scores")
    assert _points(scores["alan_ddof1"]) == _points(
        folder_scores["alan_ddof1"]
    )  # the latest attempt
    late = scores["alan_ddof1"]["late"]
    assert (
        late["days_late"] == 1
        and late["penalty"] == 10
        and late["submitted_at"].startswith("2026-05-02T10")
    )
    assert scores["kathy_erf_gelu"]["late"]["days_late"] == 0
    # without --timezone the names' times have no zone: none is kept, and the summary says so
    code, output = grade(
        "collect", "blackboard", download, "--roster", ROSTER, "--out", tmp_path / "subs2"
    )
    assert (
        code == 0
        and "not kept: Blackboard's names give the time without its zone (pass --timezone)"
        in output
    )
    record = json.loads((tmp_path / "subs2" / ".grade-collected.json").read_text())
    assert not any("submitted_at" in e for e in record["students"].values())


GRADESCOPE_METADATA = """\
submission_101:
  :submitters:
  - :name: Ada Lovelace
    :sid: '0012345'
    :email: ADA@example.edu
  :created_at: 2026-05-01 14:58:10.123456000 -07:00
  :score: 0.0
  :status: processed
  :history: []
submission_102:
  :submitters:
  - :name: Grace Hopper
    :sid: '0012349'
    :email: grace@example.edu
  - :name: Linus Torvalds
    :sid: '0012351'
    :email: linus@example.edu
  :created_at: 2026-05-03 09:00:00.000000000 +00:00
  :history: []
submission_103:
  :submitters:
  - :name: Kathy Johnson
    :sid: '0012350'
    :email: kathy@other.example
  :history: []
submission_104:
  :submitters:
  - :name: Not Enrolled
    :sid: '9999999'
    :email: who@example.edu
  :created_at: 2026-05-01 10:00:00.000000000 +00:00
"""


def test_gradescope_export_keeps_created_at_and_gives_a_group_each_member(tmp_path):
    top = "assignment_4242_export/"
    files: dict[str, Path | bytes] = {top + "submission_metadata.yml": GRADESCOPE_METADATA.encode()}
    for sub, student in (
        ("submission_101", "ada_correct"),
        ("submission_102", "grace_partial"),
        ("submission_103", "kathy_erf_gelu"),
        ("submission_104", "ada_correct"),
    ):
        for m in MODULES:
            files[f"{top}{sub}/{m}.py"] = EXAMPLES / student / f"{m}.py"
    files[f"{top}submission_999/gelu.py"] = b"x = 1\n"
    download = _zip_files(files, tmp_path / "export.zip")
    code, output = grade(
        "collect", "gradescope", download, "--roster", ROSTER, "--out", tmp_path / "subs"
    )
    assert code == 1, output
    assert (
        "not placed: submission_104: Not Enrolled (Gradescope): no roster row has email" in output
    )
    assert "not placed: submission_999: a folder submission_metadata.yml does not name" in output
    record = json.loads((tmp_path / "subs" / ".grade-collected.json").read_text())["students"]
    assert set(record) == {
        "ada_correct",
        "grace_partial",
        "linus_no_mask",
        "kathy_erf_gelu",
    }  # kathy: by SID
    assert record["ada_correct"]["submitted_at"] == "2026-05-01T14:58:10.123-07:00"
    assert record["linus_no_mask"]["files"] == record["grace_partial"]["files"]  # the group's files
    assert record["kathy_erf_gelu"]["timestamp"] == "missing"
    scores = _autograde(tmp_path / "subs", tmp_path / "scores")
    assert scores["ada_correct"]["late"]["days_late"] == 0  # 22:58 in Lisbon, before the due date
    assert scores["grace_partial"]["late"]["days_late"] == 2  # 3 May 09:00 UTC
    assert any(
        "a group submission of Grace Hopper, Linus Torvalds" in n
        for n in scores["linus_no_mask"]["submission_notes"]
    )
    missing = scores["kathy_erf_gelu"]["late"]
    assert (
        missing["timestamp"] == "missing" and missing["counted_as"] == "refuse"
    )  # course.json's default


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_github_classroom_clones_grade_as_folders_and_collect_takes_the_commit_time(tmp_path):
    clones = tmp_path / "the-block-submissions"
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "s",
        "GIT_AUTHOR_EMAIL": "s@example.edu",
        "GIT_COMMITTER_NAME": "s",
        "GIT_COMMITTER_EMAIL": "s@example.edu",
        "GIT_COMMITTER_DATE": "2026-05-02T01:30:00+01:00",
        "GIT_AUTHOR_DATE": "2026-05-02T01:30:00+01:00",
        "GIT_CONFIG_GLOBAL": os.devnull,
    }
    for handle, example in (("aturing", "alan_ddof1"), ("kjohnson", "kathy_erf_gelu")):
        clone = clones / f"the-block-{handle}"
        shutil.copytree(EXAMPLES / example, clone)
        for args in (["init", "-q"], ["add", "."], ["commit", "-q", "-m", "hand in"]):
            subprocess.run(["git", *args], cwd=clone, env=env, check=True, capture_output=True)
    # as it is: each clone is a student folder named after the clone (its .git/ left out)
    scores = _autograde(clones, tmp_path / "as-folders")
    assert sorted(scores) == ["the-block-aturing", "the-block-kjohnson"]
    assert all("late" not in d for d in scores.values())
    code, output = grade(
        "collect", "github", clones, "--roster", ROSTER, "--out", tmp_path / "subs", "--commit-time"
    )
    assert code == 0, output
    assert not (tmp_path / "subs" / "alan_ddof1" / ".git").exists()
    scores = _autograde(tmp_path / "subs", tmp_path / "scores")
    assert sorted(scores) == ["alan_ddof1", "kathy_erf_gelu"]
    late = scores["alan_ddof1"]["late"]
    assert late["submitted_at"] == "2026-05-02T01:30:00.000+01:00" and late["days_late"] == 1


def test_bad_input_is_one_line_before_anything_is_written(tmp_path):
    (tmp_path / "subs").mkdir()
    (tmp_path / "subs" / "x").write_text("")
    code, output = grade(
        "collect", "canvas", tmp_path, "--roster", ROSTER, "--out", tmp_path / "subs"
    )
    assert code == 2 and "exists and is not an empty folder" in output
    code, output = grade(
        "collect",
        "blackboard",
        tmp_path,
        "--roster",
        ROSTER,
        "--out",
        tmp_path / "new",
        "--timezone",
        "Mars/Olympus",
    )
    assert code == 2 and "--timezone Mars/Olympus: not a time zone name" in output
    assert not (tmp_path / "new").exists()
