"""The stubs students read and the tests that grade them say the same thing (issue 28): every
function whose suites accept a float32 input's output as float32 or float64 (on purpose: NumPy 2
promotes float32 times a float64 scalar, NumPy 1 did not) says so in its stub, and no stub promises
"float32 in, float32 out" or "the same dtype"."""

from __future__ import annotations

import ast
import json
import re

import pytest
from conftest import PROJECT

from grader.course.manifest import load

ASSIGNMENTS = [
    a["assignment"] for a in json.loads((PROJECT / "course.json").read_text())["assignments"]
]
DTYPE_RULE = re.compile(
    r"np\.float32,\s*np\.float64"
)  # assert_array(..., (np.float32, np.float64))
CALLED = re.compile(r"student\.(\w+)\(|call_with_inputs\(\s*\"(\w+)\"")


def stub_docstrings(assignment: str) -> dict[str, str]:
    """Each course function -> its stub's docstring, its lines joined."""
    course = load(PROJECT / "course.json", assignment)
    docs = {}
    for problem in course.problems:
        tree = ast.parse((course.exercises / f"{problem.module}.py").read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and node.name in problem.functions:
                docs[node.name] = " ".join((ast.get_docstring(node) or "").split())
    return docs


def dtype_tested(assignment: str) -> dict[str, list[str]]:
    """Each function a test checks the float32 rule of (float32 or float64 accepted) -> those
    tests."""
    course = load(PROJECT / "course.json", assignment)
    found: dict[str, list[str]] = {}
    for problem in course.problems:
        for suite in filter(None, (problem.public, problem.hidden)):
            source = suite.read_text()
            for node in ast.walk(ast.parse(source)):
                if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
                    body = ast.get_source_segment(source, node) or ""
                    if DTYPE_RULE.search(body):
                        for match in CALLED.finditer(body):
                            name = match.group(1) or match.group(2)
                            if name in problem.functions:
                                found.setdefault(name, []).append(node.name)
    return found


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_every_function_whose_tests_accept_float64_for_float32_says_so(assignment):
    docs, tested = stub_docstrings(assignment), dtype_tested(assignment)
    assert tested, "no test checks the float32 rule: the scan finds nothing"
    silent = {
        name: tests
        for name, tests in tested.items()
        if "float32 or float64" not in docs.get(name, "")
    }
    assert not silent, f"stubs that do not say float32 input may give float32 or float64: {silent}"


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_no_stub_promises_float32_out_or_the_same_dtype(assignment):
    for name, doc in stub_docstrings(assignment).items():
        assert not re.search(r"keep (its|the) dtype|\(and dtype\)|same dtype", doc), (name, doc)
        for clause in re.split(r"[;:]|\. ", doc):  # a clause about float32 names float64 too
            if "float32" in clause:
                assert "float64" in clause, (name, clause)


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_no_test_that_accepts_float64_is_named_float32_out(assignment):
    """A failed test's name is what a student reads first: one that accepts float64 does not promise
    float32."""
    named = [
        test
        for tests in dtype_tested(assignment).values()
        for test in tests
        if "float32_out" in test
    ]
    assert not named, named
