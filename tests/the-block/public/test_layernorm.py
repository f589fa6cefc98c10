"""Public tests for layernorm(x, gamma=None, beta=None, eps=1e-5): each row over the last axis,
population variance, eps inside the square root, gamma and beta default to ones and zeros.

The expected numbers were computed once from a correct LayerNorm and written here to 10 significant
digits. Run them with `pytest tests/public/test_layernorm.py`; the hidden tests check more cases of
the same rules.
"""

import numpy as np
import pytest

from grader.feedback.compare import assert_array, assert_close, assert_close_own
from public.toy import X

# layernorm(X) for the course's five toy embeddings (the u of the Q, K, V page).
LN_X = [
    [0.9045077212, -0.3015025737, -1.507512869, 0.9045077212],
    [0.3015091518, -0.9045274554, -0.9045274554, 1.507545759],
    [-0.7624871774, -0.1524974355, -0.7624871774, 1.67747179],
    [-0.2294118701, -0.2294118701, -1.147059351, 1.605883091],
    [-0.5773464202, -0.5773464202, -0.5773464202, 1.732039261],
]


# A square input, 6 tokens of width 6, its rows on different scales: where n = d only the axis tells
# the tokens from the features, so a layernorm that picks its axis from the shape (the first of
# width d) is wrong here alone.
SQUARE = np.array(
    [
        [2.0, 0.5, -1.0, 3.0, 1.5, 0.0],
        [-0.5, 4.0, 1.0, 2.5, -2.0, 1.0],
        [0.25, 0.75, 0.5, -0.25, 1.25, 0.0],
        [3.0, 3.5, 2.5, 4.0, 2.0, 3.0],
        [-1.5, 0.0, 1.5, -3.0, 3.0, 0.0],
        [1.0, -1.0, 2.0, -2.0, 0.5, -0.5],
    ]
)
LN_SQUARE = [
    [0.7559267862, -0.3779633931, -1.511853572, 1.511853572, 0.3779633931, -0.7559267862],
    [-0.7745956364, 1.549191273, 0.0, 0.7745956364, -1.549191273, 0.0],
    [-0.3380547477, 0.6761094954, 0.1690273738, -1.352218991, 1.690273738, -0.8451368692],
    [0.0, 0.7745873742, -0.7745873742, 1.549174748, -1.549174748, 0.0],
    [-0.7745956364, 0.0, 0.7745956364, -1.549191273, 1.549191273, 0.0],
    [0.7559267862, -0.7559267862, 1.511853572, -1.511853572, 0.3779633931, -0.3779633931],
]


@pytest.mark.points(1.5)
def test_toy_embeddings_each_row_normalised(student, mistakes):
    """LayerNorm of the course's 5×4 toy embeddings X normalises each token's row on its own."""
    got = student.layernorm(X)
    assert_close(
        got,
        LN_X,
        what="layernorm of the course's 5×4 toy embeddings X (each row on its own, "
        "population variance: divide by d = 4, not d - 1)",
        diagnose=mistakes.layernorm(X),
    )


@pytest.mark.points(1)
def test_a_square_input_is_normalised_row_by_row(student, mistakes):
    """A 6×6 input, as many tokens as features: each token's row is normalised on its own
    (axis=-1)."""
    got = student.layernorm(SQUARE)
    assert_close(
        got,
        LN_SQUARE,
        what="layernorm of a 6×6 input (each row over its own 6 numbers, axis=-1: as many "
        "tokens as features, so only the axis tells them apart)",
        diagnose=mistakes.layernorm(SQUARE),
    )


@pytest.mark.points(1)
def test_gamma_scales_and_beta_shifts(student, mistakes):
    """gamma multiplies and beta adds, per column, after the normalisation. The last two rows have
    (almost) no variance: a constant row gives beta, and a row of variance 5e-7 shows which eps your
    default is."""
    x = np.array(
        [
            [1.0, 2.0, 4.0, 7.0],
            [-3.0, 0.5, 0.0, 2.5],
            [0.2, 0.1, -0.1, -0.2],
            [2.0, 2.0, 2.0, 2.0],
            [0.0, 0.001, -0.001, 0.0],
        ]
    )
    gamma = np.array([1.0, 2.0, 0.5, -1.0])
    beta = np.array([0.0, 1.0, -1.0, 0.5])
    expected = [
        [-1.091088412, -0.3093060945, -0.8908911588, -1.027523777],
        [-1.523999558, 1.507999853, -1.0, -0.7699996313],
        [1.264658158, 2.264658158, -1.316164539, 1.764658158],
        [0.0, 1.0, -1.0, 0.5],
        [0.0, 1.6172134, -1.15430335, 0.5],
    ]
    got = student.layernorm(x, gamma, beta)
    assert_close(
        got,
        expected,
        what="layernorm of a 5×4 input with gamma = [1, 2, 0.5, -1] and "
        "beta = [0, 1, -1, 0.5] (gamma * normalised + beta; row 4 is constant, "
        "row 5 has variance 5e-7: eps = 1e-5 inside the square root keeps both finite)",
        diagnose=mistakes.layernorm(x, gamma, beta),
    )


@pytest.mark.points(1)
def test_eps_goes_inside_the_square_root(student, mistakes):
    """With eps = 0.1 the result is (x - mean) / sqrt(var + eps), not (x - mean) / (std + eps)."""
    x = np.array([[0.1, -0.2, 0.3, 0.0], [1.0, 1.5, 0.5, 1.0]])
    expected = [
        [0.1373605639, -0.6868028197, 0.6868028197, -0.1373605639],
        [0.0, 1.054092553, -1.054092553, 0.0],
    ]
    got = student.layernorm(x, eps=0.1)
    assert_close(
        got,
        expected,
        what="layernorm of a 2×4 input with eps = 0.1 (eps belongs inside the "
        "square root: sqrt(var + eps))",
        diagnose=mistakes.layernorm(x, eps=0.1),
    )


# Properties: each checked on your own outputs, never against the expected numbers, so a slip in a
# constant
# (ddof=1, another eps) keeps these points.


@pytest.mark.property
@pytest.mark.points(1.5)
def test_each_row_is_normalised_on_its_own(student):
    """A (2, 3, 5) batch gives, row for row, what each (3, 5) half gives alone: only the last axis
    counts."""
    x = np.array(
        [
            [[3.5, 2.0, 4.25, 3.0, 1.5], [2.75, 3.25, 5.0, 2.5, 3.0], [-1.0, 0.0, 1.0, 2.0, 10.0]],
            [
                [100.0, 101.0, 99.0, 100.5, 100.0],
                [3.0, 3.0, 3.0, 3.5, 3.5],
                [0.5, -0.5, 0.25, -0.25, 0.0],
            ],
        ]
    )
    what = (
        "layernorm of a 2×3×5 batch against layernorm of each 3×5 half alone (normalise along the "
        "last axis)"
    )
    batch = assert_array(student.layernorm(x), x.shape, what=what)
    for i in range(2):
        assert_close_own(batch[i], student.layernorm(x[i]), what=what)


@pytest.mark.property
@pytest.mark.points(1)
def test_row_times_10_gives_the_same_row(student):
    """The course's check: multiply one token's row by 10 and its output row does not change (up to
    eps)."""
    x10 = np.array(X)
    x10[2] *= 10.0
    what = (
        "layernorm of the toy X with row 2 multiplied by 10, against layernorm of X (each row is "
        "scaled away)"
    )
    assert_close_own(student.layernorm(x10), student.layernorm(X), rtol=1e-4, what=what)
