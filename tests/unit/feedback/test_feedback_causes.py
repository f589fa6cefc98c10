"""Failed tests grouped by cause (issue 28): an import error, a missing function, a stub still
raising is said once per problem, with the tests it fails listed under it, on the feedback page and
in `grade check`'s output; a diagnosed mistake is boxed once with the tests it explains (it used to
be one box per test: one import error in 29 boxes, "not implemented yet" in 65)."""

from __future__ import annotations

import io
import re
from html.parser import HTMLParser

from conftest import PROJECT, THE_BLOCK, grade
from rich.console import Console

from grader.feedback.page import render
from grader.report import problem_table

MESSAGE = "this matches LayerNorm with the sample variance (ddof=1): use ddof=0"


def entry(
    name,
    output,
    problem="attention",
    visibility="visible",
    status="error",
    kind="import_error",
    **more,
):
    return {
        "name": name,
        "problem": problem,
        "score": 0.0,
        "max_score": 1.0,
        "status": status,
        "output": output,
        "visibility": visibility,
        "kind": kind,
        **more,
    }


IMPORT = "importing attention.py failed: SyntaxError: expected ':' (attention.py, line 7)"
DOC = {
    "student": "ada",
    "assignment": "the-block",
    "score": 0.0,
    "max_score": 9.0,
    "problems": [
        {
            "name": "attention",
            "score": 0.0,
            "max_score": 5.0,
            "tests": ["a1", "a2", "a3", "h1", "h2"],
            "passed": 0,
        },
        {
            "name": "layernorm",
            "score": 0.0,
            "max_score": 4.0,
            "tests": ["l1", "l2", "l3", "l4"],
            "passed": 0,
        },
    ],
    "tests": [
        entry("a1", IMPORT),
        entry("a2", IMPORT),
        entry("a3", IMPORT),
        entry("h1", "importing attention.py failed", visibility="after_published"),
        entry("h2", "importing attention.py failed", visibility="after_published"),
        entry(
            "l1",
            f"layernorm of X: values differ\ndiagnosis: {MESSAGE}\nyours: 1",
            "layernorm",
            status="failed",
            kind="mismatch",
            diagnosis="layernorm.ddof1",
        ),
        entry(
            "l2",
            f"layernorm with gamma: values differ\ndiagnosis: {MESSAGE}\nyours: 2",
            "layernorm",
            status="failed",
            kind="mismatch",
            diagnosis="layernorm.ddof1",
        ),
        entry("l3", "layernorm() timed out after 5 s of CPU time", "layernorm", kind="timeout"),
        entry("l4", "layernorm() timed out after 5 s of CPU time", "layernorm", kind="timeout"),
    ],
    "graded_at": "2026-11-29T15:12:14.123+00:00",
    "grader_version": "0",
    "sandbox": "bwrap",
}


class _Articles(HTMLParser):
    """The text of each <article> of a page."""

    def __init__(self, text: str):
        super().__init__()
        self.articles: list[str] = []
        self._depth = 0
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        if tag == "article":
            self._depth += 1
            self.articles.append("")

    def handle_endtag(self, tag):
        if tag == "article":
            self._depth -= 1

    def handle_data(self, data):
        if self._depth and data.strip():
            self.articles[-1] += " ".join(data.split()) + " "


def test_the_page_boxes_one_cause_once_with_the_tests_it_fails():
    articles = _Articles(render(DOC, {})).articles
    imports = [a for a in articles if "importing attention.py failed" in a]
    assert len(imports) == 1  # public and hidden tests of one cause, one box
    assert imports[0].startswith(f"✗ {IMPORT}")  # the public test's words, with the detail
    assert "The cause of 5 failed tests: a1, a2, a3, h1 (hidden), h2 (hidden)." in imports[0]
    boxed = [a for a in articles if "Diagnosis:" in a]
    assert (
        "It explains 2 failed tests: l1, l2." in boxed[0]
        and "Diagnosis: the same as above." in boxed[1]
    )
    assert sum("timed out" in a for a in articles) == 2  # a timeout is each test's own


def test_grade_checks_output_says_one_cause_once_with_the_tests_it_fails():
    out = io.StringIO()
    problem_table(DOC, Console(file=out, width=300, color_system=None))
    text = out.getvalue()
    assert text.count("importing attention.py failed") == 1
    assert (
        f"✗ attention: {IMPORT}\n"
        "    the cause of 5 failed tests: a1, a2, a3, h1 (hidden), h2 (hidden)\n" in text
    )
    assert text.count(MESSAGE) == 1 and "    it explains 2 failed tests: l1, l2\n" in text


def test_the_stubs_page_and_output_say_each_unwritten_function_once(tmp_path):
    """The released stubs: every test fails with "not implemented yet"; it is said once per
    function."""
    code, output = grade(
        "check",
        "-a",
        THE_BLOCK,
        "--path",
        PROJECT / "exercises" / THE_BLOCK,
        "--html",
        tmp_path / "page.html",
    )
    assert code == 1
    functions = ["layernorm", "gelu", "softmax", "attention", "mlp", "block", "count_params"]
    for function in functions:
        assert output.count(f"{function}() is not implemented yet") == 1, function
    articles = _Articles((tmp_path / "page.html").read_text()).articles
    assert len(articles) == len(functions)
    failed = re.findall(r"the cause of (\d+) failed tests", output)
    rows = re.findall(r"│ \w+ +│ +0/(\d+) │", output)
    assert sum(map(int, failed)) == sum(map(int, rows)) > 30
