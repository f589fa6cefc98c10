"""The proxy (grader.sandbox.proxy): what a suite gets back from a call is plain data the worker's
code could not bend into an error of the test itself."""

from __future__ import annotations

import numpy as np
from mutants import faulty

from grader.errors import StudentError

# The arguments "as the student's function left them" are the worker's list, which the student's
# code can reach
# (the worker's frame) and empty: a suite reading args_after[0] then raised IndexError, an error of
# the test
# itself, so the whole submission was a grader error ("the grader failed, not your code"), never
# exported, on
# every rerun: a weak submission hidden as the grader's failure.
EMPTIES_ITS_ARGUMENTS = """
import sys


def gelu(x):
    frame = sys._getframe(1)
    if frame.f_code.co_name == "_call":
        frame.f_locals["args"].clear()
        frame.f_locals["kwargs"]["x"] = 1
    return _reference_gelu(x)


def _reference_gelu("""


def test_the_arguments_after_a_call_are_those_it_was_given(course, tmp_path, limits):
    from grader.sandbox.client import Worker
    from grader.sandbox.proxy import Student

    folder = faulty(tmp_path, "empties", {"gelu": [("\ndef gelu(", EMPTIES_ITS_ARGUMENTS)]})
    x = np.linspace(-2.0, 2.0, 12).reshape(3, 4)
    with Worker(folder, limits, modules=course.modules) as worker:
        student = Student(worker, course.functions, limits)
        student.start_test(
            "tests/the-block/hidden/test_gelu.py::test_gelu_leaves_its_input_unchanged",
            public=False,
        )
        try:
            _, args_after, kwargs_after = student.call_with_inputs("gelu", x)
        except StudentError as err:  # the student's error: its test fails, nothing more
            assert err.kind == "bad_type", err.kind
            return
    assert len(args_after) == 1 and kwargs_after == {}, (args_after, kwargs_after)
