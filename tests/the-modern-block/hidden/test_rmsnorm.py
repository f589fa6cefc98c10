"""Hidden tests for rmsnorm(x, gain=None, eps=1e-6).

Expected values come from the reference. Aimed at: the mean subtracted (LayerNorm in disguise), eps
left out or outside the root, the wrong axis (a square input too), gain ignored; the course's row×10
check; float32 input to float32 precision (float32 or float64 out), inputs left alone (properties,
on the student's own outputs).
"""

import numpy as np
import pytest
from public.toy import X

from grader.feedback.compare import assert_array, assert_attempt, assert_close, assert_close_own


@pytest.mark.points(1.5)
def test_rmsnorm_keeps_the_mean_of_a_shifted_row(student, reference, mistakes):
    """Rows far from zero mean: RMSNorm divides by the root mean square and subtracts nothing."""
    x = np.array(X) + np.array([[3.0], [-2.0], [0.5], [10.0], [-7.0]])
    assert_close(
        student.rmsnorm(x),
        reference.rmsnorm(x),
        what="rmsnorm of the course's x with a constant added to each row (RMSNorm subtracts no "
        "mean)",
        diagnose=mistakes.rmsnorm(x),
    )


@pytest.mark.points(1)
def test_rmsnorm_square_input_each_row_on_its_own(student, reference, mistakes):
    """6 tokens of width 6 on different scales: where n = d only the axis tells the tokens from the
    features (an rmsnorm that picks its axis from the shape takes the tokens here)."""
    rng = np.random.default_rng(305)
    x = 1.0 + rng.normal(size=(6, 6)) * rng.uniform(0.5, 4.0, size=(6, 1))
    assert_close(
        student.rmsnorm(x),
        reference.rmsnorm(x),
        what="rmsnorm of a 6×6 input (each row over the last axis, even when there are as "
        "many tokens as features)",
        diagnose=mistakes.rmsnorm(x),
    )


@pytest.mark.points(1)
def test_rmsnorm_gain_on_a_batch(student, reference, mistakes):
    """A (3, 4, 6) batch with a gain: each row over the last axis, scaled per column."""
    rng = np.random.default_rng(301)
    x, gain = 2.0 * rng.normal(size=(3, 4, 6)), 1.0 + 0.5 * rng.normal(size=6)
    assert_close(
        student.rmsnorm(x, gain),
        reference.rmsnorm(x, gain),
        what="rmsnorm of a 3×4×6 batch with a gain (each row over the last axis)",
        diagnose=mistakes.rmsnorm(x, gain),
    )


@pytest.mark.points(1)
def test_rmsnorm_small_rows_show_eps(student, reference, mistakes):
    """Rows of mean square 1e-7 to 1e-5, and zeros: eps = 1e-6 inside the root decides the
    output."""
    x = np.array([[3e-4, -3e-4, 3e-4, -3e-4], [1e-3, 2e-3, -3e-3, 4e-3], [0.0, 0.0, 0.0, 0.0]])
    assert_close(
        student.rmsnorm(x),
        reference.rmsnorm(x),
        what="rmsnorm of rows of mean square 9e-8, 7.5e-6 and 0 "
        "(eps = 1e-6 inside the square root)",
        diagnose=mistakes.rmsnorm(x),
    )


@pytest.mark.property
@pytest.mark.points(1)
def test_rmsnorm_row_times_10_changes_nothing(student, reference):
    """The course's check: the course's x with its row 5 times 10 gives, row for row, what x
    gives."""
    x10 = np.array(X)
    x10[4] *= 10.0
    what = (
        "rmsnorm of the course's x with row 5 multiplied by 10, against rmsnorm of x (each row's "
        "scale goes)"
    )
    own = student.rmsnorm(X)
    assert_attempt(own, reference.rmsnorm(X), what=what)
    assert_close_own(student.rmsnorm(x10), own, rtol=1e-4, what=what)


@pytest.mark.property
@pytest.mark.points(1)
def test_rmsnorm_each_token_row_comes_out_as_it_does_alone(student, reference):
    """Each token's row of a 7×12 input comes out as that row gives alone (a 1×12 input)."""
    x = 3.0 * np.random.default_rng(302).normal(size=(7, 12))
    what = "rmsnorm of a 7×12 input, row by row, against rmsnorm of each row alone (a 1×12 input)"
    whole = assert_array(student.rmsnorm(x), x.shape, what=what)
    assert_attempt(whole, reference.rmsnorm(x), what=what)
    for i in (0, 3, 6):
        assert_close_own(whole[i : i + 1], student.rmsnorm(x[i : i + 1]), what=what)


@pytest.mark.property
@pytest.mark.points(1)
def test_rmsnorm_leaves_its_inputs_unchanged(student, reference):
    """rmsnorm returns a new array and leaves x and gain as they were."""
    rng = np.random.default_rng(303)
    x, gain = 3.0 * rng.normal(size=(3, 5)), rng.normal(size=5)
    got, args_after, _ = student.call_with_inputs("rmsnorm", x, gain)
    assert_attempt(
        got,
        reference.rmsnorm(x, gain),
        what="rmsnorm of a 3×5 input with a gain, whose inputs must stay as they were",
    )
    for name, before, after in zip(("x", "gain"), (x, gain), args_after):
        assert_close(
            after,
            before,
            rtol=0.0,
            atol=0.0,
            what=f"{name} after calling rmsnorm (it must not be changed)",
        )


@pytest.mark.property
@pytest.mark.points(1)
def test_rmsnorm_float32_input_to_float32_precision(student, reference):
    """float32 in gives a float array with the values float64 gives, to float32 precision."""
    x = np.random.default_rng(304).normal(size=(4, 8))
    what = (
        "rmsnorm of a float32 4×8 input (a float32 or float64 array, the values float64 input "
        "gives)"
    )
    got = assert_array(
        student.rmsnorm(x.astype(np.float32)), x.shape, (np.float32, np.float64), what=what
    )
    own = student.rmsnorm(x)
    assert_attempt(own, reference.rmsnorm(x), what=what)
    assert_close_own(got, own, rtol=1e-4, what=what)
