"""Hidden tests for layernorm(x, gamma=None, beta=None, eps=1e-5).

Value tests compare with the reference solution (the `reference` fixture) on fixed inputs, each
aimed at one usual mistake: eps outside the square root (eps = 0.1), the default eps or ddof=1 (rows
of standard deviation 0.01, where sqrt(var + eps) is far from the standard deviation), a dropped eps
(a constant row), gamma/beta ignored, the wrong axis (n != d, and n = d: an axis picked from the
shape), a missing mean subtraction (rows far from 0), float32 input, float32 arithmetic inside a
float64 computation (the one F64 test); and the course's u'_5.

Property tests (`@pytest.mark.property`) check the student's own outputs against each other: a row
scaled by 10, a constant added to a row, rows normalised on their own, the input left as it was,
float32 input to float32 precision (float32 or float64 out).
A numeric slip (ddof=1, eps = 1e-6) keeps them.
"""

import numpy as np
import pytest
from public.toy import COURSE, F64, H5, LN_H5

from grader.feedback.compare import assert_array, assert_attempt, assert_close, assert_close_own


@pytest.mark.points(1)
def test_course_layernorm_of_h5(student, mistakes):
    """LayerNorm of the course's h_5 for ␣the is its u'_5 = [-1.102, 0.964, -0.892, 1.030]."""
    got = student.layernorm(H5)
    assert_close(
        got,
        LN_H5,
        what="layernorm of the course's h_5 = [-1.239, 0.911, -1.021, 0.980] "
        "(the course's u'_5, to 3 decimals)",
        **COURSE,
        diagnose=mistakes.layernorm(H5),
    )


@pytest.mark.points(1)
def test_eps_0_1_on_random_rows(student, reference, mistakes):
    """With eps = 0.1 on 3 random rows of 8, eps must sit inside the square root."""
    rng = np.random.default_rng(102)
    x = rng.normal(scale=0.5, size=(3, 8))
    got = student.layernorm(x, eps=0.1)
    assert_close(
        got,
        reference.layernorm(x, eps=0.1),
        what="layernorm of a 3×8 input with eps = 0.1 (eps inside the square root)",
        diagnose=mistakes.layernorm(x, eps=0.1),
    )


@pytest.mark.points(1)
def test_tiny_variance_rows_and_a_constant_row(student, reference, mistakes):
    """Rows with standard deviation 0.01 and a constant row: the default eps = 1e-5 inside sqrt(var
    + eps) matters there, and a constant row gives 0."""
    rng = np.random.default_rng(103)
    x = np.vstack(
        [
            5.0 + 0.01 * rng.normal(size=8),
            -2.0 + 0.01 * rng.normal(size=8),
            0.005 * rng.normal(size=8),
            np.full(8, 2.5),
        ]
    )
    got = student.layernorm(x)
    assert_close(
        got,
        reference.layernorm(x),
        what="layernorm of 4 rows of 8 numbers, three with standard deviation about 0.01 and one "
        "constant (the default eps = 1e-5, inside the square root; a constant row gives 0)",
        diagnose=mistakes.layernorm(x),
    )


@pytest.mark.points(1)
def test_square_rows_of_a_batch_each_on_their_own(student, reference, mistakes):
    """A (2, 7, 7) batch: 7 tokens of width 7, values around 2 on different scales. Where n = d only
    the axis tells the tokens from the features: a layernorm that picks its axis from the shape
    normalises the tokens here."""
    rng = np.random.default_rng(112)
    x = 2.0 + rng.normal(size=(2, 7, 7)) * rng.uniform(0.5, 3.0, size=(2, 7, 1))
    got = student.layernorm(x)
    assert_close(
        got,
        reference.layernorm(x),
        what="layernorm of a 2×7×7 batch (7 tokens of width 7: each row over the last axis, "
        "never the tokens)",
        diagnose=mistakes.layernorm(x),
    )


@pytest.mark.points(1)
def test_random_gamma_and_beta_on_a_batch(student, reference, mistakes):
    """Random gamma and beta scale and shift every normalised row of a (2, 5, 6) batch, column by
    column."""
    rng = np.random.default_rng(104)
    x = rng.normal(size=(2, 5, 6))
    gamma, beta = rng.normal(size=6), rng.normal(size=6)
    got = student.layernorm(x, gamma, beta)
    assert_close(
        got,
        reference.layernorm(x, gamma, beta),
        what="layernorm of a 2×5×6 input with random gamma and beta (normalise along the last "
        "axis, "
        "then gamma * normalised + beta)",
        diagnose=mistakes.layernorm(x, gamma, beta),
    )


@pytest.mark.points(1)
def test_rows_far_from_zero_tokens_not_width(student, reference, mistakes):
    """A 3×7 input with values around 3 is normalised per row (over 7 numbers), not per column (over
    3)."""
    rng = np.random.default_rng(105)
    x = 3.0 + 2.0 * rng.normal(size=(3, 7))
    got = student.layernorm(x)
    assert_close(
        got,
        reference.layernorm(x),
        what="layernorm of a 3×7 input with values around 3 (subtract each row's mean; normalise "
        "over "
        "the last axis, not over the tokens)",
        diagnose=mistakes.layernorm(x),
    )


@pytest.mark.points(1)
def test_float32_input_with_float32_gamma_and_beta(student, reference, mistakes):
    """A float32 input with float32 gamma and beta gives the right values (float32 or float64
    out)."""
    rng = np.random.default_rng(107)
    x = (1.0 + 3.0 * rng.normal(size=(4, 16))).astype(np.float32)
    gamma = rng.normal(size=16).astype(np.float32)
    beta = rng.normal(size=16).astype(np.float32)
    got = student.layernorm(x, gamma, beta)
    expected = reference.layernorm(
        x.astype(np.float64), gamma.astype(np.float64), beta.astype(np.float64)
    )
    assert_close(
        got,
        expected,
        what="layernorm of a float32 4×16 input with float32 gamma and beta",
        diagnose=mistakes.layernorm(x, gamma, beta),
    )


@pytest.mark.points(1)
def test_layernorm_float64_input_in_float64(student, reference, mistakes):
    """A float64 input is normalised in float64 throughout: to 1e-10, not float32's 1e-7."""
    rng = np.random.default_rng(109)
    x = rng.normal(size=(6, 10))
    got = student.layernorm(x)
    assert_close(
        got,
        reference.layernorm(x),
        **F64,
        what="layernorm of a float64 6×10 input, to 1e-10 of its largest value (no float32 inside)",
        diagnose=mistakes.layernorm(x),
    )


# Properties, on the student's own outputs.


@pytest.mark.property
@pytest.mark.points(1)
def test_row_times_10_changes_nothing(student, reference):
    """Scaling one row by 10 leaves every output row as it was (up to eps), the scaled row
    included."""
    rng = np.random.default_rng(101)
    x = 3.0 * rng.normal(size=(4, 6))
    x10 = x.copy()
    x10[2] *= 10.0
    what = (
        "layernorm of a 4×6 input whose row 2 was multiplied by 10, against layernorm of the input "
        "(every "
        "row, row 2 included, comes out as before the scaling)"
    )
    own = student.layernorm(x)
    assert_attempt(own, reference.layernorm(x), what=what)
    assert_close_own(student.layernorm(x10), own, rtol=1e-4, what=what)


@pytest.mark.property
@pytest.mark.points(1)
def test_a_constant_added_to_a_row_changes_nothing(student, reference):
    """Adding a constant to each row (a different one per row) leaves the output as it was: the mean
    goes."""
    rng = np.random.default_rng(106)
    x = 3.0 * rng.normal(size=(5, 8))
    shifted = x + np.array([[3.0], [-2.0], [0.5], [10.0], [-7.5]])
    what = (
        "layernorm of a 5×8 input with a constant added to each row, against layernorm of the "
        "input "
        "(subtracting each row's mean removes the constant)"
    )
    own = student.layernorm(x)
    assert_attempt(own, reference.layernorm(x), what=what)
    assert_close_own(student.layernorm(shifted), own, rtol=1e-6, what=what)


@pytest.mark.property
@pytest.mark.points(1)
def test_each_token_row_comes_out_as_it_does_alone(student, reference):
    """Each token's row of a 7×12 input comes out as that row gives alone (as a 1×12 input)."""
    rng = np.random.default_rng(110)
    x = 3.0 * rng.normal(size=(7, 12))
    what = (
        "layernorm of a 7×12 input, row by row, against layernorm of each row alone (a 1×12 input)"
    )
    whole = assert_array(student.layernorm(x), x.shape, what=what)
    assert_attempt(whole, reference.layernorm(x), what=what)
    for i in (0, 3, 6):
        assert_close_own(whole[i : i + 1], student.layernorm(x[i : i + 1]), what=what)


@pytest.mark.property
@pytest.mark.points(1)
def test_layernorm_leaves_its_inputs_unchanged(student, reference):
    """layernorm returns a new array and leaves x, gamma and beta as they were."""
    rng = np.random.default_rng(108)
    x = 3.0 * rng.normal(size=(3, 5))
    gamma, beta = rng.normal(size=5), rng.normal(size=5)
    got, args_after, _ = student.call_with_inputs("layernorm", x, gamma, beta)
    assert_attempt(
        got,
        reference.layernorm(x, gamma, beta),
        what="layernorm of a 3×5 input with gamma and beta, whose inputs must stay as they were",
    )
    for name, before, after in zip(("x", "gamma", "beta"), (x, gamma, beta), args_after):
        assert_close(
            after,
            before,
            rtol=0.0,
            atol=0.0,
            what=f"{name} after calling layernorm (it must not be changed in place)",
        )


@pytest.mark.property
@pytest.mark.points(1)
def test_layernorm_float32_input_keeps_float32_precision(student, reference):
    """A float32 input gives a float array (float32, or float64: NumPy 2 promotes float32 times a
    float64 scalar, NumPy 1 did not, and one code gets one grade on every install) with the values
    that the same input gives in float64, to float32 precision."""
    rng = np.random.default_rng(111)
    x = 3.0 * rng.normal(size=(4, 8))
    what = (
        "layernorm of a float32 4×8 input (a float32 or float64 array, the values float64 input "
        "gives)"
    )
    got = assert_array(
        student.layernorm(x.astype(np.float32)), x.shape, (np.float32, np.float64), what=what
    )
    own = student.layernorm(x)
    assert_attempt(own, reference.layernorm(x), what=what)
    assert_close_own(got, own, rtol=1e-4, what=what)
