"""The `grade` commands on a tiny course: exit codes, score files, and a batch that never stops."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
from types import SimpleNamespace

import jsonschema
import pytest
from conftest import GOOD, write_tree

from grader.report import schema


# Every subprocess's `timeout=` here is a backstop against a hang, not a measurement: the slowest
# call takes 11 s on a quiet machine (`grade autograde --jobs 2` of a class), 27x under its 300 s.
def grade(*args, cwd=None):
    """Run `grade` in a fresh process, as a user would (the suites are imported by the grader)."""
    proc = subprocess.run(
        [sys.executable, "-m", "grader", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
    )
    return SimpleNamespace(exit_code=proc.returncode, output=proc.stdout + proc.stderr)


def test_check_passes_on_good_code_and_fails_on_stubs(mini_course, submission):
    good = submission(GOOD)
    ok = grade("check", "--course", mini_course, "--path", good)
    assert ok.exit_code == 0, ok.output
    assert "1/1" in ok.output
    stubs = grade("check", "--course", mini_course)  # default --path: the course's exercises/
    assert stubs.exit_code == 1
    assert "not implemented yet" in stubs.output


def test_check_json_is_a_valid_score_file(mini_course, submission, tmp_path):
    out = tmp_path / "me.json"
    result = grade("check", "--course", mini_course, "--path", submission(GOOD), "--json", out)
    assert result.exit_code == 0
    doc = json.loads(out.read_text())
    jsonschema.validate(doc, schema())
    assert doc["score"] == doc["max_score"] == 1  # public points only
    # A student's release has no key: `check` signs nothing and never makes one.
    assert doc["status"] == "graded" and "signature" not in doc
    assert not (mini_course.parent / ".grade-key").exists()


def test_check_unknown_problem_and_missing_folder_are_one_line_errors(mini_course, tmp_path):
    r = grade("check", "nope", "--course", mini_course)
    assert r.exit_code == 2 and "no problem named 'nope'" in r.output
    r = grade("check", "--course", mini_course, "--path", tmp_path / "missing")
    assert r.exit_code == 2 and "folder not found" in r.output
    r = grade("check", "--course", tmp_path / "none.json")
    assert r.exit_code == 2 and "none.json: not found" in r.output


BROKEN = {
    "good": GOOD,
    "syntax": {"mathy.py": "def double(x:\n"},
    "exits": {
        "mathy.py": "import os\ndef double(x):\n    os._exit(0)\ndef twice(n):\n    return 2 * n\n"
    },
    "hangs": {
        "mathy.py": "def double(x):\n    while True:\n        pass\ndef twice(n):\n    return 2 * "
        "n\n"
    },
    "liar": {
        "mathy.py": "class L:\n    def __eq__(s, o):\n        return True\n"
        "def double(x):\n    return L()\ndef twice(n):\n    return L()\n"
    },
    "leaky": {
        "mathy.py": "def double(x):\n    print('INPUT', x)\n    return x\ndef twice(n):\n    "
        "return 2 * n\n"
    },
}


@pytest.fixture
def batch(mini_course, submission):
    for name, files in BROKEN.items():
        folder = submission(files, name=name)
    return folder.parent


def test_autograde_scores_every_submission_and_keeps_going(mini_course, batch, tmp_path):
    out = tmp_path / "scores"
    result = grade("autograde", batch, "--out", out, "--course", mini_course, "--jobs", 1)
    assert result.exit_code == 0, result.output
    docs = {p.stem: json.loads(p.read_text()) for p in out.glob("*.json")}
    assert sorted(docs) == sorted(BROKEN)
    for doc in docs.values():
        jsonschema.validate(doc, schema())
        assert doc["max_score"] == 4  # from course.json, whatever ran
    scores = {name: doc["score"] for name, doc in docs.items()}
    assert scores == {"good": 4, "syntax": 0, "exits": 1, "hangs": 1, "liar": 0, "leaky": 1}
    by_test = {t["name"]: t for t in docs["hangs"]["tests"]}
    assert (
        "timed out after 2 s of CPU time in double" in by_test["test_double_secret"]["output"]
        or "time budget" in by_test["test_double_secret"]["output"]
    )
    assert by_test["test_double_small"]["status"] == "error"
    assert not list(out.glob(".*.tmp"))  # no half-written file left


def test_autograde_says_why_a_corrupt_zip_scores_zero(mini_course, submission, tmp_path):
    """The console's line for a submission that could not be read carries its score file's
    error."""
    folder = submission(GOOD, name="good").parent
    (folder / "corrupt.zip").write_bytes(b"PK\x03\x04 not really a zip")
    result = grade("autograde", folder, "--out", tmp_path / "scores", "--course", mini_course)
    assert result.exit_code == 0, result.output
    error = json.loads((tmp_path / "scores" / "corrupt.json").read_text())["error"]
    assert "not a readable zip" in error
    assert f"graded corrupt: 0/4: {error} (" in " ".join(result.output.split()), result.output


def test_hidden_test_output_hides_inputs_values_and_prints(mini_course, batch, tmp_path):
    out = tmp_path / "scores"
    grade("autograde", batch, "--out", out, "--course", mini_course, "--jobs", 1)
    leaky = json.loads((out / "leaky.json").read_text())
    hidden = [t for t in leaky["tests"] if t["visibility"] != "visible"]
    public = [t for t in leaky["tests"] if t["visibility"] == "visible"]
    assert hidden and all(
        "1234.5" not in t["output"] and "INPUT" not in t["output"] for t in hidden
    )
    assert any("INPUT" in t["output"] for t in public)  # public tests show what the code printed
    assert "values differ" in next(t for t in hidden if t["name"] == "test_double_secret")["output"]


# Writes the hidden input into the dims of an empty array (x[0] = 1234.5 becomes a dim of 12345), to
# read
# it back in the feedback; 31337 marks what its code chose.
SMUGGLER = {
    "mathy.py": "import numpy as np\n\ndef double(x):\n    return np.zeros((0, 31337, "
    "int(abs(x[0]) * 10)))\n\n"
    "def twice(n):\n    return 31337\n"
}


def test_hidden_test_output_shows_nothing_the_students_code_chose(
    mini_course, submission, tmp_path
):
    out = tmp_path / "scores"
    result = grade(
        "autograde",
        submission(SMUGGLER, name="smuggler").parent,
        "--out",
        out,
        "--course",
        mini_course,
        "--jobs",
        1,
    )
    assert result.exit_code == 0, result.output
    tests = {t["name"]: t for t in json.loads((out / "smuggler.json").read_text())["tests"]}
    hidden = tests["test_double_secret"]
    assert hidden["visibility"] != "visible" and hidden["status"] == "failed"
    assert hidden["output"] == "double of a hidden vector: wrong shape: expected (2,)"
    assert all(
        "31337" not in tests[name]["output"] for name in ("test_double_secret", "test_twice_secret")
    )
    public = tests["test_double_small"]
    assert (
        public["visibility"] == "visible"
        and "yours: shape (0, 31337, 0), float64" in public["output"]
    )


def test_autograde_in_parallel_gives_the_same_scores(mini_course, batch, tmp_path):
    one, two = tmp_path / "one", tmp_path / "two"
    grade("autograde", batch, "--out", one, "--course", mini_course, "--jobs", 1)
    result = grade("autograde", batch, "--out", two, "--course", mini_course, "--jobs", 2)
    assert result.exit_code == 0, result.output
    for path in one.glob("*.json"):
        a, b = json.loads(path.read_text()), json.loads((two / path.name).read_text())
        assert [t["score"] for t in a["tests"]] == [t["score"] for t in b["tests"]]
        assert a["submission_sha256"] == b["submission_sha256"]


def test_autograde_errors(mini_course, tmp_path):
    r = grade("autograde", tmp_path / "missing", "--out", tmp_path / "o", "--course", mini_course)
    assert r.exit_code == 2 and "submissions folder not found" in r.output
    (tmp_path / "empty").mkdir()
    r = grade("autograde", tmp_path / "empty", "--out", tmp_path / "o", "--course", mini_course)
    assert r.exit_code == 2 and "no student folders" in r.output


def test_points_that_disagree_with_course_json_stop_before_grading(mini_course, batch, tmp_path):
    data = json.loads(mini_course.read_text())
    data["problems"][0]["points"] = 5
    mini_course.write_text(json.dumps(data))
    r = grade("autograde", batch, "--out", tmp_path / "o", "--course", mini_course, "--jobs", 1)
    assert r.exit_code == 2 and "add up to 4, not 5" in r.output


def test_validate_and_schema(mini_course):
    r = grade("validate", "--course", mini_course)
    assert r.exit_code == 0, r.output
    assert "course is valid" in r.output
    printed = json.loads(grade("schema").output)
    assert printed == schema()
    jsonschema.Draft202012Validator.check_schema(printed)


def test_validate_fails_when_the_reference_is_wrong(mini_course):
    (mini_course.parent / "solutions" / "mathy.py").write_text(
        "def double(x):\n    return x\ndef twice(n):\n    return 2 * n\n"
    )
    r = grade("validate", "--course", mini_course)
    assert r.exit_code == 1 and "the reference scores" in r.output


def test_progress_lines_when_not_a_terminal_and_nothing_when_quiet(
    mini_course, submission, tmp_path
):
    for i in range(3):
        folder = submission(GOOD, name=f"p{i}")
    r = grade("autograde", folder.parent, "--out", tmp_path / "a", "--course", mini_course)
    assert r.exit_code == 0
    assert "[1/3] graded p" in r.output and "[3/3] graded p" in r.output
    q = grade(
        "autograde", folder.parent, "--out", tmp_path / "b", "--course", mini_course, "--quiet"
    )
    assert q.exit_code == 0 and q.output == ""
    assert len(list((tmp_path / "b").glob("*.json"))) == 3


def test_autograde_with_a_relative_output_folder(mini_course, submission, tmp_path):
    """`--out scores/` relative to where the command runs (as `make demo` does) grades like an
    absolute one."""
    folder = submission(GOOD, name="rel")
    r = grade("autograde", folder.parent, "--out", "scores", "--course", mini_course, cwd=tmp_path)
    assert r.exit_code == 0, r.output
    assert json.loads((tmp_path / "scores" / "rel.json").read_text())["score"] == 4


def test_ctrl_c_stops_a_big_batch_at_once(mini_course, tmp_path):
    """Interrupted with jobs still queued for the grader processes, `grade autograde` exits (it used
    to wait for ever to hand the rest of the queue to graders that were gone)."""
    subs = tmp_path / "many"
    for i in range(1500):  # more queued jobs than a pipe holds
        write_tree(subs / f"s{i:04d}", GOOD)
    # Ctrl-C as a terminal sends it. A shell's background job (`make test &`, nohup, some CI
    # runners) starts with SIGINT ignored, which its children inherit; Python then installs no
    # KeyboardInterrupt handler and the batch would run to its end: the grader gets SIGINT's
    # default disposition back, as in a terminal.
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "grader",
            "autograde",
            subs,
            "--out",
            tmp_path / "out",
            "--course",
            mini_course,
            "--jobs",
            "2",
            "--sandbox",
            "process",
            "--unsafe",
            "-q",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        deadline = time.monotonic() + 60  # quiet: 1.2 s to a first file; 50x margin
        while not list((tmp_path / "out").glob("*.json")) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert list((tmp_path / "out").glob("*.json")), "grading never started"
        os.killpg(proc.pid, signal.SIGINT)
        assert proc.wait(timeout=30) != 0  # quiet: 0.3 s; 100x margin, a busy machine
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert len(list((tmp_path / "out").glob("*.json"))) < 1500


def _files(folder) -> dict:
    """Every file under ``folder`` (dot files included) -> its bytes."""
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def test_autograde_signs_with_a_private_key_beside_course_json_never_in_out(
    mini_course, submission, tmp_path
):
    import hashlib
    import hmac
    import stat

    folder = submission(GOOD, name="ada")
    out = tmp_path / "scores"
    result = grade("autograde", folder.parent, "--out", out, "--course", mini_course, "--html")
    assert result.exit_code == 0, result.output
    key_file = mini_course.parent / ".grade-key"
    key = key_file.read_bytes()
    assert len(key) == 32 and stat.S_IMODE(key_file.stat().st_mode) == 0o600
    doc = json.loads((out / "ada.json").read_text())
    body = {k: v for k, v in doc.items() if k != "signature"}
    canonical = json.dumps(
        body, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )
    assert (
        doc["signature"]
        == "hmac-sha256:" + hmac.new(key, canonical.encode(), hashlib.sha256).hexdigest()
    )
    assert doc["status"] == "graded"
    for name, data in _files(out).items():
        assert key not in data and key.hex().encode() not in data, name
    assert not (out / ".grade-lock.owner").exists()  # the owner note goes with the lock


def test_an_out_folder_holding_the_course_is_refused(mini_course, submission):
    folder = submission(GOOD, name="ada")
    result = grade("autograde", folder.parent, "--out", mini_course.parent, "--course", mini_course)
    assert (
        result.exit_code == 2
        and "holds the course folder, where the grader's key .grade-key is" in result.output
    )
    assert (
        not (mini_course.parent / ".grade-key").exists()
        and not (mini_course.parent / ".grade-lock").exists()
    )


def test_the_cache_keeps_only_schema_valid_signed_graded_files(mini_course, submission, tmp_path):
    """A score file is reused only when it is valid, graded (no grader error) and signed with the
    course's key; anything else is regraded, never a traceback (`"late": "x"` used to raise
    AttributeError)."""
    regraded = ("invalid", "old", "listy", "edited", "flagged", "unsigned")
    for name in ("keep", *regraded):
        folder = submission(BROKEN["syntax"], name=name)  # 0/4 each
    out = tmp_path / "scores"
    assert grade("autograde", folder.parent, "--out", out, "--course", mini_course).exit_code == 0
    docs = {p.stem: json.loads(p.read_text()) for p in out.glob("*.json")}
    docs["invalid"]["late"] = "x"
    docs["old"] = {
        k: v for k, v in docs["old"].items() if k not in ("status", "signature")
    }  # grader 0.1.0's
    docs["listy"] = []
    docs["edited"]["score"] = docs["edited"]["problems"][0]["score"] = 4.0  # by hand: 0 -> 4
    del docs["unsigned"]["signature"]
    from grader.grading.signature import load_key, sign

    docs["flagged"] = sign(
        {**docs["flagged"], "status": "grader_error"}, load_key(mini_course)
    )  # signed
    for name, doc in docs.items():
        (out / f"{name}.json").write_text(json.dumps(doc))
    result = grade("autograde", folder.parent, "--out", out, "--course", mini_course)
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output and "1 submissions unchanged" in result.output
    for name in regraded:
        assert f"graded {name}: 0/4" in result.output
        doc = json.loads((out / f"{name}.json").read_text())
        jsonschema.validate(doc, schema())
        assert (
            doc["status"] == "graded"
            and doc["score"] == 0
            and doc["signature"]
            and "late" not in doc
        )


# Runs `grade autograde` with the runner's grading of student "flaky" failing as the grader's own
# fault would
# (a zygote killed from outside, say); --jobs 1 grades in this process, where the patch is.
FLAKY = """
import dataclasses, sys
from grader import cli
from grader.grading import plugin
real = plugin.GradingPlugin._grade
def grade(self, job, items):
    graded = real(self, job, items)
    if job.student == "flaky":
        error = "the grader failed, not your code: the sandbox's zygote died during double()"
        return dataclasses.replace(graded, grader_error=True, error=error)
    return graded
plugin.GradingPlugin._grade = grade
cli.main(sys.argv[1:], prog_name="grade")
"""


def test_a_grader_error_is_flagged_not_scored_and_a_rerun_regrades_it(
    mini_course, submission, tmp_path
):
    for name in ("flaky", "good"):
        folder = submission(GOOD, name=name)
    out = tmp_path / "scores"
    args = ["autograde", folder.parent, "--out", out, "--course", mini_course, "--jobs", "1"]
    quiet = subprocess.run(
        [sys.executable, "-c", FLAKY, *map(str, args), "--quiet"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert quiet.returncode == 3, quiet.stdout + quiet.stderr
    assert quiet.stdout == ""
    assert (
        "grader error: flaky: the grader failed, not your code: the sandbox's zygote died during "
        "double(); "
        "not exported; a rerun regrades it"
    ) in quiet.stderr
    doc = json.loads((out / "flaky.json").read_text())
    assert doc["status"] == "grader_error" and doc["signature"]
    loud = subprocess.run(
        [sys.executable, "-c", FLAKY, *map(str, args)], capture_output=True, text=True, timeout=300
    )
    assert loud.returncode == 3
    assert "grader error on flaky: not graded, not exported" in loud.stderr  # the progress line
    row = next(line for line in loud.stdout.splitlines() if "flaky" in line)
    assert row.count("grader error") == 2 and "0/" not in row  # mathy and total
    assert "1 submissions unchanged" in loud.stderr  # good was kept, flaky not
    export = grade(
        "export", out, "--format", "csv", "--out", tmp_path / "g.csv", "--course", mini_course
    )
    assert (
        export.exit_code == 1
        and "refused: flaky (flaky.json): the grader failed on it" in export.output
    )
    rerun = grade("autograde", *args[1:])
    assert rerun.exit_code == 0, rerun.output
    assert "graded flaky: 4/4" in rerun.output
    assert json.loads((out / "flaky.json").read_text())["status"] == "graded"


def test_a_second_autograde_on_a_held_out_touches_nothing_and_names_the_holder(
    mini_course, submission, tmp_path
):
    import socket

    from grader.commands import outlock

    folder = submission(GOOD, name="ada")
    out = tmp_path / "scores"
    assert grade("autograde", folder.parent, "--out", out, "--course", mini_course).exit_code == 0
    (out / ".score-abc123.tmp").write_text("the first run's file being written")
    (out / ".grading" / "collected" / "ada").mkdir(parents=True)
    (out / ".grading" / "collected" / "ada" / "mathy.py").write_text("the first run's working copy")
    with outlock.hold(out):  # the first run, still grading
        before = _files(out)
        result = grade("autograde", folder.parent, "--out", out, "--course", mini_course, "--force")
        after = _files(out)
    assert result.exit_code == 2, result.output
    assert len(result.output.strip().splitlines()) == 1
    assert (
        f"another grade autograde is writing there (pid {os.getpid()} on {socket.gethostname()}, "
        "since " in result.output
    )
    assert after == before  # byte for byte, the lock and its owner note included


def test_check_warns_when_the_code_may_not_be_the_users_own(mini_course, submission, tmp_path):
    from grader.commands.check import foreign_code_warning

    folder = submission(GOOD)
    mine = os.stat(folder).st_uid
    assert "as root" in foreign_code_warning(folder, euid=0)
    assert "belongs to another user" in foreign_code_warning(folder, euid=mine + 1)
    if mine != 0:
        assert foreign_code_warning(folder, euid=mine) is None
    result = grade("check", "--course", mini_course, "--path", folder)
    warned = "process isolation" in result.output
    assert warned == (os.geteuid() == 0 or mine != os.geteuid())


WRONG = {"mathy.py": "def double(x):\n    return 3 * x\n\ndef twice(n):\n    return 2 * n\n"}


@pytest.mark.parametrize("encoding", ["ascii", "cp1252"])
def test_check_on_a_stream_that_cannot_encode_the_marks_prints_plain_text(
    mini_course, submission, encoding
):
    """A redirected Windows console writes cp1252: ✗ becomes FAIL, never a UnicodeEncodeError."""
    folder = submission(WRONG)
    proc = subprocess.run(
        [sys.executable, "-m", "grader", "check", "--course", mini_course, "--path", folder],
        capture_output=True,
        env={**os.environ, "PYTHONIOENCODING": encoding},
        timeout=300,
    )
    out = proc.stdout.decode(encoding)
    assert proc.returncode == 1, out + proc.stderr.decode(encoding, "replace")
    assert "FAIL mathy test_double_small: double of [0, 1, 2]" in out
    assert "✗" not in out and "Traceback" not in proc.stderr.decode(encoding, "replace")
    utf8 = subprocess.run(
        [sys.executable, "-m", "grader", "check", "--course", mini_course, "--path", folder],
        capture_output=True,
        env={**os.environ, "PYTHONIOENCODING": "utf-8"},
        timeout=300,
    )
    assert "✗ mathy test_double_small" in utf8.stdout.decode()


def test_plain_text_stands_in_for_each_mark_and_question_marks_the_rest():
    from grader.feedback.glyphs import plain, stream_for

    assert plain("✓ ok · 5×4 …", "utf-8") == "✓ ok · 5×4 …"
    assert plain("✓ ✗ · 5×4 … 漢", "ascii") == "ok FAIL - 5x4 ... ?"
    assert plain("✓ · 5×4", "cp1252") == "ok · 5×4"  # cp1252 has · and ×, not ✓
    buffer = io.TextIOWrapper(io.BytesIO(), encoding="ascii")
    stream_for(buffer).write("[red]✗[/] layernorm\n")
    buffer.flush()
    assert buffer.buffer.getvalue() == b"[red]FAIL[/] layernorm\n"


def test_trace_and_help_on_an_ascii_stream_print_plain_text(tmp_path):
    from conftest import PROJECT
    from mutants import write_mutant

    folder = write_mutant(PROJECT / "solutions" / "the-block", tmp_path / "me", "layernorm.ddof1")
    env = {**os.environ, "PYTHONIOENCODING": "ascii"}
    proc = subprocess.run(
        [sys.executable, "-m", "grader", "trace", "-a", "the-block", "--path", folder],
        capture_output=True,
        cwd=PROJECT,
        env=env,
        timeout=300,
    )
    out = proc.stdout.decode("ascii")
    assert (
        proc.returncode == 1
        and "FAIL layernorm() differs at steps 2" in out
        and "first differs at step 2" in out
    ), out + proc.stderr.decode("ascii", "replace")
    help_ = subprocess.run(
        [sys.executable, "-m", "grader", "trace", "--help"],
        capture_output=True,
        env=env,
        timeout=300,
    )
    assert help_.returncode == 0 and b"--case" in help_.stdout, (
        help_.stderr
    )  # its help holds a non-ASCII mark
