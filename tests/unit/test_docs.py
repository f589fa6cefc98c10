"""The documentation: the site under docs/ builds in MkDocs' strict mode (a broken link, a missing page or
anchor, a snippet of a file that is gone fails), and the README's quick starts run as written on a fresh
copy of the project (their commands are read from the README's fenced blocks, so the two cannot drift)."""
from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import PROJECT

README = PROJECT / "README.md"


def test_the_site_builds_in_strict_mode(tmp_path):
    """`mkdocs build --strict`: every page in the nav, every link and anchor found, every snippet there,
    the command reference generated from the click commands."""
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", tmp_path / "site"],
                          cwd=PROJECT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr     # mkdocs missing: `make install` (the docs extra)
    commands = (tmp_path / "site" / "reference" / "commands" / "index.html").read_text(encoding="utf-8")
    for command in ("grade autograde", "grade check", "grade override add", "grade push canvas"):
        assert command in commands, command
    assert '"signature"' in (tmp_path / "site" / "reference" / "score-file" / "index.html").read_text(
        encoding="utf-8")                                             # the schema, included as it is


def quick_start(heading: str) -> list[tuple[str, list[str]]]:
    """The README section under ``heading``: each ```sh block's commands, with the bold step name before it
    (``**4. Grade**``), in order."""
    readme = README.read_text(encoding="utf-8")
    start = readme.index(f"\n{heading}")
    section = readme[start:readme.find("\n## ", start + 1)]
    blocks, after = [], 0
    for match in re.finditer(r"```sh\n(.*?)```", section, re.S):
        names = re.findall(r"\*\*([^*]+)\*\*", section[after:match.start()])
        commands = [line for line in match.group(1).splitlines() if line.strip() and not line.startswith("#")]
        blocks.append((names[-1] if names else heading.lstrip("# "), commands))
        after = match.end()
    return blocks


def fresh_copy(root: Path) -> Path:
    """The project's files as git sees them (tracked, and new ones not ignored: a work tree in progress stays
    whole; a fresh clone's are the same), as they are in this work tree, in ``root``; the overrides files as
    committed (a header alone: running the walkthrough here appends rows), and this checkout's .venv, which
    `make install` made, linked in: the quick starts begin after the set-up."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=PROJECT, capture_output=True, text=True, check=True)
    for name in filter(None, listed.stdout.split("\0")):
        source = PROJECT / name
        if source.is_file():                                    # (a file deleted in the work tree: not there)
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, root / name)
    for overrides in (root / "overrides").glob("*.csv"):
        committed = subprocess.run(["git", "show", f"HEAD:overrides/{overrides.name}"], cwd=PROJECT,
                                   capture_output=True, text=True)
        if committed.returncode == 0:
            overrides.write_text(committed.stdout, encoding="utf-8")
    (root / ".venv").symlink_to(PROJECT / ".venv")
    return root


def run(command: str, cwd: Path, env: dict) -> str:
    """One command of a quick start, as a shell runs it; what it printed."""
    # timeout: a backstop against a hang, not a measurement (quiet: pip install 30 s, each grade under 5 s)
    proc = subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, f"{command} (in {cwd}): exit {proc.returncode}\n{proc.stdout[-3000:]}{proc.stderr[-3000:]}"
    return proc.stdout + proc.stderr


@pytest.mark.skipif(shutil.which("git") is None or not (PROJECT / ".git").exists(), reason="needs a git checkout")
def test_both_quick_starts_run_as_written_on_a_fresh_copy(tmp_path):
    """Every command of the README's instructor quick start, in order, on a fresh copy of the project; after
    its release, every command of the student quick start in that release, with the reference's code in
    exercises/ (the students' work). Prints each step's time (-s)."""
    student, instructor = quick_start("## Student quick start"), quick_start("## Instructor quick start")
    assert len(student) == 1 and [name.split(".")[0] for name, _ in instructor] == ["1", "3", "4", "5", "6", "7", "8"]
    project = fresh_copy(tmp_path / "project")
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env = {**clean, "PYTHONPATH": str(project)}                 # the copy's grader, in this checkout's venv
    times, said = {}, {}

    def step(name, commands, cwd, env):
        began = time.monotonic()
        said[name] = "".join(run(command, cwd, env) for command in commands)
        times[name] = time.monotonic() - began

    step(*instructor[0], project, env)                                          # 1. Release
    release = project / "release"
    for reference in (project / "solutions" / "the-block").glob("*.py"):
        if (release / "exercises" / reference.name).exists():
            shutil.copy(reference, release / "exercises" / reference.name)      # 2. Students work
    step(student[0][0], student[0][1], release, clean)                          # their own venv, as they make it
    for name, commands in instructor[1:]:
        step(name, commands, project, env)
    print("\n".join(f"{seconds:6.1f} s  {name}" for name, seconds in times.items()))

    assert (release / "hand-in.zip").is_file() and (release / "me.html").is_file()
    assert "grade check ran the public tests only" in " ".join(said[student[0][0]].split())
    scores = project / "scores" / "the-block"
    graded = sorted(p.stem for p in scores.glob("*.json"))
    assert graded == sorted(p.name for p in (project / "examples" / "the-block").iterdir() if p.is_dir())
    assert all((scores / f"{s}.html").is_file() for s in graded) and (project / "scores" / "class.html").is_file()
    assert (project / "collected" / "the-block").is_dir()
    assert all((project / "feedback" / "the-block" / s).is_dir() for s in graded)
    assert len((project / "canvas.csv").read_text(encoding="utf-8").splitlines()) == 1 + len(graded)
    assert "dry run, nothing posted" in said[instructor[5][0]]
    regrades = " ".join(said[instructor[6][0]].split())
    assert "changed since the last run: edsger_post_ln:" in regrades and "block +5 by hand" in regrades


def test_the_authors_worked_example_grades_a_class_from_an_empty_folder(tmp_path):
    """docs/authors.md's worked example, as written: each file it shows (a bold `path` before a fenced block)
    written into an empty folder, then its commands run there with `grade` on PATH; the grades and the
    diagnosis it says come out."""
    page = (PROJECT / "docs" / "authors.md").read_text(encoding="utf-8")
    start = page.index("\n## A worked example")
    section = page[start:page.find("\n## ", start + 1)]
    files, commands, after = [], [], 0
    for block in re.finditer(r"```(\w+)\n(.*?)```", section, re.S):
        if block.group(1) == "sh":
            commands += [line for line in block.group(2).splitlines() if line.strip()]
        else:                                    # the file named in bold just before it
            files.append((re.findall(r"\*\*`([^`]+)`\*\*", section[after:block.start()])[-1], block.group(2)))
        after = block.end()
    assert len(files) == 9 and len(commands) == 6, (files, commands)
    folder = tmp_path / "course"
    folder.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env["PATH"] = f"{PROJECT / '.venv' / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    run(commands[0], folder, env)           # the layout first: the files go into its folders
    for path, text in files:
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_text(text, encoding="utf-8")
    said = "".join(run(command, folder, env) for command in commands[1:])
    assert "course is valid" in said and "property tests 1 of 10 points (10%)" in said
    import json

    scores = {s: json.loads((folder / "scores" / "softmax" / f"{s}.json").read_text()) for s in ("ada", "alan", "emmy")}
    assert {s: d["score"] for s, d in scores.items()} == {"ada": 10, "alan": 6, "emmy": 1}
    assert {t.get("diagnosis") for t in scores["emmy"]["tests"]} - {None} == {"softmax.axis0"}
    assert (folder / "scores" / "softmax" / "emmy.html").is_file() and (folder / "release" / "course.json").is_file()
