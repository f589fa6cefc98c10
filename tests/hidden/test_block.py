"""Hidden tests for mlp(u, W_1, W_2) and the pre-LN block(x, params, n_heads=1, use_attention=True).

The block problem grades the wiring only: every test runs the student's block (or mlp) with their other
functions replaced by the reference's (grader.standins), so a fault inside a component costs points in that
component's problem, never here.
Aimed at: post-LN instead of pre-LN, a missing residual, use_attention ignored, gamma/beta not passed on,
n_heads not passed on, the causal order of the whole block; and the course's m_5, y_5 and "attention off" rows.
Inputs stay moderate (scores far below exp's overflow), so components without max subtraction still compose.
"""
import numpy as np
import pytest

from grader.compare import assert_close
from public.toy import LN_H5, M5, PARAMS, W_1, W_2, X, Y5, Y5_NO_ATTENTION

F32 = {"rtol": 1e-4, "atol": 1e-5}  # float32 input against the reference on the float64 cast
COURSE = {"rtol": 0.0, "atol": 1e-3}  # the course prints three decimals


def random_params(rng, d, d_ff, affine=True):
    """Random block weights (entries N(0, 1/fan_in)); with affine, random gamma_1, beta_1, gamma_2, beta_2 too."""
    p = {name: rng.normal(scale=1 / np.sqrt(d), size=(d, d)) for name in ("W_q", "W_k", "W_v", "W_o")}
    p["W_1"] = rng.normal(scale=1 / np.sqrt(d), size=(d, d_ff))
    p["W_2"] = rng.normal(scale=1 / np.sqrt(d_ff), size=(d_ff, d))
    if affine:
        for i in (1, 2):
            p[f"gamma_{i}"] = 1.0 + 0.5 * rng.normal(size=d)
            p[f"beta_{i}"] = 0.5 * rng.normal(size=d)
    return p


@pytest.mark.wiring
@pytest.mark.points(1.5)
def test_mlp_course_m5_for_the(student, mistakes):
    """The course's MLP with W_1 = [I | -I], W_2 = [I ; I] turns u'_5 into m_5 = [0.803, 0.640, 0.560, 0.718]."""
    u = LN_H5[None, :]
    got = student.wired("mlp", u, W_1, W_2)
    assert_close(got, M5[None, :], **COURSE,
                  what="mlp of the course's u'_5 = [-1.102, 0.964, -0.892, 1.030] with W_1 = [I | -I] and "
                       "W_2 = [I ; I] (the course's m_5, to 3 decimals)",
                  diagnose=mistakes.mlp(u, W_1, W_2))


@pytest.mark.wiring
@pytest.mark.points(2)
def test_mlp_random_wide_hidden_layer(student, reference, mistakes):
    """mlp of 5 tokens of width 6 through a hidden layer of 24."""
    rng = np.random.default_rng(401)
    u = rng.normal(size=(5, 6))
    w_1, w_2 = rng.normal(scale=0.6, size=(6, 24)), rng.normal(scale=0.3, size=(24, 6))
    got = student.wired("mlp", u, w_1, w_2)
    assert_close(got, reference.mlp(u, w_1, w_2),
                  what="mlp of a 5×6 input with W_1 6×24 and W_2 24×6 (gelu(u @ W_1) @ W_2)",
                  diagnose=mistakes.mlp(u, w_1, w_2))


@pytest.mark.wiring
@pytest.mark.points(2)
def test_block_course_y5_for_the(student, reference, mistakes):
    """The block on the course's example gives y_5 = [-0.436, 1.551, -0.461, 1.698] for ␣the."""
    got = student.wired("block", X, PARAMS)
    expected = np.array(reference.block(X, PARAMS), dtype=np.float64)
    expected[4] = Y5
    assert_close(got, expected, **COURSE,
                  what="block of the course's toy X with the toy weights (row 5 must be the course's "
                       "y_5 = [-0.436, 1.551, -0.461, 1.698], to 3 decimals)",
                  diagnose=mistakes.block(X, PARAMS))


@pytest.mark.wiring
@pytest.mark.points(1.5)
def test_block_attention_off_course_row(student, reference, mistakes):
    """With use_attention=False the course's ␣the row is y_5 = [-0.248, -0.248, -0.248, 3.088]."""
    got = student.wired("block", X, PARAMS, use_attention=False)
    expected = np.array(reference.block(X, PARAMS, use_attention=False), dtype=np.float64)
    expected[4] = Y5_NO_ATTENTION
    assert_close(got, expected,
                  **COURSE,
                  what="block of the course's toy X with use_attention=False (h = x, so y = x + "
                       "mlp(layernorm(x)); row 5 must be [-0.248, -0.248, -0.248, 3.088], to 3 decimals)",
                  diagnose=mistakes.block(X, PARAMS, use_attention=False))


@pytest.mark.wiring
@pytest.mark.points(1.5)
def test_block_attention_off_with_gamma_and_beta(student, reference, mistakes):
    """use_attention=False skips the attention branch: y = x + mlp(layernorm(x, gamma_2, beta_2))."""
    rng = np.random.default_rng(402)
    x = rng.normal(size=(4, 8))
    params = random_params(rng, 8, 32)
    got = student.wired("block", x, params, 2, use_attention=False)
    assert_close(got, reference.block(x, params, 2, use_attention=False),
                  what="block of a 4×8 input with use_attention=False and given gamma/beta "
                       "(y = x + mlp(layernorm(x, gamma_2, beta_2), W_1, W_2))",
                  diagnose=mistakes.block(x, params, 2, use_attention=False))


@pytest.mark.wiring
@pytest.mark.points(1.5)
def test_block_changing_last_token_leaves_earlier_rows_unchanged(student, reference, mistakes):
    """Changing only the last token of the block's input changes only the last output row."""
    rng = np.random.default_rng(403)
    x = rng.normal(size=(6, 8))
    params = random_params(rng, 8, 32)
    x_changed = x.copy()
    x_changed[-1] += 2.0 * rng.normal(size=8)
    got = student.wired("block", x_changed, params, 2)
    expected = np.array(reference.block(x, params, 2), dtype=np.float64)
    expected[-1] = reference.block(x_changed, params, 2)[-1]
    assert_close(got, expected,
                  what="block (6 tokens, 2 heads) after changing only the last token: rows 0 to 4 must "
                       "stay as before",
                  diagnose=mistakes.block(x_changed, params, 2))


@pytest.mark.wiring
@pytest.mark.points(2.5)
def test_block_two_heads_random_weights_gamma_and_beta(student, reference, mistakes):
    """A block with 2 heads, random weights and random gamma_1, beta_1, gamma_2, beta_2 on 6 tokens of width 8."""
    rng = np.random.default_rng(404)
    x = rng.normal(size=(6, 8))
    params = random_params(rng, 8, 32)
    got = student.wired("block", x, params, 2)
    assert_close(got, reference.block(x, params, 2),
                  what="block of a 6×8 input with 2 heads and given gamma/beta (h = x + attention(layernorm("
                       "x, gamma_1, beta_1)), y = h + mlp(layernorm(h, gamma_2, beta_2)))",
                  diagnose=mistakes.block(x, params, 2))


@pytest.mark.wiring
@pytest.mark.points(1.5)
def test_block_float32(student, reference, mistakes):
    """A float32 input with float32 weights gives the right values (float32 or float64 out)."""
    rng = np.random.default_rng(405)
    x = rng.normal(size=(5, 8)).astype(np.float32)
    params = {k: v.astype(np.float32) for k, v in random_params(rng, 8, 32).items()}
    got = student.wired("block", x, params, 2)
    expected = reference.block(x.astype(np.float64), {k: v.astype(np.float64) for k, v in params.items()}, 2)
    assert_close(got, expected, **F32,
                  what="block of a float32 5×8 input with float32 weights, 2 heads",
                  diagnose=mistakes.block(x, params, 2))


@pytest.mark.wiring
@pytest.mark.points(1.5)
def test_block_four_heads_default_gamma_and_beta(student, reference, mistakes):
    """A block with 4 heads and no gamma/beta in params (LayerNorm's defaults) on 5 tokens of width 12."""
    rng = np.random.default_rng(406)
    x = rng.normal(size=(5, 12))
    params = random_params(rng, 12, 48, affine=False)
    got = student.wired("block", x, params, 4)
    assert_close(got, reference.block(x, params, 4),
                  what="block of a 5×12 input with 4 heads, params without gamma/beta (use the defaults, "
                       "and pass n_heads on to attention)",
                  diagnose=mistakes.block(x, params, 4))


@pytest.mark.wiring
@pytest.mark.points(1.5)
def test_block_residual_keeps_a_large_row_large(student, reference, mistakes):
    """Pre-LN: the stream itself is never normalised, so a row 10 times larger stays about 10 times larger."""
    rng = np.random.default_rng(407)
    x = rng.normal(size=(4, 8))
    x[1] *= 10.0
    params = random_params(rng, 8, 32)
    got = student.wired("block", x, params, 2)
    assert_close(got, reference.block(x, params, 2),
                  what="block of a 4×8 input whose row 1 is 10 times larger (pre-LN: LayerNorm only on the "
                       "branch inputs, the residual adds to the un-normalised stream)",
                  diagnose=mistakes.block(x, params, 2))
