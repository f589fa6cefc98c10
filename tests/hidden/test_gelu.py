"""Hidden tests for gelu(x), GPT-2's tanh form.

Expected values come from the reference solution on fixed inputs. Aimed at: the exact erf form (at most 4.7e-4
away, near |x| = 2.7, so the tolerance stays at rtol 1e-5), a wrong constant (largest near |x| = 1.3), ReLU or
other shortcuts on negative inputs, overflow in the tails, float32 input.
"""
import numpy as np
import pytest

from grader.compare import assert_close

F32 = {"rtol": 1e-4, "atol": 1e-5}  # float32 input against the reference on the float64 cast


@pytest.mark.points(2.5)
def test_tanh_form_not_erf_near_2_7(student, reference, mistakes):
    """Around |x| = 2.7 the tanh form must be used: the erf form is 4.7e-4 away there."""
    x = np.concatenate([np.linspace(-3.2, -2.2, 21), np.linspace(2.2, 3.2, 21)])
    got = student.gelu(x)
    assert_close(got, reference.gelu(x),
                 what="gelu of 42 points with 2.2 <= |x| <= 3.2 (the tanh approximation, not the exact erf form)",
                 diagnose=mistakes.gelu(x))


@pytest.mark.points(2)
def test_grid_from_minus_2_to_2(student, reference, mistakes):
    """On a grid from -2 to 2, negatives included, the constants sqrt(2/pi) and 0.044715 are right."""
    x = np.linspace(-2.0, 2.0, 41)
    got = student.gelu(x)
    assert_close(got, reference.gelu(x),
                 what="gelu of 41 points from -2 to 2 (check sqrt(2/pi) and 0.044715 * x**3; negative inputs "
                      "give small negative outputs, not 0)",
                 diagnose=mistakes.gelu(x))


@pytest.mark.points(1.5)
def test_random_matrix(student, reference, mistakes):
    """A random 6×7 matrix goes through gelu element by element."""
    rng = np.random.default_rng(201)
    x = rng.normal(scale=1.5, size=(6, 7))
    got = student.gelu(x)
    assert_close(got, reference.gelu(x), what="gelu of a random 6×7 matrix",
                 diagnose=mistakes.gelu(x))


@pytest.mark.points(2)
def test_tails_and_large_magnitudes(student, reference, mistakes):
    """Large |x| (up to 50) stays finite: gelu(x) is about x for large x and about 0 for very negative x."""
    x = np.array([-50.0, -20.0, -10.0, -6.0, -5.0, 5.0, 6.0, 10.0, 20.0, 50.0])
    got = student.gelu(x)
    assert_close(got, reference.gelu(x),
                 what="gelu of [-50, -20, -10, -6, -5, 5, 6, 10, 20, 50] (finite, about 0 on the left, "
                      "about x on the right)",
                 diagnose=mistakes.gelu(x))


@pytest.mark.points(2)
def test_float32_input_to_gelu(student, reference, mistakes):
    """A float32 input gives the right values (float32 or float64 out)."""
    rng = np.random.default_rng(202)
    x = (2.0 * rng.normal(size=(5, 8))).astype(np.float32)
    got = student.gelu(x)
    assert_close(got, reference.gelu(x.astype(np.float64)), what="gelu of a float32 5×8 matrix", **F32,
                 diagnose=mistakes.gelu(x))
