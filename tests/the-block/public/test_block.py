"""Public tests for mlp(u, W_1, W_2) = gelu(u @ W_1) @ W_2 and the pre-LN block(x, params,
n_heads=1, use_attention=True): h = x + attention(layernorm(x, gamma_1, beta_1), ...), y = h +
mlp(layernorm(h, gamma_2, beta_2), ...).

When graded, your block and mlp run with the course's own layernorm, attention and gelu (in place of
yours, however your code holds them), so that a mistake inside those costs points in their own
problems, never here: these tests check only the lines of block and mlp. Here, in grade check, they
run with yours. block leaves x and params unchanged, and float32 input gives a float32 or float64
output (both accepted) with the values float64 input gives.

Two kinds of test: value tests compare your numbers with the expected ones (computed once from a
correct solution, 10 significant digits); property tests (@pytest.mark.property) check a rule on
your own outputs only (causality, float32 input to float32 precision), so a slip in the values keeps
them.
"""

import numpy as np
import pytest

from grader.feedback.compare import Mismatch, assert_array, assert_close, assert_close_own
from public.test_attention import WK6, WO6, WQ6, WV6, float_array, judgeable, pattern
from public.toy import PARAMS, X

# The toy's weights with gamma and beta given (ones and zeros): a block may pass the defaults on
# either way.
TOY = {
    **PARAMS,
    **{f"{n}_{i}": f(4) for i in (1, 2) for n, f in (("gamma", np.ones), ("beta", np.zeros))},
}

# Fixed weights for a 3-token, d = 4, two-head block (one decimal each).
WEIGHTS = {
    "W_q": np.array(
        [
            [0.7, -0.8, -0.6, -0.6],
            [0.8, -0.3, -0.4, -0.6],
            [-0.1, 0.2, 0.6, 0.2],
            [0.9, -0.7, 0.0, 0.1],
        ]
    ),
    "W_k": np.array(
        [
            [0.4, -0.9, -0.6, -0.1],
            [-0.8, 0.9, 0.3, 0.6],
            [0.0, 0.2, -0.3, -0.3],
            [-0.7, -0.6, 0.5, -0.1],
        ]
    ),
    "W_v": np.array(
        [
            [0.6, -0.4, 0.4, 0.7],
            [0.6, -0.5, -0.3, -0.4],
            [0.6, 0.6, -0.1, -0.4],
            [-0.8, -0.4, -0.7, -0.8],
        ]
    ),
    "W_o": np.array(
        [
            [0.5, -0.1, 0.9, -0.4],
            [-0.2, 0.7, 0.2, -0.4],
            [-0.2, 0.5, -0.3, 0.0],
            [0.0, -0.1, 0.0, 0.9],
        ]
    ),
    "W_1": np.array(
        [
            [0.8, -0.2, -0.8, 0.6, -0.8, -0.3, -0.1, 0.3],
            [-0.7, -0.5, -0.8, -0.9, -0.6, 0.4, 0.1, -0.3],
            [0.4, -0.3, 0.9, -0.4, 0.3, -0.5, 0.1, 0.1],
            [0.8, -0.3, -0.7, -0.1, 0.2, -0.6, 0.9, 0.0],
        ]
    ),
    "W_2": np.array(
        [
            [0.0, 0.2, 0.1, -0.2],
            [0.1, -0.2, 0.9, 0.8],
            [0.1, -0.9, -0.3, -0.3],
            [0.3, 0.0, -0.7, 0.2],
            [-0.9, -0.9, -0.9, -0.5],
            [0.8, -0.8, 0.2, -0.9],
            [-0.9, -0.3, -0.6, -0.2],
            [-0.9, 0.7, -0.1, -0.9],
        ]
    ),
    "gamma_1": np.array([1.8, -0.8, 0.6, 0.2]),
    "beta_1": np.array([0.3, 0.2, 0.3, -0.7]),
    "gamma_2": np.array([1.0, 1.2, 0.2, -0.4]),
    "beta_2": np.array([-0.4, -0.2, 0.5, 0.1]),
}


@pytest.mark.points(1)
def test_mlp_small_example(student, mistakes):
    """mlp of a 2×3 input through a hidden layer of 4: gelu(u @ W_1) @ W_2."""
    u = np.array([[-1.8, -1.5, -1.8], [-0.3, -1.2, -2.1]])
    w_1 = np.array([[0.3, 0.4, -0.3, -0.8], [-0.2, -0.4, -0.2, -0.5], [-0.9, -0.7, 0.7, 0.1]])
    w_2 = np.array([[0.1, -0.6, 0.3], [0.5, 0.8, -0.4], [-0.9, 0.9, 0.7], [0.1, 0.9, -0.8]])
    expected = [[0.9478736877, 1.678829899, -1.690222238], [1.260976516, 0.50241794, -0.5803193852]]
    got = student.mlp(u, w_1, w_2)
    assert_close(
        got,
        expected,
        what="mlp of a 2×3 input with W_1 3×4 and W_2 4×3 (gelu(u @ W_1) @ W_2)",
        diagnose=mistakes.mlp(u, w_1, w_2),
    )


@pytest.mark.points(1.5)
def test_block_on_the_course_toy_example(student, mistakes):
    """The whole block on the course's toy example (5 tokens, d = 4, one head): its last row is the
    course's y_5."""
    expected = [
        [1.877380393, 0.8417982023, 0.8765657944, 2.839114393],
        [1.231996411, 1.145497546, 1.021498437, 3.993187651],
        [-0.3219335181, 2.087551656, -0.3244164619, 1.797916798],
        [-0.07003272532, 2.265506779, 0.05423725009, 1.225231811],
        [-0.4357519396, 1.551035008, -0.4610987424, 1.69792702],
    ]
    got = student.block(X, TOY)
    assert_close(
        got,
        expected,
        what="block of the course's toy X with the toy weights (one head, default gamma and beta; "
        "row 5 is the course's y_5 = [-0.436, 1.551, -0.461, 1.698])",
        diagnose=mistakes.block(X, TOY),
    )


@pytest.mark.points(1.5)
def test_block_two_heads_with_gamma_and_beta(student, mistakes):
    """A block with 2 heads and given gamma_1, beta_1, gamma_2, beta_2 on 3 tokens of width 4."""
    x = np.array([[-0.5, 0.8, -0.6, -0.8], [-0.3, -0.5, 0.3, -0.6], [-0.6, 0.8, 0.6, 0.1]])
    expected = [
        [-0.6871969445, 1.276475047, -1.017283394, -0.8892263951],
        [-1.179912102, -1.023484316, 0.3058685845, -1.676530148],
        [-1.556466322, 1.427794292, -0.05762257189, -1.664430256],
    ]
    got = student.block(x, WEIGHTS, 2)
    assert_close(
        got,
        expected,
        what="block of a 3×4 input with 2 heads and given gamma_1, beta_1, gamma_2, beta_2 "
        "(pre-LN: each LayerNorm reads the stream, each branch is added back to it)",
        diagnose=mistakes.block(x, WEIGHTS, 2),
    )


@pytest.mark.points(1)
def test_block_with_attention_off_on_the_course_toy(student, mistakes):
    """use_attention=False skips the attention branch, h = x: the course's last row becomes
    y_5 = [-0.248, -0.248, -0.248, 3.088]."""
    expected = [
        [1.07346756, 0.07144157262, 0.8085732011, 1.07346756],
        [1.071444643, 0.5734895242, 0.5734895242, 3.308614477],
        [-0.07755132221, 0.01848316043, -0.07755132221, 3.020419903],
        [0.04162529907, 0.04162529907, 0.3583374486, 2.431603333],
        [-0.2481645024, -0.2481645024, -0.2481645024, 3.087592461],
    ]
    got = student.block(X, TOY, use_attention=False)
    assert_close(
        got,
        expected,
        what="block of the course's toy X with use_attention=False (h = x, so y = x + "
        "mlp(layernorm(x, gamma_2, beta_2)); row 5 is the course's "
        "[-0.248, -0.248, -0.248, 3.088])",
        diagnose=mistakes.block(X, TOY, use_attention=False),
    )


# 16 tokens of width 6 for a one-head block, with gamma and beta given (so that passing the defaults
# on either
# way, None or ones and zeros, makes the same calls), and an MLP of width 12.
LONG_X = 2.0 * pattern(16, 6, 5)
LONG = {
    "W_q": WQ6,
    "W_k": WK6,
    "W_v": WV6,
    "W_o": WO6,
    "W_1": pattern(6, 12, 6),
    "W_2": pattern(12, 6, 7),
    "gamma_1": 1.0 + pattern(1, 6, 8)[0] / 2,
    "beta_1": pattern(1, 6, 9)[0] / 2,
    "gamma_2": 1.0 + pattern(1, 6, 10)[0] / 2,
    "beta_2": pattern(1, 6, 11)[0] / 2,
}


@pytest.mark.property
@pytest.mark.points(1.5)
def test_block_changing_token_8_of_16_leaves_rows_0_to_7_unchanged(student):
    """Causality through the block, on your own outputs: changing token 8 of 16 changes none of your
    rows 0 to 7, and it does reach the last row (through attention: a block that never mixes tokens
    earns nothing)."""
    changed = LONG_X.copy()
    changed[8] = [1.5, -2.0, 0.5, 1.0, -1.0, 2.0]
    what = (
        "your block of 16 tokens (d = 6, one head) after changing token 8: rows 0 to 7 must equal "
        "your rows "
        "from before the change (the MLP and LayerNorm work on each token alone, attention is "
        "causal)"
    )
    before = float_array(student.block(LONG_X, LONG), (16, 6), what)
    after = float_array(student.block(changed, LONG), (16, 6), what)
    assert_close(after[:8], before[:8], what=what)
    if np.allclose(after[-1], before[-1], rtol=0, atol=1e-6):
        raise Mismatch(
            what, "your last row did not change either: the last token attends to token 8"
        )


@pytest.mark.property
@pytest.mark.points(1)
def test_block_float32_input_to_float32_precision(student):
    """A float32 input with float32 weights gives a float array (float32, or float64: see the
    attention float32 test) with the values the same input gives in float64, to float32
    precision."""
    x = np.array([[-0.5, 0.8, -0.6, -0.8], [-0.3, -0.5, 0.3, -0.6], [-0.6, 0.8, 0.6, 0.1]])
    what = "your block of a float32 3×4 input with float32 weights, 2 heads, against float64"
    x32 = x.astype(np.float32)
    got = student.block(x32, {k: v.astype(np.float32) for k, v in WEIGHTS.items()}, 2)
    judgeable(got, x32, what)
    got = assert_array(got, x.shape, (np.float32, np.float64), what=what)
    assert_close_own(got, student.block(x, WEIGHTS, 2), rtol=1e-4, what=what)


@pytest.mark.property
@pytest.mark.points(0.5)
def test_mlp_float32_input_to_float32_precision(student):
    """mlp of a float32 token with float32 weights is a float array (float32, or float64) with the
    values the same token gives in float64, to float32 precision."""
    u = np.array([[0.4, -1.1, 0.9, 0.2]])
    what = "your mlp of a float32 1×4 input with float32 W_1 (4×8) and W_2 (8×4), against float64"
    u32 = u.astype(np.float32)
    got = student.mlp(u32, WEIGHTS["W_1"].astype(np.float32), WEIGHTS["W_2"].astype(np.float32))
    judgeable(got, u32, what)
    got = assert_array(got, u.shape, (np.float32, np.float64), what=what)
    assert_close_own(got, student.mlp(u, WEIGHTS["W_1"], WEIGHTS["W_2"]), rtol=1e-4, what=what)
