"""Hidden tests for layernorm(x, gamma=None, beta=None, eps=1e-5).

Expected values come from the reference solution (the `reference` fixture) on fixed inputs. Each test aims at
one usual mistake: eps outside the square root (tiny-variance rows, eps = 0.1), a dropped eps (constant row),
gamma/beta ignored, the wrong axis (n != d), a missing mean subtraction (rows far from 0), float32 input,
an input changed in place; and the course's case "a row scaled by 10".
"""
import numpy as np
import pytest

from grader.compare import assert_close
from public.toy import H5, LN_H5

F32 = {"rtol": 1e-4, "atol": 1e-5}  # float32 input against the reference on the float64 cast
COURSE = {"rtol": 0.0, "atol": 1e-3}  # the course prints three decimals


@pytest.mark.points(1.5)
def test_course_layernorm_of_h5(student, mistakes):
    """LayerNorm of the course's h_5 for ␣the is its u'_5 = [-1.102, 0.964, -0.892, 1.030]."""
    got = student.layernorm(H5)
    assert_close(got, LN_H5, what="layernorm of the course's h_5 = [-1.239, 0.911, -1.021, 0.980] "
                                  "(the course's u'_5, to 3 decimals)", **COURSE,
                 diagnose=mistakes.layernorm(H5))


@pytest.mark.points(1.5)
def test_row_times_10_changes_nothing(student, reference, mistakes):
    """Scaling one row by 10 leaves that row's output unchanged (up to eps) and every other row unchanged."""
    rng = np.random.default_rng(101)
    x = rng.normal(size=(4, 6))
    x10 = x.copy()
    x10[2] *= 10.0
    got = student.layernorm(x10)
    assert_close(got, reference.layernorm(x), rtol=0.0, atol=1e-4,
                 what="layernorm of a 4×6 input whose row 2 was multiplied by 10 (every row, row 2 included, "
                      "should come out as before the scaling)",
                 diagnose=mistakes.layernorm(x10))
    assert_close(got, reference.layernorm(x10), what="layernorm of a 4×6 input whose row 2 was multiplied by 10",
                 diagnose=mistakes.layernorm(x10))


@pytest.mark.points(1)
def test_eps_0_1_on_random_rows(student, reference, mistakes):
    """With eps = 0.1 on 3 random rows of 8, eps must sit inside the square root."""
    rng = np.random.default_rng(102)
    x = rng.normal(scale=0.5, size=(3, 8))
    got = student.layernorm(x, eps=0.1)
    assert_close(got, reference.layernorm(x, eps=0.1),
                 what="layernorm of a 3×8 input with eps = 0.1 (eps inside the square root)",
                 diagnose=mistakes.layernorm(x, eps=0.1))


@pytest.mark.points(2)
def test_tiny_variance_rows_and_a_constant_row(student, reference, mistakes):
    """Rows with standard deviation 0.01 and a constant row: sqrt(var + eps) matters, a constant row gives 0."""
    rng = np.random.default_rng(103)
    x = np.vstack([5.0 + 0.01 * rng.normal(size=8),
                   -2.0 + 0.01 * rng.normal(size=8),
                   0.005 * rng.normal(size=8),
                   np.full(8, 2.5)])
    got = student.layernorm(x)
    assert_close(got, reference.layernorm(x),
                 what="layernorm of 4 rows of 8 numbers, three with standard deviation about 0.01 and one "
                      "constant (eps inside the square root keeps them finite and exact; a constant row gives 0)",
                 diagnose=mistakes.layernorm(x))


@pytest.mark.points(2.5)
def test_random_gamma_and_beta_on_a_batch(student, reference, mistakes):
    """Random gamma and beta scale and shift every normalised row of a (2, 5, 6) batch, column by column."""
    rng = np.random.default_rng(104)
    x = rng.normal(size=(2, 5, 6))
    gamma, beta = rng.normal(size=6), rng.normal(size=6)
    got = student.layernorm(x, gamma, beta)
    assert_close(got, reference.layernorm(x, gamma, beta),
                 what="layernorm of a 2×5×6 input with random gamma and beta (normalise along the last axis, "
                      "then gamma * normalised + beta)",
                 diagnose=mistakes.layernorm(x, gamma, beta))


@pytest.mark.points(1.5)
def test_rows_far_from_zero_tokens_not_width(student, reference, mistakes):
    """A 3×7 input with values around 3 is normalised per row (over 7 numbers), not per column (over 3)."""
    rng = np.random.default_rng(105)
    x = 3.0 + 2.0 * rng.normal(size=(3, 7))
    got = student.layernorm(x)
    assert_close(got, reference.layernorm(x),
                 what="layernorm of a 3×7 input with values around 3 (subtract each row's mean; normalise over "
                      "the last axis, not over the tokens)",
                 diagnose=mistakes.layernorm(x))


@pytest.mark.points(1.5)
def test_float32_input_with_float32_gamma_and_beta(student, reference, mistakes):
    """A float32 input with float32 gamma and beta gives the right values (float32 or float64 out)."""
    rng = np.random.default_rng(107)
    x = (1.0 + 3.0 * rng.normal(size=(4, 16))).astype(np.float32)
    gamma = rng.normal(size=16).astype(np.float32)
    beta = rng.normal(size=16).astype(np.float32)
    got = student.layernorm(x, gamma, beta)
    expected = reference.layernorm(x.astype(np.float64), gamma.astype(np.float64), beta.astype(np.float64))
    assert_close(got, expected, what="layernorm of a float32 4×16 input with float32 gamma and beta", **F32,
                 diagnose=mistakes.layernorm(x, gamma, beta))


@pytest.mark.points(1.5)
def test_input_is_not_modified(student, reference, mistakes):
    """layernorm returns a new array and leaves x, gamma and beta as they were."""
    rng = np.random.default_rng(108)
    x = rng.normal(size=(3, 5))
    gamma, beta = rng.normal(size=5), rng.normal(size=5)
    got, args_after, _ = student.call_with_inputs("layernorm", x, gamma, beta)
    assert_close(got, reference.layernorm(x, gamma, beta), what="layernorm of a 3×5 input with gamma and beta",
                 diagnose=mistakes.layernorm(x, gamma, beta))
    assert_close(args_after[0], x, rtol=0.0, atol=0.0,
                 what="the input x after calling layernorm (it must not be changed in place)")
    assert_close(args_after[1], gamma, rtol=0.0, atol=0.0,
                 what="gamma after calling layernorm (it must not be changed in place)")
    assert_close(args_after[2], beta, rtol=0.0, atol=0.0,
                 what="beta after calling layernorm (it must not be changed in place)")
