"""The Makefile's targets that need files from outside the repository say so in one line."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from conftest import PROJECT


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
def test_make_diagnoses_without_the_shared_corpus_says_what_it_needs(tmp_path):
    """A fresh clone elsewhere has no ../shared: one line, not a Python traceback."""
    clone = tmp_path / "clone"
    clone.mkdir()
    for name in ("Makefile", "pyproject.toml", "course.json"):
        shutil.copy(PROJECT / name, clone / name)
    (clone / ".venv").mkdir()
    (
        clone / ".venv" / ".installed"
    ).touch()  # installed: the target itself runs, nothing is installed
    # timeout: a backstop against a hang, not a measurement (quiet: 0.1 s; 500x margin)
    proc = subprocess.run(
        ["make", "diagnoses"], cwd=clone, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode != 0
    assert "make diagnoses: needs the acceptance corpus in ../shared/submissions" in proc.stdout
    assert "Traceback" not in proc.stdout + proc.stderr
