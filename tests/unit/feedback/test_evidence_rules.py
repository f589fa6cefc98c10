"""The rules by which a problem's failed checks name a known mistake (issue 28), on a small
catalogue: a mistake is named only when it explains every failed check of its problem, at least one
input tells it apart from the right answer and from every other mistake by far more than the
tolerance, and, for a component's mistake, only where the component's own tests found it.
test_diagnosis_evidence.py measures the same rules on a class of submissions."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import write_tree

from grader.errors import StudentError
from grader.feedback.compare import assert_close, raising
from grader.feedback.mismatch import FAR, Mismatch
from grader.feedback.mistakes import Catalogue
from grader.grading import verdicts as grading

TOL = 1e-3  # every check here: atol 1e-3, rtol 0
CATALOGUE = """
import numpy as np
from grader.feedback.mistakes import mistake


def five(x):
    if x.size != 5:
        raise ValueError("five numbers only")
    return x + 0.503


def wide(x):
    if x.ndim != 1:
        raise ValueError("one row only")
    return x + 0.5


MISTAKES = [
    mistake("norm.near", "this matches a norm a few thousandths off", norm=lambda x: x + 0.003),
    mistake("norm.far", "this matches a norm half a unit off", norm=wide,
            block=lambda x: 2 * x + 0.5),
    mistake("norm.twin", "this matches a norm half a unit off on 2 numbers, a quarter on more",
            norm=lambda x: x + (0.5 if x.size == 2 else 0.25)),
    mistake("norm.close", "this matches a norm 0.503 off, on 5 numbers", norm=five),
    mistake("block.own", "this matches a block of its own", block=lambda x: 2 * x + 0.25),
]
"""
PROBLEMS = {"norm": "norm", "block": "block"}


@pytest.fixture
def catalogue(tmp_path: Path) -> Catalogue:
    write_tree(tmp_path, {"mistakes.py": CATALOGUE})
    return Catalogue(None, tmp_path / "mistakes.py", (tmp_path,), PROBLEMS)


def right(function: str, x: np.ndarray) -> np.ndarray:
    return x if function == "norm" else 2 * x


def check(catalogue: Catalogue, function: str, x: np.ndarray, got) -> BaseException | None:
    """A value test of the student's ``function(x)``, as a suite writes it; what it raised, or
    None."""
    try:
        with raising(getattr(catalogue, function)(x)):
            value = got(x) if callable(got) else got
        assert_close(
            value,
            right(function, x),
            what=f"{function} of x",
            rtol=0.0,
            atol=TOL,
            diagnose=getattr(catalogue, function)(x),
        )
    except (Mismatch, StudentError) as err:
        return err
    return None


def named(
    catalogue: Catalogue,
    checks: dict[str, tuple[str, np.ndarray, object]],
    students_norm: bool = False,
) -> dict[str, str]:
    """Each check run as one test of its problem, in order, graded together: test -> the mistake its
    result names ("" for none). The block uses the norm: the course's, as grading runs it, or with
    ``students_norm`` the student's own, as grade check does."""
    tests = {
        name: grading.Test(
            name,
            function,
            function,
            1.0,
            "visible",
            True,
            False,
            ("norm",) if function == "block" else (),
            ("norm",) if function == "block" and not students_norm else (),
        )
        for name, (function, _, _) in checks.items()
    }
    verdicts = grading.Verdicts(tests)
    for name, (function, x, got) in checks.items():
        verdicts.record(name, check(catalogue, function, x, got), "")
    return {r.name: r.feedback.get("diagnosis", "") for r in verdicts.results(list(checks), "")}


ROW = np.array([1.0, 2.0, 3.0])
ROWS = np.array([[1.0, 2.0], [3.0, 4.0]])
FIVE = np.arange(5.0)


def test_a_mistake_a_few_tolerances_from_the_right_answer_is_not_named(catalogue):
    """norm.near is 3 tolerances from the right answer: the student's value matches it, and it fails
    the check, but it could as well be any slip of that size. norm.far, 500 tolerances away, is
    named."""
    assert 0.003 < FAR * TOL < 0.5
    assert named(catalogue, {"near": ("norm", ROW, ROW + 0.003)}) == {"near": ""}
    assert named(catalogue, {"far": ("norm", ROW, ROW + 0.5)}) == {"far": "norm.far"}


def test_an_input_that_gives_two_mistakes_the_same_output_names_neither(catalogue):
    """On 2 numbers norm.far and norm.twin both give x + 0.5: that input cannot tell them apart, so
    it names neither; on 2 rows norm.far raises and norm.twin gives x + 0.25, which names it. On 5
    numbers norm.far's x + 0.5 and norm.close's x + 0.503 are 3 tolerances apart: a value within the
    tolerance of the one could be a slip from the other, and names neither."""
    assert named(catalogue, {"pair": ("norm", ROW[:2], ROW[:2] + 0.5)}) == {"pair": ""}
    assert named(catalogue, {"five": ("norm", FIVE, FIVE + 0.5)}) == {"five": ""}
    assert named(catalogue, {"rows": ("norm", ROWS, ROWS + 0.25)}) == {"rows": "norm.twin"}


def test_a_mistake_is_named_only_where_it_explains_every_failed_check_of_its_problem(catalogue):
    both = {"one": ("norm", ROW, ROW + 0.5), "two": ("norm", ROW[:2], ROW[:2] + 0.125)}
    assert named(catalogue, both) == {"one": "", "two": ""}
    both["two"] = ("norm", ROW[:2], ROW[:2])  # passes: norm.far explains every failure
    assert named(catalogue, {**both, "three": ("norm", 2 * ROW, 2 * ROW + 0.5)}) == {
        "one": "norm.far",
        "two": "",
        "three": "norm.far",
    }


def test_an_exception_is_explained_only_by_the_mistakes_that_raise_there_too(catalogue):
    """norm.far raises on a 2-row input: a norm that raises there and is half a unit off on a row is
    norm.far; a norm that raises on one row (where norm.far does not) is named nothing."""

    def far(x):
        if x.ndim != 1:
            raise StudentError("raised", "norm() raised ValueError")
        return x + 0.5

    def raises(x):
        raise StudentError("raised", "norm() raised ValueError")

    checks = {"row": ("norm", ROW, far), "rows": ("norm", ROWS, far)}
    assert named(catalogue, checks) == {"row": "norm.far", "rows": ""}
    assert named(
        catalogue, {"row": ("norm", ROW, ROW + 0.5), "again": ("norm", 2 * ROW, raises)}
    ) == {"row": "", "again": ""}


def test_a_components_mistake_is_named_in_another_problem_only_where_its_own_tests_found_it(
    catalogue,
):
    """The block's output matches norm.far's block (2x + 0.5) and nothing of the block's own: while
    the norm's own tests pass, it is named nowhere (the block may make a mistake of its own that
    looks like it); once they find norm.far, the block's test names it too. A block's own mistake is
    named as usual."""
    block = ("block", ROW, 2 * ROW + 0.5)
    assert named(catalogue, {"norm": ("norm", ROWS, ROWS), "block": block}) == {
        "block": "",
        "norm": "",
    }
    assert named(catalogue, {"norm": ("norm", ROW, ROW + 0.5), "block": block}) == {
        "block": "norm.far",
        "norm": "norm.far",
    }
    assert named(catalogue, {"block": ("block", ROW, 2 * ROW + 0.25)}) == {"block": "block.own"}


def test_a_test_run_with_a_failing_component_of_the_students_names_nothing(catalogue):
    """grade check runs the block with the student's own norm: when that fails its own tests, the
    block's output may be only the norm's fault, and the block's own mistake is not named there."""
    checks = {"norm": ("norm", ROW, ROW + 0.5), "block": ("block", ROW, 2 * ROW + 0.25)}
    assert named(catalogue, checks, students_norm=True) == {"block": "", "norm": "norm.far"}
    assert named(catalogue, checks) == {
        "block": "block.own",
        "norm": "norm.far",
    }  # with the course's norm
