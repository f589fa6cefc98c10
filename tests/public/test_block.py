"""Public tests for mlp(u, W_1, W_2) = gelu(u @ W_1) @ W_2 and the pre-LN block(x, params, n_heads=1,
use_attention=True): h = x + attention(layernorm(x, gamma_1, beta_1), ...), y = h + mlp(layernorm(h, gamma_2, beta_2), ...).

These tests grade the wiring. Each one accepts either the expected numbers (computed once from a correct
solution, 10 significant digits) or, when the tests of your layernorm, attention or gelu found a known mistake
in it, the same wiring around a component with that mistake, so a mistake inside those costs points in their
own problems, not here.
"""
import numpy as np
import pytest

from grader.compare import Mismatch, assert_close, assert_close_any, same_array
from grader.errors import Deferred
from public.toy import PARAMS, X

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


def assert_wiring(student, got, expected, *, what, diagnose, **tol):
    """Pass when `got` matches `expected`, or the same wiring around a component with a known mistake that
    this submission's other tests found in it (a failed test of its layernorm, attention or gelu named that
    mistake), so a mistake inside a component costs points in its own problem, not here.

    The wiring around the faulty component is the catalogue's variant (`diagnose.outputs()`), trusted code:
    no student code runs for it. A variant that computes the same as a known wiring mistake (the wiring
    around a layernorm that ignores gamma and beta, and a block that does not pass them on) only counts
    when the mistake is sure (the component failed every test the mistake fails): a component could fail
    one test on purpose to get it named. Decided after the submission's other tests (Deferred), when all
    the components' tests have run. `diagnose` also names a known wiring mistake.
    """
    try:
        assert_close(got, expected, what=what, **tol)
        return
    except Mismatch:
        pass

    def check():
        candidates = {"the expected values": expected}
        found = student.known_mistakes()
        outputs = diagnose.outputs()
        wiring = [w for mistake, ws in outputs.items() if mistake.startswith(("block.", "mlp.")) for w in ws]
        for mistake, variants in outputs.items():
            if mistake in found:
                for i, variant in enumerate(variants):
                    if found[mistake] or not any(same_array(variant, w, **tol) for w in wiring):
                        candidates[f"the specified wiring around your {mistake} ({i})"] = variant
        assert_close_any(got, candidates, what=what, diagnose=diagnose, **tol)

    raise Deferred(check)


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
    got = student.mlp(u, w_1, w_2)
    assert_wiring(student, got, expected,
                  what="mlp of a 2×3 input with W_1 3×4 and W_2 4×3 (gelu(u @ W_1) @ W_2)",
                  diagnose=mistakes.mlp(u, w_1, w_2))


@pytest.mark.points(3)
def test_block_on_the_course_toy_example(student, mistakes):
    """The whole block on the course's toy example (5 tokens, d = 4, one head): its last row is the course's y_5."""
    expected = [[1.877380393, 0.8417982023, 0.8765657944, 2.839114393],
                [1.231996411, 1.145497546, 1.021498437, 3.993187651],
                [-0.3219335181, 2.087551656, -0.3244164619, 1.797916798],
                [-0.07003272532, 2.265506779, 0.05423725009, 1.225231811],
                [-0.4357519396, 1.551035008, -0.4610987424, 1.69792702]]
    got = student.block(X, PARAMS)
    assert_wiring(student, got, expected,
                  what="block of the course's toy X with the toy weights (one head, default gamma and beta; "
                       "row 5 is the course's y_5 = [-0.436, 1.551, -0.461, 1.698])",
                  diagnose=mistakes.block(X, PARAMS))


@pytest.mark.points(3)
def test_block_two_heads_with_gamma_and_beta(student, mistakes):
    """A block with 2 heads and given gamma_1, beta_1, gamma_2, beta_2 on 3 tokens of width 4."""
    x = np.array([[-0.5, 0.8, -0.6, -0.8],
                  [-0.3, -0.5, 0.3, -0.6],
                  [-0.6, 0.8, 0.6, 0.1]])
    expected = [[-0.6871969445, 1.276475047, -1.017283394, -0.8892263951],
                [-1.179912102, -1.023484316, 0.3058685845, -1.676530148],
                [-1.556466322, 1.427794292, -0.05762257189, -1.664430256]]
    got = student.block(x, WEIGHTS, 2)
    assert_wiring(student, got, expected,
                  what="block of a 3×4 input with 2 heads and given gamma_1, beta_1, gamma_2, beta_2 "
                       "(pre-LN: each LayerNorm reads the stream, each branch is added back to it)",
                  diagnose=mistakes.block(x, WEIGHTS, 2))
