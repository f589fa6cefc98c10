"""The instructor's overrides (course.json ``overrides``: extensions and adjustments) and a missing
submission time: read with one-line errors, applied at scoring (adjustments within bounds, then
lateness against the student's own due date), recorded and signed in the score file, re-applied to
kept score files without regrading, and checked by `grade export`, which refuses a file the
overrides file no longer matches."""

from __future__ import annotations

import csv
import io
import json
from datetime import datetime, timezone

import nbformat
import pytest
from test_cli import grade
from test_export import PROBLEMS, score_doc, write_course

from grader.commands.export import Trust, refusal
from grader.course import overrides
from grader.course.manifest import load as load_course
from grader.grading.signature import load_key, sign, verify
from grader.report import validate
from grader.scoring import finish

HEADER = "student,kind,problem,points,due,reason,by\n"
FULL = {"layernorm": 20, "gelu": 15, "attention": 25, "block": 10, "params": 15}  # 85 of 100


def read(tmp_path, text: str, due=datetime(2026, 5, 1, 23, 59, tzinfo=timezone.utc)):
    path = tmp_path / "overrides.csv"
    path.write_text(text, encoding="utf-8")
    return overrides.load(path, PROBLEMS, due)


def test_rows_are_read_per_student_in_file_order(tmp_path):
    table = read(
        tmp_path,
        "\ufeff" + HEADER + "ada,adjust,block,+5,,regraded by hand,ta\n"
        "ada,extension,,,2026-05-04T23:59:00+01:00,medical,prof\n"
        "ada,bonus,params,2.5,,elegant,prof\n\n"
        "alan,adjust,gelu,-3,,copied cell,prof\n",
    )
    assert [(a.problem, a.kind, a.points, a.line) for a in table["ada"].adjustments] == [
        ("block", "adjust", 5.0, 2),
        ("params", "bonus", 2.5, 4),
    ]
    assert table["ada"].extension.due.isoformat() == "2026-05-04T23:59:00+01:00"
    assert table["alan"].extension is None and table["alan"].adjustments[0].points == -3
    # only the columns the rows use are needed
    assert read(tmp_path, "student,kind,due,reason,by\nada,extension,2026-05-04T00:00Z,x,y\n")[
        "ada"
    ].extension


@pytest.mark.parametrize(
    "rows, message",
    [
        ("ada,adjust,blok,5,,x,y\n", "line 2: field 'problem': no problem named 'blok'"),
        ("ada,adjust,block,five,,x,y\n", "line 2: field 'points': must be a number"),
        ("ada,adjust,block,0,,x,y\n", "line 2: field 'points'"),
        ("ada,bonus,block,-1,,x,y\n", "line 2: field 'points'"),
        ("ada,adjust,block,nan,,x,y\n", "line 2: field 'points'"),
        (
            "ada,bonus,block,1e300,,x,y\n",
            "line 2: field 'points': a bonus of at most the problem's own points",
        ),
        ("ada,adjust,block,5,,,y\n", "line 2: field 'reason': empty"),
        ("ada,adjust,block,5,,x,\n", "line 2: field 'by': empty"),
        (
            "ada,regrade,block,5,,x,y\n",
            "line 2: field 'kind': 'regrade' is not one of extension, adjust, bonus",
        ),
        ("ada,extension,,,tomorrow,x,y\n", "line 2: field 'due': not an ISO 8601"),
        (
            "ada,extension,,,2026-05-04T23:59:00,x,y\n",
            "line 2: field 'due': not an ISO 8601",
        ),  # no zone
        (
            "ada,extension,block,,2026-05-04T23:59:00Z,x,y\n",
            "line 2: field 'problem': must be empty for extension",
        ),
        (
            "ada,adjust,block,5,2026-05-04T23:59:00Z,x,y\n",
            "line 2: field 'due': must be empty for adjust",
        ),
        (
            "ada,extension,,,2026-05-04T23:59Z,x,y\nada,extension,,,2026-05-05T23:59Z,x,y\n",
            "line 3: field 'student': 'ada' already has an extension on line 2",
        ),
        (",adjust,block,5,,x,y\n", "line 2: field 'student': empty"),
        ("ada,adjust,block,5,,x\n", "line 2: 6 fields, the header has 7"),
    ],
)
def test_a_bad_row_is_one_line_naming_the_file_line_and_field(tmp_path, rows, message):
    with pytest.raises(Exception) as err:
        read(tmp_path, HEADER + rows)
    assert str(tmp_path / "overrides.csv") in str(err.value) and message in str(err.value)
    assert "\n" not in str(err.value)


def test_a_bad_header_and_an_extension_without_a_due_date_are_named(tmp_path):
    for text, message in [
        ("student,kind,reason\n", "line 1: field 'by': column missing"),
        ("student,kind,reason,by,note\n", "line 1: field 'note': unknown column"),
        ("student,kind,reason,by\nada,adjust,x,y\n", "line 2: field 'problem': column missing"),
    ]:
        with pytest.raises(Exception, match=message):
            read(tmp_path, text)
    with pytest.raises(
        Exception, match="line 2: field 'due': an extension, but course.json gives no 'due'"
    ):
        read(tmp_path, HEADER + "ada,extension,,,2026-05-04T23:59Z,x,y\n", due=None)


def test_course_json_names_the_file_outside_its_fingerprint(tmp_path):
    plain = write_course(tmp_path / "a")
    (tmp_path / "b" / "private").mkdir(parents=True)
    (tmp_path / "b" / "private" / "o.csv").write_text(HEADER)
    named = write_course(tmp_path / "b", overrides="private/o.csv")
    assert named.overrides == tmp_path / "b" / "private" / "o.csv"
    assert named.sha256 == plain.sha256  # where the overrides live is no part of the grading
    with pytest.raises(Exception, match=r"field 'overrides': file nowhere.csv does not exist"):
        write_course(tmp_path / "c", overrides="nowhere.csv")
    with pytest.raises(
        Exception, match=r"field 'missing_timestamp': must be one of on_time, late, refuse"
    ):
        write_course(tmp_path / "d", due="2026-05-01T23:59:00Z", missing_timestamp="ignore")
    with pytest.raises(Exception, match=r"field 'missing_timestamp': needs a 'due'"):
        write_course(tmp_path / "e", missing_timestamp="late")
    assert write_course(tmp_path / "f", due="2026-05-01T23:59:00Z").missing_timestamp == "refuse"


@pytest.fixture
def late_course(tmp_path):
    return write_course(
        tmp_path,
        due="2026-05-01T23:59:00+00:00",
        late_policy={"percent_per_day": 10, "max_percent": 50},
    )


def by_problem(doc):
    return {p["name"]: p["score"] for p in doc["problems"]}


def test_adjustments_stay_within_bounds_unless_a_bonus_then_lateness_from_the_extension(
    tmp_path, late_course
):
    table = read(
        tmp_path,
        HEADER + "ada,adjust,block,+20,,regraded by hand,ta\n"  # 10 + 20: capped at 25
        "ada,adjust,gelu,-20,,copied,prof\n"  # 15 - 20: floored at 0
        "ada,bonus,params,3,,elegant,prof\n"  # 15 + 3: above its 15
        "ada,extension,,,2026-05-03T12:00:00+00:00,medical,prof\n",
    )
    doc = score_doc("ada", FULL)
    two_days_late = datetime(2026, 5, 3, 10, 0, tzinfo=timezone.utc)
    done = finish(doc, late_course, table["ada"], two_days_late)
    validate(done)
    assert by_problem(done) == {
        "layernorm": 20,
        "gelu": 0,
        "attention": 25,
        "block": 25,
        "params": 18,
    }
    assert [(a["points"], a["applied"]) for a in done["adjustments"]] == [
        (20, 15),
        (-20, -15),
        (3, 3),
    ]
    assert done["adjustments"][0] == {
        "problem": "block",
        "kind": "adjust",
        "points": 20,
        "applied": 15,
        "reason": "regraded by hand",
        "by": "ta",
    }
    assert (
        done["late"]["raw_score"] == 88 == sum(by_problem(done).values())
    )  # the sum of the problems
    assert done["late"]["days_late"] == 0 and done["score"] == 88  # on time for ada's date
    assert done["late"]["due"].startswith("2026-05-03T12:00") and done["late"]["extension"] == {
        "course_due": "2026-05-01T23:59:00.000+00:00",
        "reason": "medical",
        "by": "prof",
    }
    assert finish(done, late_course, table["ada"], two_days_late) == done  # idempotent
    # without the extension the same time is 2 started days late: 20 % of 100 off the adjusted sum
    plain = finish(
        doc,
        late_course,
        overrides.StudentOverrides(adjustments=table["ada"].adjustments),
        two_days_late,
    )
    assert plain["late"]["days_late"] == 2 and plain["score"] == 68
    # removing the overrides gives back what the tests scored
    assert finish(done, late_course, None, None) == {k: v for k, v in doc.items()}


@pytest.mark.parametrize("counted_as, penalty", [("on_time", 0), ("late", 50), ("refuse", 0)])
def test_a_missing_timestamp_counts_as_course_json_says_and_is_flagged(
    tmp_path, counted_as, penalty
):
    course = write_course(
        tmp_path,
        due="2026-05-01T23:59:00+00:00",
        missing_timestamp=counted_as,
        late_policy={"percent_per_day": 10, "max_percent": 50},
    )
    for flag in ("missing", "unreadable"):
        done = finish(score_doc("ada", FULL), course, None, flag)
        validate(done)
        assert done["late"]["timestamp"] == flag and done["late"]["counted_as"] == counted_as
        assert done["late"]["penalty"] == penalty and done["score"] == 85 - penalty
        assert "submitted_at" not in done["late"]
    # a folder or a zip: no time read, the LMS's counts; nothing recorded
    assert "late" not in finish(score_doc("ada", FULL), course, None, None)


def trust_of(course, table=None):
    return Trust(
        load_key(course.path, create=True),
        course.sha256,
        score_doc("x", FULL)["grader_version"],
        overrides=table or {},
        overrides_file=course.overrides,
    )


def test_export_refuses_a_refused_missing_time_and_a_file_the_overrides_no_longer_match(
    tmp_path, late_course
):
    key = load_key(late_course.path, create=True)
    trust = trust_of(late_course)
    refused = sign(
        finish(score_doc("ada", FULL, late_course.sha256), late_course, None, "missing"), key
    )
    assert "no submission time (timestamp.txt missing)" in refusal(refused, trust)
    table = read(tmp_path, HEADER + "ada,adjust,block,+5,,regraded by hand,ta\n")
    adjusted = sign(
        finish(score_doc("ada", FULL, late_course.sha256), late_course, table["ada"], None), key
    )
    assert refusal(adjusted, trust_of(late_course, table)) is None
    assert "are not those of" in refusal(
        adjusted, trust_of(late_course)
    )  # the row was deleted since
    changed = read(tmp_path, HEADER + "ada,adjust,block,+6,,regraded by hand,ta\n")
    assert "rerun grade autograde" in refusal(adjusted, trust_of(late_course, changed))
    assert (
        refusal(adjusted, Trust(trust.key, trust.course_sha256, trust.grader_version, True, {}))
        is None
    )


def notebook(student_dir, stamp):
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(s)
        for s in ("def double(x):\n    return 2 * x", "def twice(n):\n    return n")
    ]  # twice is wrong
    student_dir.mkdir(parents=True)
    nbformat.write(nb, student_dir / "ps1.ipynb")
    if stamp:
        (student_dir / "timestamp.txt").write_text(stamp + "\n")


def test_autograde_applies_overrides_and_rescores_kept_files_without_regrading(
    mini_course, tmp_path
):
    data = json.loads(mini_course.read_text())
    data.update(
        assignment="ps1",
        due="2026-03-01T23:59:00+00:00",
        late_policy={"percent_per_day": 25},
        missing_timestamp="late",
        overrides="overrides.csv",
    )
    mini_course.write_text(json.dumps(data))
    table = mini_course.parent / "overrides.csv"
    table.write_text(HEADER + "bob,adjust,mathy,+0.5,,twice checked by hand,ta\n")
    nb = tmp_path / "nbgrader"
    notebook(nb / "submitted" / "alice" / "ps1", "2026-03-02 10:00:00 UTC")  # 1 started day late
    notebook(nb / "submitted" / "bob" / "ps1", None)  # no timestamp.txt
    out = tmp_path / "out"
    run = ["autograde", "--nbgrader", nb, "--out", out, "--course", mini_course]
    first = grade(*run)
    assert first.exit_code == 0, first.output
    alice, bob = (json.loads((out / f"{s}.json").read_text()) for s in ("alice", "bob"))
    assert alice["late"]["days_late"] == 1 and alice["score"] == 2  # 3 of 4, 25 % of 4 off
    assert bob["late"] == {
        "timestamp": "missing",
        "counted_as": "late",
        "due": "2026-03-01T23:59:00.000+00:00",
        "percent": 100.0,
        "penalty": 3.5,
        "raw_score": 3.5,
    }  # the policy's most: all of it
    assert bob["adjustments"][0]["applied"] == 0.5 and bob["problems"][0]["score"] == 3.5
    assert (
        "no timestamp.txt" in " ".join(bob["submission_notes"])
        and "no timestamp: late" in first.output
    )

    table.write_text(
        HEADER + "alice,extension,,,2026-03-03T00:00:00+00:00,ill,prof\n"
        "bob,adjust,mathy,+1,,twice checked by hand,ta\n"
    )
    export = [
        "export",
        out,
        "--format",
        "csv",
        "--out",
        tmp_path / "g.csv",
        "--course",
        mini_course,
    ]
    stale = grade(*export)
    assert stale.exit_code == 1 and stale.output.count("are not those of") == 2, stale.output
    second = grade(*run)
    assert second.exit_code == 0, second.output
    assert "2 re-scored for overrides or lateness, not regraded" in second.output
    assert "graded alice" not in second.output and "graded bob" not in second.output  # no code ran
    alice2, bob2 = (json.loads((out / f"{s}.json").read_text()) for s in ("alice", "bob"))
    assert alice2["graded_at"] == alice["graded_at"] and alice2["tests"] == alice["tests"]
    assert alice2["score"] == 3 and alice2["late"]["extension"]["reason"] == "ill"
    assert bob2["problems"][0]["score"] == 4 and bob2["late"]["penalty"] == 4
    assert verify(alice2, load_key(mini_course)) and verify(bob2, load_key(mini_course))
    fresh = grade(*export)
    assert fresh.exit_code == 0, fresh.output
    rows = {
        r["student"]: r
        for r in csv.DictReader(io.StringIO((tmp_path / "g.csv").read_text("utf-8-sig")))
    }
    assert "mathy +1 (adjust): twice checked by hand [ta]" in rows["bob"]["notes"]
    assert "extension to 2026-03-03T00:00:00.000+00:00" in rows["alice"]["notes"]
    assert "timestamp.txt missing: counted as late" in rows["bob"]["notes"]
    third = grade(*run)  # nothing changed now
    assert "re-scored" not in third.output and "2 submissions unchanged" in third.output


def test_autograde_names_an_overrides_row_for_nobody_and_stops_on_a_bad_row(
    mini_course, submission, tmp_path
):
    data = json.loads(mini_course.read_text())
    mini_course.write_text(json.dumps({**data, "overrides": "o.csv"}))
    (mini_course.parent / "o.csv").write_text(HEADER + "adaa,adjust,mathy,1,,typo in the id,ta\n")
    folder = submission({"mathy.py": "def double(x):\n    return 2 * x\n"}, name="ada")
    result = grade("autograde", folder.parent, "--out", tmp_path / "out", "--course", mini_course)
    assert "overrides for 'adaa', who has no submission here" in result.output
    mini_course.write_text(
        json.dumps(
            {
                **data,
                "overrides": "o.csv",
                "due": "2026-05-01T23:59:00Z",
                "late_policy": {"percent_per_day": 10, "max_percent": 50},
            }
        )
    )
    (mini_course.parent / "o.csv").write_text(
        HEADER + "ada,extension,,,2026-05-09T23:59Z,medical,prof\n"
    )
    result = grade("autograde", folder.parent, "--out", tmp_path / "out", "--course", mini_course)
    assert (
        "an extension for 'ada', whose submission (a folder, zip or file) carries no submission "
        "time" in result.output
    ), result.output  # a folder's lateness is the LMS's: never silently nothing
    (mini_course.parent / "o.csv").write_text(HEADER + "ada,adjust,mathy,lots,,x,ta\n")
    bad = grade("autograde", folder.parent, "--out", tmp_path / "out2", "--course", mini_course)
    assert (
        bad.exit_code == 2
        and "o.csv: line 2: field 'points'" in bad.output
        and "Traceback" not in bad.output
    )
    assert not (tmp_path / "out2").exists()


def test_the_walkthroughs_late_work_and_overrides_are_real(tmp_path):
    """The instructors' walkthrough (docs/instructors.md, the term): the shipped course.json makes
    its nbgrader submission late (10 points), and the overrides rows it appends are valid for
    the-block and name its example students."""
    import re
    import shutil
    import subprocess

    from conftest import EXAMPLES, PROJECT, THE_BLOCK

    from grader.course.late import assess, parse_timestamp

    walkthrough = (PROJECT / "docs" / "instructors.md").read_text(encoding="utf-8")
    course = load_course(PROJECT / "course.json", THE_BLOCK)
    stamp = re.search(
        r'echo "([^"]+)" > nbgrader_course/submitted/grace_partial', walkthrough
    ).group(1)
    late = assess(parse_timestamp(stamp), course.due, course.late_policy, course.max_score)
    assert late["days_late"] == 1 and late["penalty"] == 10  # "lost 10 points", as it says
    # The rows its `grade override add` commands append to the file course.json names, written as
    # that command writes them (grader.commands.override): what the file holds now is the user's
    # (its rows added once, or more), not this test's. The repository ships a header alone, read
    # as committed where this is a git checkout.
    import shlex

    commands = [
        shlex.split(line.strip())[3:]
        for line in walkthrough.splitlines()
        if line.strip().startswith(".venv/bin/grade override add ")
    ]
    assert len(commands) == 2, commands
    relative = course.overrides.relative_to(PROJECT).as_posix()
    if shutil.which("git"):
        committed = subprocess.run(
            ["git", "show", f"HEAD:{relative}"], cwd=PROJECT, capture_output=True, text=True
        )
        if committed.returncode == 0:  # (not a git checkout: not checked)
            assert committed.stdout == HEADER  # the release's state: no overrides
    lines = []
    for args in commands:
        student, options = args[0], dict(zip(args[1::2], args[2::2]))
        assert options.pop("-a") == THE_BLOCK
        row = {
            "student": student,
            "kind": options.get("--kind", "adjust"),
            "problem": options.get("--problem", ""),
            "points": options.get("--points", ""),
            "due": options.get("--due", ""),
            "reason": options["--reason"],
            "by": options["--by"],
        }
        buffer = io.StringIO()
        csv.writer(buffer, lineterminator="\n").writerow([row[c] for c in overrides.COLUMNS])
        lines.append(buffer.getvalue())
    appended = "".join(lines)
    table = read(tmp_path, HEADER + appended, due=course.due)
    assert set(table) == {"grace_partial", "edsger_post_ln"} and all(
        (EXAMPLES / s).is_dir() for s in table
    )
    assert table["grace_partial"].extension.due > parse_timestamp(
        stamp
    )  # the extension makes it on time


def test_export_push_and_report_check_against_the_overrides_as_they_are_now(tmp_path):
    # one Trust for all three (grader.commands.export.trust_of): a file the CSV no longer matches is
    # refused by each
    from grader.commands import export

    (tmp_path / "overrides.csv").write_text(
        HEADER + "ada,adjust,block,+5,,regraded by hand,ta\n", encoding="utf-8"
    )
    course = write_course(tmp_path, due="2026-05-01T23:59:00+00:00", overrides="overrides.csv")
    key = load_key(course.path, create=True)
    stale = sign(
        finish(score_doc("ada", FULL, course.sha256), course, None, None), key
    )  # graded before the row
    trust = export.trust_of(course, key)
    assert trust.overrides_file == course.overrides and "ada" in trust.overrides
    assert "are not those of" in refusal(stale, trust)
