"""`grade release` tells the course's author which catalogued mistakes a test's inputs cannot tell
apart (issue 28): such a test names none of them, so another test's inputs must."""

from __future__ import annotations

import re

from conftest import THE_BLOCK, grade

ONE_HEAD = (
    "mistakes that coincide: tests/the-block/public/test_attention.py::"
    "test_toy_attention_gives_the_course_a5: attention.no_scale = attention.scale_n_heads "
    "(the same output of attention() on its inputs: it cannot tell them apart)"
)


def test_release_names_each_test_whose_inputs_give_two_mistakes_of_its_problem_the_same_output(
    tmp_path,
):
    code, output = grade(
        "release", "-a", THE_BLOCK, "--out", tmp_path / "release", "--nbgrader-dir", tmp_path / "nb"
    )
    assert code == 0, output
    assert ONE_HEAD in output  # one head: sqrt(n_heads) = 1, no scale at all
    lines = [line for line in output.splitlines() if line.startswith("mistakes that coincide: ")]
    assert any("tests/the-block/hidden/" in line for line in lines)  # the hidden suites' inputs too
    for line in lines:
        test, group = re.match(
            r"mistakes that coincide: (\S+): (.*) \(the same output", line
        ).groups()
        assert test.startswith(("tests/the-block/public/", "tests/the-block/hidden/")), line
        assert len(group.split(" = ")) > 1, line
