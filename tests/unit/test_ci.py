"""The CI workflow for a public host (.github/workflows/student-path.yml): it cannot run here, so
`make test` checks that GitHub Actions would take it (its vendored schema, through
check-jsonschema) and that it runs the student path's tests on Ubuntu, Windows and macOS with
Python 3.10 to 3.13 (read with PyYAML)."""

from __future__ import annotations

import shlex
import subprocess
import sys

import yaml
from conftest import PROJECT

WORKFLOW = PROJECT / ".github" / "workflows" / "student-path.yml"
SYSTEMS = {"ubuntu-latest", "windows-latest", "macos-latest"}
PYTHONS = ["3.10", "3.11", "3.12", "3.13"]


def workflow() -> dict:
    return yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))


def test_github_actions_takes_the_workflow():
    # timeout: a backstop against a hang, not a measurement (quiet: 0.5 s; 100x margin)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "check_jsonschema",
            "--builtin-schema",
            "vendor.github-workflows",
            str(WORKFLOW),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_it_runs_on_each_system_and_python_the_students_use():
    doc = workflow()
    triggers = doc.get("on", doc.get(True))  # YAML 1.1 reads a bare `on` as true
    assert {"push", "pull_request"} <= set(triggers)
    (job,) = doc["jobs"].values()
    assert job["runs-on"] == "${{ matrix.os }}"
    matrix = job["strategy"]["matrix"]
    assert set(matrix["os"]) == SYSTEMS
    assert matrix["python"] == PYTHONS  # strings: a bare 3.10 would be 3.1
    assert job["strategy"]["fail-fast"] is False  # one system's failure hides no other's


def test_its_steps_install_the_grader_and_run_the_student_paths_tests():
    (job,) = workflow()["jobs"].values()
    steps = job["steps"]
    uses = [step["uses"].split("@")[0] for step in steps if "uses" in step]
    assert uses == ["actions/checkout", "actions/setup-python"]
    setup = next(step for step in steps if step.get("uses", "").startswith("actions/setup-python"))
    assert setup["with"]["python-version"] == "${{ matrix.python }}"
    commands = [shlex.split(line) for step in steps for line in step.get("run", "").splitlines()]
    assert ["python", "-m", "pip", "install", "-e", ".[dev]"] in commands
    (tests,) = [c for c in commands if c[:3] == ["python", "-m", "pytest"]]
    files = [arg for arg in tests[3:] if not arg.startswith("-") and arg != "portable"]
    assert (
        files == ["tests/unit/sandbox/test_portable.py"] and "-m" in tests and "portable" in tests
    )
    assert all((PROJECT / f).is_file() for f in files)
    assert "pytest" in steps[-1]["run"] and "uses" in steps[0] and "uses" in steps[1]  # in order
