"""Public tests for layernorm(x, gamma=None, beta=None, eps=1e-5): each row over the last axis, population
variance, eps inside the square root, gamma and beta default to ones and zeros.

The expected numbers were computed once from a correct LayerNorm and written here to 10 significant digits.
Run them with `pytest tests/public/test_layernorm.py`; the hidden tests check more cases of the same rules.
"""
import numpy as np
import pytest

from grader.compare import assert_close
from public.toy import X

# layernorm(X) for the course's five toy embeddings (the u of the Q, K, V page).
LN_X = [[0.9045077212, -0.3015025737, -1.507512869, 0.9045077212],
        [0.3015091518, -0.9045274554, -0.9045274554, 1.507545759],
        [-0.7624871774, -0.1524974355, -0.7624871774, 1.67747179],
        [-0.2294118701, -0.2294118701, -1.147059351, 1.605883091],
        [-0.5773464202, -0.5773464202, -0.5773464202, 1.732039261]]


@pytest.mark.points(2)
def test_toy_embeddings_each_row_normalised(student, mistakes):
    """LayerNorm of the course's 5×4 toy embeddings X normalises each token's row on its own."""
    got = student.layernorm(X)
    assert_close(got, LN_X, what="layernorm of the course's 5×4 toy embeddings X (each row on its own, "
                                 "population variance: divide by d = 4, not d - 1)",
                 diagnose=mistakes.layernorm(X))


@pytest.mark.points(2)
def test_gamma_scales_and_beta_shifts(student, mistakes):
    """gamma multiplies and beta adds, per column, after the normalisation."""
    x = np.array([[1.0, 2.0, 4.0, 7.0],
                  [-3.0, 0.5, 0.0, 2.5],
                  [0.2, 0.1, -0.1, -0.2]])
    gamma = np.array([1.0, 2.0, 0.5, -1.0])
    beta = np.array([0.0, 1.0, -1.0, 0.5])
    expected = [[-1.091088412, -0.3093060945, -0.8908911588, -1.027523777],
                [-1.523999558, 1.507999853, -1.0, -0.7699996313],
                [1.264658158, 2.264658158, -1.316164539, 1.764658158]]
    got = student.layernorm(x, gamma, beta)
    assert_close(got, expected, what="layernorm of a 3×4 input with gamma = [1, 2, 0.5, -1] and "
                                     "beta = [0, 1, -1, 0.5] (gamma * normalised + beta)",
                 diagnose=mistakes.layernorm(x, gamma, beta))


@pytest.mark.points(1.5)
def test_eps_goes_inside_the_square_root(student, mistakes):
    """With eps = 0.1 the result is (x - mean) / sqrt(var + eps), not (x - mean) / (std + eps)."""
    x = np.array([[0.1, -0.2, 0.3, 0.0],
                  [1.0, 1.5, 0.5, 1.0]])
    expected = [[0.1373605639, -0.6868028197, 0.6868028197, -0.1373605639],
                [0.0, 1.054092553, -1.054092553, 0.0]]
    got = student.layernorm(x, eps=0.1)
    assert_close(got, expected, what="layernorm of a 2×4 input with eps = 0.1 (eps belongs inside the "
                                     "square root: sqrt(var + eps))",
                 diagnose=mistakes.layernorm(x, eps=0.1))


@pytest.mark.points(1.5)
def test_batched_input_normalises_only_the_last_axis(student, mistakes):
    """A (2, 3, 5) input is normalised along its last axis only, whatever the mean of the row."""
    x = np.array([[[3.5, 2.0, 4.25, 3.0, 1.5],
                   [2.75, 3.25, 5.0, 2.5, 3.0],
                   [-1.0, 0.0, 1.0, 2.0, 10.0]],
                  [[100.0, 101.0, 99.0, 100.5, 100.0],
                   [3.0, 3.0, 3.0, 3.0, 3.5],
                   [0.5, -0.5, 0.25, -0.25, 0.0]]])
    expected = [[[0.6532712806, -0.8542778284, 1.407045835, 0.1507549109, -1.356794198],
                 [-0.6207619589, -0.05643290535, 1.918718782, -0.9029264857, -0.3385974321],
                 [-0.8652769373, -0.6107837205, -0.3562905036, -0.1017972867, 1.934148448]],
                [[-0.1507539592, 1.356785633, -1.658293551, 0.6030158367, -0.1507539592],
                 [-0.4999375117, -0.4999375117, -0.4999375117, -0.4999375117, 1.999750047],
                 [1.414156997, -1.414156997, 0.7070784986, -0.7070784986, 0.0]]]
    got = student.layernorm(x)
    assert_close(got, expected, what="layernorm of a 2×3×5 input (normalise along the last axis, "
                                     "axis=-1, with keepdims)",
                 diagnose=mistakes.layernorm(x))
