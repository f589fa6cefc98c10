"""The documentation: the site under docs/ builds in MkDocs' strict mode (a broken link, a missing
page or anchor, a snippet of a file that is gone fails); the README's quick starts run as written on
a fresh copy of the project, and the authors' worked example in an empty folder. Commands and files
are read from the pages' fenced blocks, so a page and what it says cannot drift apart."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import PROJECT

README = PROJECT / "README.md"
CLEAN = {
    k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")
}


def test_the_site_builds_in_strict_mode(tmp_path):
    """`mkdocs build --strict`: every page in the nav, every link and anchor found, every snippet
    there, the command reference generated from the click commands."""
    site = tmp_path / "site"
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", site],
        cwd=PROJECT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    # mkdocs missing: `make install` installs the docs extra
    assert proc.returncode == 0, proc.stdout + proc.stderr
    commands = (site / "reference" / "commands" / "index.html").read_text(encoding="utf-8")
    for command in ("grade autograde", "grade check", "grade override add", "grade push canvas"):
        assert command in commands, command
    schema = (site / "reference" / "score-file" / "index.html").read_text(encoding="utf-8")
    assert '"signature"' in schema  # the schema, included as it is


def fenced(section: str, bold: str) -> list[tuple[str, str, str]]:
    """Each fenced block of ``section``: the last bold text before it (matching ``bold``), its
    language, its text."""
    blocks, after = [], 0
    for match in re.finditer(r"```(\w*)\n(.*?)```", section, re.S):
        names = re.findall(bold, section[after : match.start()])
        blocks.append((names[-1] if names else "", match.group(1), match.group(2)))
        after = match.end()
    return blocks


def section(path: Path, heading: str) -> str:
    """The text of ``path`` from ``heading`` to the next heading of its level."""
    text = path.read_text(encoding="utf-8")
    start = text.index(f"\n{heading}")
    end = text.find("\n" + heading.split()[0] + " ", start + 1)
    return text[start : end if end > 0 else len(text)]


def lines(block: str) -> list[str]:
    return [line for line in block.splitlines() if line.strip() and not line.startswith("#")]


def quick_start(heading: str) -> list[tuple[str, list[str]]]:
    """The README's quick start under ``heading``: each step's name (``**4. Grade**``) and its
    commands."""
    return [
        (name or heading.lstrip("# "), lines(text))
        for name, language, text in fenced(section(README, heading), r"\*\*([^*`]+)\*\*")
        if language == "sh"
    ]


def fresh_copy(root: Path) -> Path:
    """The project's files as git sees them (tracked, and new ones not ignored: a work tree in
    progress stays whole; a fresh clone's are the same) copied into ``root``; the overrides files
    as committed (a header alone: running the walkthrough here appends rows); and this checkout's
    .venv, which `make install` made, linked in: the quick starts begin after the set-up."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=PROJECT,
        capture_output=True,
        text=True,
        check=True,
    )
    for name in filter(None, listed.stdout.split("\0")):
        if (PROJECT / name).is_file():  # (deleted in the work tree: not there)
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(PROJECT / name, root / name)
    for overrides in (root / "overrides").glob("*.csv"):
        committed = subprocess.run(
            ["git", "show", f"HEAD:overrides/{overrides.name}"],
            cwd=PROJECT,
            capture_output=True,
            text=True,
        )
        if committed.returncode == 0:
            overrides.write_text(committed.stdout, encoding="utf-8")
    (root / ".venv").symlink_to(PROJECT / ".venv")
    return root


def run(command: str, cwd: Path, env: dict) -> str:
    """One command of a page, as a shell runs it; what it printed."""
    # timeout: a backstop against a hang, not a measurement (quiet: pip install 25 s, a grade < 5 s)
    proc = subprocess.run(
        ["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=900
    )
    assert proc.returncode == 0, (
        f"{command} (in {cwd}): exit {proc.returncode}\n{proc.stdout[-3000:]}{proc.stderr[-3000:]}"
    )
    return proc.stdout + proc.stderr


@pytest.mark.skipif(
    shutil.which("git") is None or not (PROJECT / ".git").exists(), reason="needs a git checkout"
)
def test_both_quick_starts_run_as_written_on_a_fresh_copy(tmp_path):
    """Every command of the README's instructor quick start, in order, on a fresh copy of the
    project; after its release, every command of the student quick start in that release, with the
    reference's code in exercises/ (the students' work). Prints each step's time (-s)."""
    student = quick_start("## Student quick start")
    instructor = quick_start("## Instructor quick start")
    steps = [name.split(".")[0] for name, _ in instructor]
    assert len(student) == 1 and steps == ["1", "3", "4", "5", "6", "7", "8"], (student, instructor)
    project = fresh_copy(tmp_path / "project")
    copied = {
        os.path.relpath(os.path.join(folder, name), project)
        for folder, _, names in os.walk(project)
        for name in names
    }
    env = {**CLEAN, "PYTHONPATH": str(project)}  # the copy's grader, in this checkout's venv
    times, said = {}, {}

    def step(name, commands, cwd, env):
        began = time.monotonic()
        said[name] = "".join(run(command, cwd, env) for command in commands)
        times[name] = time.monotonic() - began

    step(*instructor[0], project, env)  # 1. Release
    release = project / "release"
    for reference in (project / "solutions" / "the-block").glob("*.py"):  # 2. Students work
        if (release / "exercises" / reference.name).exists():
            shutil.copy(reference, release / "exercises" / reference.name)
    step(*student[0], release, CLEAN)  # in a venv of their own making
    for name, commands in instructor[1:]:
        step(name, commands, project, env)
    print("\n".join(f"{seconds:6.1f} s  {name}" for name, seconds in times.items()))

    assert (release / "hand-in.zip").is_file() and (release / "me.html").is_file()
    assert "grade check ran the public tests only" in " ".join(said[student[0][0]].split())
    scores = project / "scores" / "the-block"
    graded = sorted(p.stem for p in scores.glob("*.json"))
    assert graded == sorted(
        p.name for p in (project / "examples" / "the-block").iterdir() if p.is_dir()
    )
    assert all((scores / f"{s}.html").is_file() for s in graded)
    assert (project / "scores" / "class.html").is_file()
    assert (project / "collected" / "the-block").is_dir()
    assert all((project / "feedback" / "the-block" / s).is_dir() for s in graded)
    assert len((project / "canvas.csv").read_text(encoding="utf-8").splitlines()) == 1 + len(graded)
    assert "dry run, nothing posted" in said[instructor[5][0]]
    regrades = " ".join(said[instructor[6][0]].split())
    assert "changed since the last run: edsger_post_ln:" in regrades
    assert "block +5 by hand" in regrades
    # what the instructor's steps wrote, .gitignore ignores (git status stays clean in a term)
    subprocess.run(["git", "init", "-q"], cwd=project, check=True, capture_output=True)
    untracked = subprocess.run(
        ["git", "ls-files", "-z", "--others", "--exclude-standard"],
        cwd=project,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\0")
    assert set(filter(None, untracked)) - copied - {".venv"} == set()  # (.venv: the link)


def test_the_authors_worked_example_grades_a_class_from_an_empty_folder(tmp_path):
    """docs/authors.md's worked example, as written: in an empty folder, its first commands (`grade
    new`, the check, a folder), each file it shows (its path in bold before the block), then its
    other commands, with `grade` on PATH; the grades and the diagnosis the page says come out, and
    the course.json it shows for writing by hand is the one `grade new` wrote."""
    blocks = fenced(
        section(PROJECT / "docs" / "authors.md", "## A worked example"), r"\*\*`([^`]+)`\*\*"
    )
    commands = [lines(text) for _, language, text in blocks if language == "sh"]
    files = [(path, text) for path, language, text in blocks if language == "python"]
    by_hand = [text for _, language, text in blocks if language == "json"]
    assert len(commands) == 2 and len(files) == 9 and len(by_hand) == 1, blocks
    folder = tmp_path / "course"
    folder.mkdir()
    env = {**CLEAN, "PATH": f"{PROJECT / '.venv' / 'bin'}{os.pathsep}{CLEAN.get('PATH', '')}"}
    skeleton = "".join(run(command, folder, env) for command in commands[0])
    assert "course is valid" in skeleton  # grade new's skeleton, accepted at once
    assert json.loads(by_hand[0]) == json.loads((folder / "course.json").read_text())
    for path, text in files:
        (folder / path).write_text(text, encoding="utf-8")  # over grade new's, or new
    said = "".join(run(command, folder, env) for command in commands[1])
    assert "course is valid" in said and "property tests 1 of 10 points (10%)" in said
    students = ("ada_correct", "alan_axis0", "grace_blank", "linus_no_max")
    scores = {
        s: json.loads((folder / "scores" / "softmax" / f"{s}.json").read_text()) for s in students
    }
    assert {s: d["score"] for s, d in scores.items()} == dict(zip(students, (10, 1, 0, 6)))
    assert {t.get("diagnosis") for t in scores["alan_axis0"]["tests"]} - {None} == {"softmax.axis0"}
    assert scores["grace_blank"].get("blank") is True
    assert (folder / "scores" / "softmax" / "alan_axis0.html").is_file()
    assert (folder / "release" / "course.json").is_file()
