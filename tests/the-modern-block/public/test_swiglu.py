"""Public tests for silu(x) = x / (1 + exp(-x)), swiglu_width(d) (round(8 d / 3 / 256) * 256 for d
>= 256, else 8 d // 3) and swiglu(u, W_1, W_3, W_2) = (silu(u @ W_1) * (u @ W_3)) @ W_2.

swiglu runs with your own silu (both are this problem's). Expected numbers: computed once from a
correct solution, 10 significant digits.
"""

import numpy as np
import pytest

from grader.feedback.compare import assert_array, assert_close, assert_close_own, assert_equal
from public.toy import D_FF, W_1, W_2, W_3, X

BIG = np.array([-1000.0, -50.0, 50.0, 1000.0])
S = np.array([-6.0, -2.5, -1.0, -0.25, 0.0, 0.5, 1.0, 3.0])
U = np.array([[0.4, -1.1, 0.9], [1.5, 0.2, -0.7]])
A_1 = np.array([[0.3, -0.8, 0.5, 1.1], [-0.6, 0.2, 0.9, -0.4], [0.7, 0.4, -0.3, 0.2]])
A_3 = np.array([[-0.5, 0.6, 0.1, 0.8], [0.9, -0.3, 0.4, 0.2], [0.2, 0.7, -1.0, 0.6]])
A_2 = np.array([[0.4, -0.2, 0.6], [-0.7, 0.5, 0.1], [0.3, 0.8, -0.5], [0.6, -0.1, 0.9]])


@pytest.mark.points(2)
def test_silu_values(student, mistakes):
    """silu(x) = x * sigmoid(x) on eight points from -6 to 3: silu(1) is about 0.731, silu(-1) about
    -0.269."""
    got = student.silu(S)
    assert_close(
        got,
        [
            -0.01483573894,
            -0.1896454501,
            -0.2689414214,
            -0.1094558748,
            0,
            0.3112296656,
            0.7310585786,
            2.85772238,
        ],
        what="silu of [-6, -2.5, -1, -0.25, 0, 0.5, 1, 3] (x / (1 + exp(-x)): x times the sigmoid)",
        diagnose=mistakes.silu(S),
    )


@pytest.mark.points(1)
def test_silu_large_inputs_stay_finite(student, mistakes):
    """silu(-1000) is -0 and silu(1000) is 1000: exp(1000) overflows to inf, and x / inf = -0 is the
    right limit; no nan (the form exp(x) / (1 + exp(x)) * x gives inf / inf = nan)."""
    got = student.silu(BIG)
    assert_close(
        got,
        [-0, -9.64374924e-21, 50, 1000],
        rtol=1e-6,
        atol=1e-12,
        what="silu of [-1000, -50, 50, 1000] (finite: about [0, -1e-20, 50, 1000])",
        diagnose=mistakes.silu(BIG),
    )


@pytest.mark.points(1.5)
def test_swiglu_width_course_values(student, mistakes):
    """The course's width rule: swiglu_width(8) = 21 (8 * 8 // 3) and swiglu_width(4096) = 11008 (43
    * 256)."""
    for d in (8, 4096):
        assert_equal(
            student.swiglu_width(d),
            {8: 21, 4096: 11_008}[d],
            what=f"swiglu_width({d}) (8d // 3 below 256, else round(8 * d / 3 / 256) * 256)",
            diagnose=mistakes.swiglu_width(d),
        )


@pytest.mark.points(1)
def test_swiglu_width_2048_rounds_to_the_nearest(student, mistakes):
    """8 * 2048 / 3 / 256 = 21.33 rounds to 21: swiglu_width(2048) = 5376 (Meta's code rounds up, to
    5632)."""
    assert_equal(
        student.swiglu_width(2048),
        5_376,
        what="swiglu_width(2048) (round(21.33) * 256, Python's round)",
        diagnose=mistakes.swiglu_width(2048),
    )


@pytest.mark.points(2)
def test_swiglu_small_example(student, mistakes):
    """swiglu of a 2×3 input through a hidden layer of 4: the gate silu(u @ W_1) times the value u @
    W_3, then @ W_2."""
    got = student.swiglu(U, A_1, A_3, A_2)
    assert_close(
        got,
        [[0.01963356747, 0.4130493527, -0.4204455391], [0.8971745423, 0.4892937527, 0.4716147738]],
        what="swiglu of a 2×3 input with W_1, W_3 3×4 and W_2 4×3 ((silu(u @ W_1) * (u @ W_3)) @ "
        "W_2)",
        diagnose=mistakes.swiglu(U, A_1, A_3, A_2),
    )


@pytest.mark.points(1)
def test_swiglu_course_hidden_layer_of_21(student, mistakes):
    """The course's SwiGLU: (5, 8) in, a hidden layer of (5, 21), (5, 8) out, with the script's W_1,
    W_3, W_2."""
    got = student.swiglu(X, W_1, W_3, W_2)
    assert_close(
        got,
        [
            [
                0.3837187677,
                0.2552751105,
                -0.348055288,
                0.04442675563,
                0.05411919554,
                0.05191121105,
                0.04992797869,
                -0.07432773668,
            ],
            [
                0.013378799,
                0.02277770221,
                0.01932838864,
                -0.006768059069,
                0.005444830119,
                -0.0292750474,
                -0.04686186407,
                0.06326146496,
            ],
            [
                0.03895307863,
                0.4945980809,
                -0.09872734391,
                -0.6326222324,
                0.08438775682,
                -0.4953476088,
                1.07690276,
                -0.2468611664,
            ],
            [
                -0.09042934275,
                -0.7020594841,
                0.6920624987,
                0.9861792404,
                1.197715272,
                -0.3907060418,
                0.9590946753,
                0.1431647978,
            ],
            [
                -0.111369343,
                0.6246427885,
                0.005696781557,
                -0.1544461728,
                0.009822950753,
                0.2355046231,
                0.310102715,
                0.1730901824,
            ],
        ],
        what=f"swiglu of the course's 5×8 x with W_1, W_3 8×{D_FF} and W_2 {D_FF}×8",
        diagnose=mistakes.swiglu(X, W_1, W_3, W_2),
    )


@pytest.mark.property
@pytest.mark.points(1)
def test_swiglu_is_linear_in_w_2(student):
    """Doubling W_2 doubles the output, on your own outputs: W_2 is the last product, nothing after
    it."""
    what = "your swiglu with 2 * W_2 against 2 × your swiglu with W_2 (W_2 is applied last)"
    once = assert_array(student.swiglu(U, A_1, A_3, A_2), (2, 3), what=what)  # then doubled
    assert_close_own(student.swiglu(U, A_1, A_3, 2 * A_2), 2 * once.astype(float), what=what)
