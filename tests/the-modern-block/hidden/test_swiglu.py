"""Hidden tests for silu, swiglu_width and swiglu.

Expected values come from the reference (and the course text for the widths). Aimed at: SiLU as the
bare sigmoid, the gate on the wrong branch (W_1 and W_3 swapped) or outside the product, Meta's
rounding up (ceil) for the width, 8 d // 3 below 256; the course's (5, 8) -> (5, 21) -> (5, 8).
swiglu runs with the student's own silu (this problem's).
"""

import numpy as np
import pytest
from public.toy import D_FF, W_1, W_2, W_3, X

from grader.feedback.compare import (
    assert_array,
    assert_attempt,
    assert_close,
    assert_close_own,
    assert_equal,
)


@pytest.mark.points(1.5)
def test_silu_is_x_times_the_sigmoid(student, reference, mistakes):
    """silu on a 3×7 grid from -8 to 8: x / (1 + exp(-x)), not the sigmoid alone."""
    x = np.linspace(-8, 8, 21).reshape(3, 7)
    assert_close(
        student.silu(x),
        reference.silu(x),
        what="silu on a 3×7 grid from -8 to 8 (x * sigmoid(x))",
        diagnose=mistakes.silu(x),
    )


@pytest.mark.property
@pytest.mark.points(1)
def test_silu_float32_input_to_float32_precision(student, reference):
    """float32 in gives a float array with the values float64 gives."""
    x = np.linspace(-5, 5, 12)
    what = (
        "silu of a float32 input of 12 (a float32 or float64 array, the values float64 input gives)"
    )
    got = assert_array(
        student.silu(x.astype(np.float32)), x.shape, (np.float32, np.float64), what=what
    )
    own = student.silu(x)
    assert_attempt(own, reference.silu(x), what=what)
    assert_close_own(got, own, rtol=1e-5, atol=1e-6, what=what)


@pytest.mark.points(1)
def test_swiglu_width_rounds_with_pythons_round(student, reference, mistakes):
    """d = 2048 and 5120 round down (21.33, 53.33), d = 1024 up (10.67): Python's round, not
    ceil."""
    for d in (2048, 5120, 1024):
        assert_equal(
            student.swiglu_width(d),
            reference.swiglu_width(d),
            what=f"swiglu_width({d}) (round(8 * d / 3 / 256) * 256)",
            diagnose=mistakes.swiglu_width(d),
        )


@pytest.mark.points(1)
def test_swiglu_width_below_256(student, reference, mistakes):
    """Below 256 the width is 8 d // 3: 100 gives 266, 255 gives 680."""
    for d in (100, 255):
        assert_equal(
            student.swiglu_width(d),
            reference.swiglu_width(d),
            what=f"swiglu_width({d}) (8 * d // 3)",
            diagnose=mistakes.swiglu_width(d),
        )


@pytest.mark.points(1.5)
def test_swiglu_course_d8_hidden_layer_5_by_21(student, reference, mistakes):
    """The course's SwiGLU: x (5, 8), hidden layer (5, 21), out (5, 8)."""
    got = student.swiglu(X, W_1, W_3, W_2)
    assert_close(
        got,
        reference.swiglu(X, W_1, W_3, W_2),
        what=f"swiglu of the course's 5×8 x (hidden layer 5×{D_FF}, out 5×8)",
        diagnose=mistakes.swiglu(X, W_1, W_3, W_2),
    )


@pytest.mark.points(1.5)
def test_swiglu_gate_on_the_w_1_branch(student, reference, mistakes):
    """Random weights of 6 -> 16 -> 6: the SiLU gate is on u @ W_1, the linear value is u @ W_3."""
    rng = np.random.default_rng(311)
    u = rng.normal(size=(4, 6))
    w_1, w_3, w_2 = (
        rng.normal(size=(6, 16)),
        rng.normal(size=(6, 16)),
        rng.normal(scale=0.25, size=(16, 6)),
    )
    assert_close(
        student.swiglu(u, w_1, w_3, w_2),
        reference.swiglu(u, w_1, w_3, w_2),
        what="swiglu of a 4×6 input with random W_1, W_3 6×16 and W_2 16×6 (silu(u @ W_1) * (u @ "
        "W_3))",
        diagnose=mistakes.swiglu(u, w_1, w_3, w_2),
    )


@pytest.mark.property
@pytest.mark.points(1.5)
def test_swiglu_each_token_on_its_own(student, reference):
    """The same weights for every token: each row of the output is what that row alone gives."""
    rng = np.random.default_rng(312)
    u = rng.normal(size=(5, 6))
    w = (rng.normal(size=(6, 10)), rng.normal(size=(6, 10)), rng.normal(size=(10, 6)))
    what = "your swiglu of a 5×6 input, row by row, against your swiglu of each row alone"
    whole = assert_array(student.swiglu(u, *w), u.shape, what=what)
    assert_attempt(whole, reference.swiglu(u, *w), what=what)
    for i in (0, 4):
        assert_close_own(whole[i : i + 1], student.swiglu(u[i : i + 1], *w), what=what)


@pytest.mark.property
@pytest.mark.points(1.5)
def test_silu_of_x_minus_silu_of_minus_x_is_x(student, reference):
    """x sigmoid(x) + x sigmoid(-x) = x: on your own outputs, silu(x) - silu(-x) gives x back."""
    x = np.linspace(-6, 6, 25)
    what = (
        "your silu(x) - silu(-x) against x, on 25 points from -6 to 6 (sigmoid(x) + sigmoid(-x) = "
        "1)"
    )
    own = student.silu(x)
    assert_attempt(own, reference.silu(x), what=what)
    mirrored = assert_array(student.silu(-x), x.shape, what=what)  # before it is subtracted
    assert_close(own.astype(float) - mirrored.astype(float), x, atol=1e-9, what=what)
