"""Deferred checks: a test that needs the student's code in a fresh worker (the block's own-components
check) finishes after the submission's other tests, all such checks in one fresh worker."""
from __future__ import annotations

import json
import shutil

import pytest
from conftest import grade, write_tree

SUITE = '''
import pytest
from grader.errors import Deferred

def later(student, tag, expected):
    def check():
        seen = student.mark(tag)
        assert seen == expected, f"the fresh worker saw {seen}"
    return check

@pytest.mark.points(1)
def test_zero(student):
    student.mark("main0")                                    # printed into the tests' worker's log
    def check():
        assert student.printed() == 0, "the fresh worker can read what the tests' worker printed"
    raise Deferred(check)

@pytest.mark.points(1)
def test_one(student):
    student.mark("main1")
    raise Deferred(later(student, "late1", ["late1"]))   # nothing the tests ran is known there

@pytest.mark.points(1)
def test_two(student):
    student.mark("main2")
    raise Deferred(later(student, "late2", ["late1", "late2"]))   # the same fresh worker as test_one's check

@pytest.mark.points(1)
def test_three(student):
    student.mark("main3")
    def check():
        student.mark("late3")
        assert False, "the deferred check failed"
    raise Deferred(check)

@pytest.mark.points(1)
def test_four(student):
    assert student.mark("main4") == ["main0", "main1", "main2", "main3", "main4"], "the tests' worker was restarted"
'''
MODULE = ("import os\n\nCALLS = []\n\ndef mark(tag):\n    print('mark', tag)\n    CALLS.append(tag)\n    return list(CALLS)\n\n"
          "def printed():\n    return os.fstat(2).st_size\n")


HIDDEN = "import pytest\n\n@pytest.mark.points(1)\ndef test_hidden(student):\n    assert student.mark('h')\n"


@pytest.fixture
def deferred_course(tmp_path):
    root = tmp_path / "course"
    write_tree(root / "tests" / "public", {"__init__.py": "", "test_marks.py": SUITE})
    write_tree(root / "tests" / "hidden", {"__init__.py": "", "test_marks.py": HIDDEN})
    write_tree(root / "solutions", {"marks.py": MODULE})
    (root / "course.json").write_text(json.dumps({
        "assignment": "deferred", "solutions": "solutions",
        "problems": [{"name": "marks", "module": "marks", "functions": ["mark", "printed"], "points": 6,
                      "public": "tests/public/test_marks.py", "hidden": "tests/hidden/test_marks.py"}]}))
    return root


@pytest.mark.parametrize("command", ["check", "autograde"])
def test_deferred_checks_share_one_fresh_worker_after_the_other_tests(deferred_course, level, command, tmp_path):
    """`grade check` starts its workers cold, `grade autograde` forks them from the zygote."""
    if command == "check":
        out = tmp_path / "ann.json"
        grade("check", "--course", deferred_course / "course.json", "--path", deferred_course / "solutions",
              "--json", out)
    else:
        (tmp_path / "subs").mkdir()
        shutil.copytree(deferred_course / "solutions", tmp_path / "subs" / "ann")
        code, output = grade("autograde", tmp_path / "subs", "--course", deferred_course / "course.json",
                             "--out", tmp_path / "out", "--sandbox", level, "--unsafe", "--quiet")
        assert code == 0, output
        out = tmp_path / "out" / "ann.json"
    tests = [t for t in json.loads(out.read_text())["tests"] if t["visibility"] == "visible"]
    assert [t["name"] for t in tests] == ["test_zero", "test_one", "test_two", "test_three", "test_four"]
    assert [t["status"] for t in tests] == ["passed", "passed", "passed", "failed", "passed"], tests
    three = tests[3]["output"]
    assert "the deferred check failed" in three
    assert "mark main3\nmark late3" in three               # what the student printed, in both parts
