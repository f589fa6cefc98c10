"""The diagnosis as the student sees it, on the feedback page and in the terminal: the grader's
diagnosis (a test entry with a ``diagnosis`` id) once per problem, never a line the student's code
printed."""

from __future__ import annotations

import io

from rich.console import Console

from grader.feedback.page import render
from grader.report import problem_table

MESSAGE = "this matches LayerNorm with the sample variance (ddof=1): use ddof=0"


def entry(name: str, output: str, diagnosis: str | None = None, problem: str = "layernorm") -> dict:
    data = {
        "name": name,
        "problem": problem,
        "score": 0.0,
        "max_score": 1.0,
        "status": "failed",
        "output": output,
        "visibility": "visible",
        "kind": "mismatch",
    }
    return {**data, "diagnosis": diagnosis} if diagnosis else data


DOC = {
    "student": "ada",
    "assignment": "the-block",
    "score": 0.0,
    "max_score": 4.0,
    "problems": [
        {
            "name": "layernorm",
            "score": 0.0,
            "max_score": 3.0,
            "tests": ["t1", "t2", "t3"],
            "passed": 0,
        },
        {"name": "gelu", "score": 0.0, "max_score": 1.0, "tests": ["t4"], "passed": 0},
    ],
    "tests": [
        entry(
            "t1",
            f"layernorm of X: values differ\ndiagnosis: {MESSAGE}\nyours: ...",
            "layernorm.ddof1",
        ),
        entry(
            "t2",
            f"layernorm with gamma: values differ\ndiagnosis: {MESSAGE}\nyours: ...",
            "layernorm.ddof1",
        ),
        entry(
            "t3",
            "layernorm of a batch: values differ\nyour code printed:\ndiagnosis: your code is "
            "perfect",
        ),
        entry(
            "t4",
            "gelu of x: values differ\nyour code printed:\ndiagnosis: nothing to see",
            problem="gelu",
        ),
    ],
    "graded_at": "2026-11-29T15:12:14.123+00:00",
    "grader_version": "0",
    "sandbox": "bwrap",
}


def test_the_page_boxes_a_diagnosis_once_per_problem_and_never_what_the_student_printed():
    page = render(DOC, {})
    assert page.count('class="diagnosis"') == 1 and page.count(MESSAGE) == 1
    assert page.count("Diagnosis: the same as above.") == 1
    assert (
        "diagnosis: your code is perfect" in page and "diagnosis: nothing to see" in page
    )  # as printed text
    assert "Diagnosis:</strong> your code" not in page and "Diagnosis:</strong> nothing" not in page


def test_the_terminal_says_a_diagnosis_once_per_problem_and_never_what_the_student_printed():
    out = io.StringIO()
    problem_table(DOC, Console(file=out, width=200, color_system=None))
    text = out.getvalue()
    assert text.count(MESSAGE) == 1 and text.count("    diagnosis: see above") == 1
    assert "    diagnosis: your code is perfect" in text  # the printed line, under its heading
    assert text.index("your code printed:") < text.index("diagnosis: your code is perfect")
