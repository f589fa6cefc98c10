"""Public tests for mlp(u, W_1, W_2) = gelu(u @ W_1) @ W_2 and the pre-LN block(x, params, n_heads=1,
use_attention=True): h = x + attention(layernorm(x, gamma_1, beta_1), ...), y = h + mlp(layernorm(h, gamma_2, beta_2), ...).

These tests grade the wiring: your block runs with your layernorm, attention and mlp (and your mlp with
your gelu) replaced by correct ones, so a mistake inside those costs points in their own problems, never
here, and these tests check only the lines of block and mlp themselves. The stand-ins answer the calls the
specified wiring makes (recorded from a correct solution in wiring.json); a call
on any other input is a mistake of the wiring, named as such. A block that computes its parts itself is
judged on its own output. The expected numbers were computed once from a correct solution, 10 significant
digits.
"""
import numpy as np
import pytest

from grader.compare import assert_close
from public.toy import PARAMS, X

# The toy's weights with gamma and beta given (ones and zeros): a block may pass the defaults on either way.
TOY = {**PARAMS, **{f"{n}_{i}": f(4) for i in (1, 2) for n, f in (("gamma", np.ones), ("beta", np.zeros))}}

# Fixed weights for a 3-token, d = 4, two-head block (one decimal each).
WEIGHTS = {
    "W_q": np.array([[0.7, -0.8, -0.6, -0.6],
                     [0.8, -0.3, -0.4, -0.6],
                     [-0.1, 0.2, 0.6, 0.2],
                     [0.9, -0.7, 0.0, 0.1]]),
    "W_k": np.array([[0.4, -0.9, -0.6, -0.1],
                     [-0.8, 0.9, 0.3, 0.6],
                     [0.0, 0.2, -0.3, -0.3],
                     [-0.7, -0.6, 0.5, -0.1]]),
    "W_v": np.array([[0.6, -0.4, 0.4, 0.7],
                     [0.6, -0.5, -0.3, -0.4],
                     [0.6, 0.6, -0.1, -0.4],
                     [-0.8, -0.4, -0.7, -0.8]]),
    "W_o": np.array([[0.5, -0.1, 0.9, -0.4],
                     [-0.2, 0.7, 0.2, -0.4],
                     [-0.2, 0.5, -0.3, 0.0],
                     [0.0, -0.1, 0.0, 0.9]]),
    "W_1": np.array([[0.8, -0.2, -0.8, 0.6, -0.8, -0.3, -0.1, 0.3],
                     [-0.7, -0.5, -0.8, -0.9, -0.6, 0.4, 0.1, -0.3],
                     [0.4, -0.3, 0.9, -0.4, 0.3, -0.5, 0.1, 0.1],
                     [0.8, -0.3, -0.7, -0.1, 0.2, -0.6, 0.9, 0.0]]),
    "W_2": np.array([[0.0, 0.2, 0.1, -0.2],
                     [0.1, -0.2, 0.9, 0.8],
                     [0.1, -0.9, -0.3, -0.3],
                     [0.3, 0.0, -0.7, 0.2],
                     [-0.9, -0.9, -0.9, -0.5],
                     [0.8, -0.8, 0.2, -0.9],
                     [-0.9, -0.3, -0.6, -0.2],
                     [-0.9, 0.7, -0.1, -0.9]]),
    "gamma_1": np.array([1.8, -0.8, 0.6, 0.2]),
    "beta_1": np.array([0.3, 0.2, 0.3, -0.7]),
    "gamma_2": np.array([1.0, 1.2, 0.2, -0.4]),
    "beta_2": np.array([-0.4, -0.2, 0.5, 0.1]),
}


@pytest.mark.wiring
@pytest.mark.points(2)
def test_mlp_small_example(student, mistakes):
    """mlp of a 2×3 input through a hidden layer of 4: gelu(u @ W_1) @ W_2."""
    u = np.array([[-1.8, -1.5, -1.8],
                  [-0.3, -1.2, -2.1]])
    w_1 = np.array([[0.3, 0.4, -0.3, -0.8],
                    [-0.2, -0.4, -0.2, -0.5],
                    [-0.9, -0.7, 0.7, 0.1]])
    w_2 = np.array([[0.1, -0.6, 0.3],
                    [0.5, 0.8, -0.4],
                    [-0.9, 0.9, 0.7],
                    [0.1, 0.9, -0.8]])
    expected = [[0.9478736877, 1.678829899, -1.690222238],
                [1.260976516, 0.50241794, -0.5803193852]]
    got = student.wired("mlp", u, w_1, w_2)
    assert_close(got, expected,
                  what="mlp of a 2×3 input with W_1 3×4 and W_2 4×3 (gelu(u @ W_1) @ W_2)",
                  diagnose=mistakes.mlp(u, w_1, w_2))


@pytest.mark.wiring
@pytest.mark.points(3)
def test_block_on_the_course_toy_example(student, mistakes):
    """The whole block on the course's toy example (5 tokens, d = 4, one head): its last row is the course's y_5."""
    expected = [[1.877380393, 0.8417982023, 0.8765657944, 2.839114393],
                [1.231996411, 1.145497546, 1.021498437, 3.993187651],
                [-0.3219335181, 2.087551656, -0.3244164619, 1.797916798],
                [-0.07003272532, 2.265506779, 0.05423725009, 1.225231811],
                [-0.4357519396, 1.551035008, -0.4610987424, 1.69792702]]
    got = student.wired("block", X, TOY)
    assert_close(got, expected,
                  what="block of the course's toy X with the toy weights (one head, default gamma and beta; "
                       "row 5 is the course's y_5 = [-0.436, 1.551, -0.461, 1.698])",
                  diagnose=mistakes.block(X, TOY))


@pytest.mark.wiring
@pytest.mark.points(3)
def test_block_two_heads_with_gamma_and_beta(student, mistakes):
    """A block with 2 heads and given gamma_1, beta_1, gamma_2, beta_2 on 3 tokens of width 4."""
    x = np.array([[-0.5, 0.8, -0.6, -0.8],
                  [-0.3, -0.5, 0.3, -0.6],
                  [-0.6, 0.8, 0.6, 0.1]])
    expected = [[-0.6871969445, 1.276475047, -1.017283394, -0.8892263951],
                [-1.179912102, -1.023484316, 0.3058685845, -1.676530148],
                [-1.556466322, 1.427794292, -0.05762257189, -1.664430256]]
    got = student.wired("block", x, WEIGHTS, 2)
    assert_close(got, expected,
                  what="block of a 3×4 input with 2 heads and given gamma_1, beta_1, gamma_2, beta_2 "
                       "(pre-LN: each LayerNorm reads the stream, each branch is added back to it)",
                  diagnose=mistakes.block(x, WEIGHTS, 2))
