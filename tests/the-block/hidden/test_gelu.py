"""Hidden tests for gelu(x), GPT-2's tanh form.

Value tests compare with the reference solution on fixed inputs. Aimed at: the exact erf form (at
most 4.7e-4 away, near |x| = 2.7, so the tolerance stays at rtol 1e-5), a wrong constant (largest
near |x| = 1.3), ReLU or other shortcuts on negative inputs, overflow in the tails, float32 input,
float32 arithmetic inside a float64 computation (the one F64 test).

Property tests (`@pytest.mark.property`) check the student's own outputs: gelu(x) - gelu(-x) = x
(true of the tanh form whatever its constants), elementwise on any shape, the input left as it was,
float32 input to float32 precision (float32 or float64 out).
"""

import numpy as np
import pytest
from public.toy import F64

from grader.feedback.compare import assert_array, assert_attempt, assert_close, assert_close_own


@pytest.mark.points(2)
def test_tanh_form_not_erf_near_2_7(student, reference, mistakes):
    """Around |x| = 2.7 the tanh form must be used: the erf form is 4.7e-4 away there."""
    x = np.concatenate([np.linspace(-3.2, -2.2, 21), np.linspace(2.2, 3.2, 21)])
    got = student.gelu(x)
    assert_close(
        got,
        reference.gelu(x),
        what="gelu of 42 points with 2.2 <= |x| <= 3.2 (the tanh approximation, not the exact erf "
        "form)",
        diagnose=mistakes.gelu(x),
    )


@pytest.mark.points(1.5)
def test_grid_from_minus_2_to_2(student, reference, mistakes):
    """On a grid from -2 to 2, negatives included, the constants sqrt(2/pi) and 0.044715 are
    right."""
    x = np.linspace(-2.0, 2.0, 41)
    got = student.gelu(x)
    assert_close(
        got,
        reference.gelu(x),
        what="gelu of 41 points from -2 to 2 (check sqrt(2/pi) and 0.044715 * x**3; negative "
        "inputs "
        "give small negative outputs, not 0)",
        diagnose=mistakes.gelu(x),
    )


@pytest.mark.points(1.5)
def test_tails_and_large_magnitudes(student, reference, mistakes):
    """Large |x| (up to 50) stays finite: gelu(x) is about x for large x and about 0 for very
    negative x."""
    x = np.array([-50.0, -20.0, -10.0, -6.0, -5.0, 5.0, 6.0, 10.0, 20.0, 50.0])
    got = student.gelu(x)
    assert_close(
        got,
        reference.gelu(x),
        what="gelu of [-50, -20, -10, -6, -5, 5, 6, 10, 20, 50] (finite, about 0 on the left, "
        "about x on the right)",
        diagnose=mistakes.gelu(x),
    )


@pytest.mark.points(0.5)
def test_float32_input_to_gelu(student, reference, mistakes):
    """A float32 input gives the right values (float32 or float64 out)."""
    rng = np.random.default_rng(202)
    x = (2.0 * rng.normal(size=(5, 8))).astype(np.float32)
    got = student.gelu(x)
    assert_close(
        got,
        reference.gelu(x.astype(np.float64)),
        what="gelu of a float32 5×8 matrix",
        diagnose=mistakes.gelu(x),
    )


@pytest.mark.points(0.5)
def test_gelu_float64_input_in_float64(student, reference, mistakes):
    """A float64 input goes through gelu in float64 throughout: to 1e-10, not float32's 1e-7."""
    rng = np.random.default_rng(203)
    x = 1.5 * rng.normal(size=(4, 9))
    got = student.gelu(x)
    assert_close(
        got,
        reference.gelu(x),
        **F64,
        what="gelu of a float64 4×9 matrix, to 1e-10 of its largest value (no float32 inside)",
        diagnose=mistakes.gelu(x),
    )


# Properties, on the student's own outputs.


@pytest.mark.property
@pytest.mark.points(1)
def test_gelu_x_minus_gelu_minus_x_is_x(student, reference):
    """0.5·x·(1 + t) - 0.5·(-x)·(1 - t) = x: gelu(x) - gelu(-x) gives back x, whatever the constants
    inside."""
    x = np.linspace(-3.0, 3.0, 25)
    what = (
        "gelu(x) - gelu(-x) for 25 points from -3 to 3 (it is x: the leading 0.5 and the odd tanh)"
    )
    plus = assert_array(student.gelu(x), x.shape, what=what)
    assert_attempt(plus, reference.gelu(x), what=what)
    minus = assert_array(student.gelu(-x), x.shape, what=what)
    assert_close(plus - minus, x, what=what)


@pytest.mark.property
@pytest.mark.points(1)
def test_any_shape_element_by_element(student, reference):
    """A (2, 3, 4) array gives, entry for entry, what its flat copy gives: gelu works element by
    element."""
    rng = np.random.default_rng(204)
    x = rng.normal(scale=2.0, size=(2, 3, 4))
    what = (
        "gelu of a 2×3×4 array against gelu of its 24 numbers as a flat array (elementwise, same "
        "shape out)"
    )
    got = assert_array(student.gelu(x), x.shape, what=what)
    assert_attempt(got, reference.gelu(x), what=what)
    assert_close_own(got.reshape(-1), student.gelu(x.reshape(-1)), what=what)


@pytest.mark.property
@pytest.mark.points(1)
def test_gelu_leaves_its_input_unchanged(student, reference):
    """gelu returns a new array and leaves x as it was."""
    rng = np.random.default_rng(205)
    x = 2.0 * rng.normal(size=(3, 7))
    got, args_after, _ = student.call_with_inputs("gelu", x)
    assert_attempt(
        got, reference.gelu(x), what="gelu of a 3×7 matrix, whose input must stay as it was"
    )
    assert_close(
        args_after[0],
        x,
        rtol=0.0,
        atol=0.0,
        what="x after calling gelu (it must not be changed in place)",
    )


@pytest.mark.property
@pytest.mark.points(1)
def test_gelu_float32_input_keeps_float32_precision(student, reference):
    """A float32 input gives a float array (float32, or float64: NumPy 2 promotes float32 times a
    float64 scalar such as np.sqrt(2 / np.pi), NumPy 1 did not, and one code gets one grade on every
    install) with the values that the same input gives in float64, to float32 precision."""
    rng = np.random.default_rng(206)
    x = rng.normal(scale=2.0, size=(3, 6))
    what = (
        "gelu of a float32 3×6 matrix (a float32 or float64 array, the values float64 input gives)"
    )
    got = assert_array(
        student.gelu(x.astype(np.float32)), x.shape, (np.float32, np.float64), what=what
    )
    own = student.gelu(x)
    assert_attempt(own, reference.gelu(x), what=what)
    assert_close_own(got, own, rtol=1e-4, what=what)
