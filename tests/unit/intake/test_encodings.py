"""Issue 27, "a careless student loses nothing": a Python source is read as Python reads it (a BOM,
or the PEP 263 coding line, else UTF-8), a notebook as nbformat reads it; a file Python could not
read either is the student's one-line error, never "blank"; and a module the grader writes reads
back, in the worker's import, as it was meant."""

from __future__ import annotations

import csv
import importlib.util
import io
import json
import tokenize
import zipfile

import nbformat
import pytest
from conftest import grade, make_course, write_tree

from grader.course.manifest import load
from grader.intake import collect

# A correct mini submission whose double() is right only if "é" is read as the one character it is.
SOURCE = '''{cookie}"""Exercices de l'élève."""
import numpy as np

SIGNE = "é"


def double(x):
    return 2 * x if len(SIGNE) == 1 else 3 * x


def twice(n):
    return 2 * n
'''
LATIN1 = SOURCE.format(cookie="# -*- coding: latin-1 -*-\n").encode("latin-1")


@pytest.mark.parametrize(
    "data",
    [
        LATIN1,
        SOURCE.format(cookie="#!/usr/bin/env python\n# vim: set fileencoding=cp1252 :\n").encode(
            "cp1252"
        ),
        SOURCE.format(cookie="# coding=iso-8859-15\n").encode("iso-8859-15"),
        b"\xef\xbb\xbf" + SOURCE.format(cookie="").encode("utf-8"),  # a BOM
        SOURCE.format(cookie="").encode("utf-8"),
    ],
    ids=["latin-1", "cp1252-vim", "iso-8859-15", "utf-8-bom", "utf-8"],
)
def test_a_loose_py_is_read_as_python_reads_it_and_its_module_imports_so(
    mini_course, tmp_path, data
):
    course = load(mini_course)
    (tmp_path / "ada.py").write_bytes(data)
    found = collect.one(course, "ada", tmp_path / "ada.py", tmp_path / "work")
    assert (found.error, found.blank) == ("", False), found
    written = found.folder / "mathy.py"
    # what the worker's import will read: UTF-8, and no coding line saying otherwise
    assert tokenize.detect_encoding(io.BytesIO(written.read_bytes()).readline)[0] == "utf-8"
    spec = importlib.util.spec_from_file_location("mathy_written", written)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.SIGNE == "é" and module.double(2) == 4


@pytest.mark.parametrize(
    "data, why",
    [
        (SOURCE.format(cookie="").encode("latin-1"), "line 1"),  # Latin-1, nothing says so
        (SOURCE.format(cookie="# coding: klingon\n").encode("latin-1"), "klingon"),
        (SOURCE.format(cookie="# coding: utf-16\n").encode("latin-1"), "utf-16"),  # python refuses
        (SOURCE.format(cookie="# coding: rot13\n").encode("latin-1"), "rot13"),  # these two too
        (SOURCE.format(cookie="# coding: utf-8\n").encode("latin-1"), "line 2"),
        (SOURCE.format(cookie="").encode("utf-16"), "utf-8"),
    ],
    ids=[
        "latin-1-no-coding-line",
        "unknown-encoding",
        "utf-16-declared",
        "rot13-declared",
        "declared-wrong",
        "utf-16",
    ],
)
def test_a_py_python_cannot_read_is_the_students_one_line_error_not_blank(
    mini_course, tmp_path, data, why
):
    course = load(mini_course)
    (tmp_path / "ada.py").write_bytes(data)
    found = collect.one(course, "ada", tmp_path / "ada.py", tmp_path / "work")
    assert found.error and not found.blank, found
    assert "ada.py" in found.error and why in found.error and "\n" not in found.error, found.error
    assert "UTF-8" in found.error  # what to do about it


def test_a_notebook_nbformat_cannot_read_is_the_students_error_not_blank(mini_course, tmp_path):
    course = load(mini_course)
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(SOURCE.format(cookie=""))]
    (tmp_path / "ada.ipynb").write_bytes(nbformat.writes(nb).encode("latin-1"))
    found = collect.one(course, "ada", tmp_path / "ada.ipynb", tmp_path / "work")
    assert found.error and not found.blank, found
    assert "ada.ipynb" in found.error and "\n" not in found.error, found.error


def test_one_unreadable_file_beside_a_readable_one_is_named_and_the_rest_graded(
    mini_course, tmp_path
):
    course = load(mini_course)
    folder = tmp_path / "ada"
    folder.mkdir()
    (folder / "part1.py").write_bytes(LATIN1)
    (folder / "part2.py").write_bytes("def helper():\n    return 'é'\n".encode("latin-1"))
    found = collect.one(course, "ada", folder, tmp_path / "work")
    assert "part2.py" in found.error and not found.blank
    assert "def double" in (found.folder / "mathy.py").read_text(encoding="utf-8")


def test_latin1_hand_ins_are_graded_and_exported_as_the_code_deserves(tmp_path):
    """End to end, each way a submission arrives: the single .py (graded 0, flagged blank and
    exported as 0.00 before), a folder's module, a zip's loose file; and one Python cannot read:
    an error, not blank."""
    course = make_course(tmp_path / "course")
    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "ada.py").write_bytes(LATIN1)
    write_tree(subs / "bob", {})
    (subs / "bob" / "mathy.py").write_bytes(LATIN1)
    with zipfile.ZipFile(subs / "cy.zip", "w") as zf:
        zf.writestr("homework/solution.py", LATIN1)
    (subs / "dee.py").write_bytes(SOURCE.format(cookie="").encode("latin-1"))
    out = tmp_path / "out"
    code, output = grade("autograde", "--course", course, subs, "--out", out, "--quiet")
    assert code == 0, output
    docs = {p.stem: json.loads(p.read_text()) for p in out.glob("*.json")}
    for student in ("ada", "bob", "cy"):
        doc = docs[student]
        assert (doc["score"], "blank" in doc, "error" in doc) == (4, False, False), doc
    dee = docs["dee"]
    assert dee["score"] == 0 and "blank" not in dee and "dee.py" in dee["error"], dee
    code, output = grade(
        "export", out, "--format", "csv", "--course", course, "--out", tmp_path / "g.csv"
    )
    assert code == 0, output
    with open(tmp_path / "g.csv", encoding="utf-8-sig", newline="") as f:
        rows = {row["student"]: row for row in csv.DictReader(f)}
    assert (rows["ada"]["score"], rows["dee"]["score"]) == ("4.00", "0.00"), rows
