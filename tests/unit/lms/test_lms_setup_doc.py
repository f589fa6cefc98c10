"""docs/lms-setup.md, as written: its script turns a Canvas gradebook export (the header Canvas's
gradebook_exporter writes, its "Points Possible" row, a BOM) into a roster.csv that the grader reads
and that places a Canvas download's files (`grade collect canvas`); the commands and settings it
names exist."""

from __future__ import annotations

import re
import subprocess
import sys
import zipfile

from conftest import PROJECT, grade

from grader.lms.roster import load

DOC = PROJECT / "docs" / "lms-setup.md"
EXPORT = (
    "\ufeffStudent,ID,SIS User ID,SIS Login ID,Section,The block (48213),Current Score\n"
    "    Points Possible,,,,,100.00,(read only)\n"
    '"Lovelace, Ada",101,0012345,alovelace,ML 101 - 001,,\n'
    '"Turing, Al",102,0012346,aturing,ML 101 - 001,87.50,87.5\n'
    "Test Student,999,,,ML 101 - 001,,\n"
)


def test_the_roster_script_turns_a_gradebook_export_into_a_roster_collect_can_place(tmp_path):
    text = DOC.read_text(encoding="utf-8")
    script = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    (tmp_path / "roster_from_canvas.py").write_text(script)
    (tmp_path / "gradebook.csv").write_text(EXPORT, encoding="utf-8")
    # timeout: a backstop against a hang, not a measurement
    done = subprocess.run(
        [sys.executable, "roster_from_canvas.py", "gradebook.csv", "roster.csv"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    roster = load(tmp_path / "roster.csv", (("lms_id",),), "canvas")
    assert list(roster) == ["alovelace", "aturing", "999"]  # Points Possible: no student
    assert roster["aturing"].lms_id == "102" and roster["alovelace"].name == "Lovelace, Ada"
    with zipfile.ZipFile(tmp_path / "download.zip", "w") as zf:
        zf.writestr("lovelaceada_101_555_gelu.py", "def gelu(x):\n    return x\n")
        zf.writestr("turingal_LATE_102_556_gelu.py", "def gelu(x):\n    return x\n")
    code, output = grade(
        "collect",
        "canvas",
        tmp_path / "download.zip",
        "--roster",
        tmp_path / "roster.csv",
        "--out",
        tmp_path / "subs",
    )
    assert code == 0, output
    assert sorted(p.name for p in (tmp_path / "subs").iterdir()) == [
        ".grade-collected.json",
        "alovelace.py",
        "aturing.py",
    ]


def test_what_the_page_names_exists():
    text = DOC.read_text(encoding="utf-8")
    for command in ("collect canvas", "push canvas", "push lti", "export"):
        assert f"grade {command}" in text
    for variable in (
        "GRADE_CANVAS_URL",
        "GRADE_CANVAS_TOKEN",
        "GRADE_LTI_CLIENT_ID",
        "GRADE_LTI_TOKEN_URL",
        "GRADE_LTI_KEY_FILE",
    ):
        assert (
            variable in text
            and variable in (PROJECT / "grader" / "lms" / "credentials.py").read_text()
        )
    assert "https://purl.imsglobal.org/spec/lti-ags/scope/score" in text
    assert "canvas_assignment_id" in text and "--course-id" in text and "--lineitem" in text
