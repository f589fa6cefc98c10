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
