"""Hidden tests for mlp(u, W_1, W_2) and the pre-LN block(x, params, n_heads=1, use_attention=True).

The block problem grades the wiring only: every test runs the student's block (or mlp) with the
reference's layernorm, attention and gelu (grader.grading.phases), so a fault inside a component
costs points in that component's problem, never here. Value tests compare with the reference;
property tests (@pytest.mark.property) check a rule on the student's own outputs (causality, x and
params left alone, the attention branch really skipped), so a slip in the values keeps them.
Aimed at: post-LN instead of pre-LN, a missing residual, use_attention ignored (or attention
computed and thrown away), gamma/beta not passed on, n_heads not passed on, GELU in the wrong place
(random MLP weights: the course's W_1 = [I | -I], W_2 = [I ; I] make u @ W_1 @ W_2 = 0), the causal
order of the whole block over 64 tokens, x or params modified in place, float64 precision (float32:
the public suite); and the course's m_5, y_5 and "attention off" rows. Inputs stay moderate (scores
far below exp's overflow), so components without max subtraction still compose.
"""

import numpy as np
import pytest
from public.test_attention import float_array, judgeable
from public.toy import (
    COURSE,
    COURSE_ROUNDED,
    F64,
    LN_H5,
    M5,
    PARAMS,
    W_1,
    W_2,
    Y5,
    Y5_NO_ATTENTION,
    X,
)

from grader.errors import StudentError
from grader.feedback.compare import Mismatch, assert_attempt, assert_close


def random_params(rng, d, d_ff, affine=True):
    """Random block weights (entries N(0, 1/fan_in)); with affine, random gamma_1, beta_1, gamma_2,
    beta_2 too."""
    p = {
        name: rng.normal(scale=1 / np.sqrt(d), size=(d, d)) for name in ("W_q", "W_k", "W_v", "W_o")
    }
    p["W_1"] = rng.normal(scale=1 / np.sqrt(d), size=(d, d_ff))
    p["W_2"] = rng.normal(scale=1 / np.sqrt(d_ff), size=(d_ff, d))
    if affine:
        for i in (1, 2):
            p[f"gamma_{i}"] = 1.0 + 0.5 * rng.normal(size=d)
            p[f"beta_{i}"] = 0.5 * rng.normal(size=d)
    return p


def same_array(after, before) -> bool:
    return (
        type(after) is np.ndarray
        and after.dtype == before.dtype
        and after.shape == before.shape
        and np.array_equal(after, before)
    )


# ---------------------------------------------------------------------------------------------- mlp


@pytest.mark.points(1)
def test_mlp_course_m5_for_the(student, mistakes):
    """The course's MLP with W_1 = [I | -I], W_2 = [I ; I] turns u'_5 into m_5 = [0.803, 0.640,
    0.560, 0.718]."""
    u = LN_H5[None, :]
    got = student.mlp(u, W_1, W_2)
    assert_close(
        got,
        M5[None, :],
        **COURSE_ROUNDED,
        what="mlp of the course's u'_5 = [-1.102, 0.964, -0.892, 1.030] with W_1 = [I | -I] and "
        "W_2 = [I ; I] (the course's m_5, to 3 decimals)",
        diagnose=mistakes.mlp(u, W_1, W_2),
    )


@pytest.mark.points(1.5)
def test_mlp_random_wide_hidden_layer(student, reference, mistakes):
    """mlp of 5 tokens of width 6 through a hidden layer of 24 (random weights: GELU must sit
    between them)."""
    rng = np.random.default_rng(401)
    u = rng.normal(size=(5, 6))
    w_1, w_2 = rng.normal(scale=0.6, size=(6, 24)), rng.normal(scale=0.3, size=(24, 6))
    got = student.mlp(u, w_1, w_2)
    assert_close(
        got,
        reference.mlp(u, w_1, w_2),
        what="mlp of a 5×6 input with W_1 6×24 and W_2 24×6 (gelu(u @ W_1) @ W_2)",
        diagnose=mistakes.mlp(u, w_1, w_2),
    )


# ------------------------------------------------------------------------------------- block values


@pytest.mark.points(1)
def test_block_course_y5_for_the(student, reference, mistakes):
    """The block on the course's example gives y_5 = [-0.436, 1.551, -0.461, 1.698] for ␣the."""
    got = student.block(X, PARAMS)
    expected = np.array(reference.block(X, PARAMS), dtype=np.float64)
    expected[4] = Y5
    assert_close(
        got,
        expected,
        **COURSE,
        what="block of the course's toy X with the toy weights (row 5 must be the course's "
        "y_5 = [-0.436, 1.551, -0.461, 1.698], to 3 decimals)",
        diagnose=mistakes.block(X, PARAMS),
    )


@pytest.mark.points(1)
def test_block_attention_off_course_row(student, reference, mistakes):
    """With use_attention=False the course's ␣the row is y_5 = [-0.248, -0.248, -0.248, 3.088]."""
    got = student.block(X, PARAMS, use_attention=False)
    expected = np.array(reference.block(X, PARAMS, use_attention=False), dtype=np.float64)
    expected[4] = Y5_NO_ATTENTION
    assert_close(
        got,
        expected,
        **COURSE,
        what="block of the course's toy X with use_attention=False (h = x, so y = x + "
        "mlp(layernorm(x)); row 5 must be [-0.248, -0.248, -0.248, 3.088], to 3 decimals)",
        diagnose=mistakes.block(X, PARAMS, use_attention=False),
    )


@pytest.mark.points(1.5)
def test_block_four_heads_default_gamma_and_beta(student, reference, mistakes):
    """A block with 4 heads and no gamma/beta in params (LayerNorm's defaults) on 5 tokens of width
    12."""
    rng = np.random.default_rng(406)
    x = rng.normal(size=(5, 12))
    params = random_params(rng, 12, 48, affine=False)
    got = student.block(x, params, 4)
    assert_close(
        got,
        reference.block(x, params, 4),
        what="block of a 5×12 input with 4 heads, params without gamma/beta (use the defaults, "
        "and pass n_heads on to attention)",
        diagnose=mistakes.block(x, params, 4),
    )


@pytest.mark.points(1.5)
def test_block_residual_keeps_a_large_row_large(student, reference, mistakes):
    """Pre-LN: the stream itself is never normalised, so a row 10 times larger stays about 10 times
    larger."""
    rng = np.random.default_rng(407)
    x = rng.normal(size=(4, 8))
    x[1] *= 10.0
    params = random_params(rng, 8, 32)
    got = student.block(x, params, 2)
    assert_close(
        got,
        reference.block(x, params, 2),
        what="block of a 4×8 input whose row 1 is 10 times larger (pre-LN: LayerNorm only on the "
        "branch inputs, the residual adds to the un-normalised stream)",
        diagnose=mistakes.block(x, params, 2),
    )


@pytest.mark.points(2.5)
def test_block_two_heads_random_weights_gamma_and_beta(student, reference, mistakes):
    """Every row of a 64-token block with 2 heads, random weights and random gamma_1, beta_1,
    gamma_2, beta_2 (d = 24, d_ff = 96)."""
    rng = np.random.default_rng(409)
    x = rng.normal(size=(64, 24))
    params = random_params(rng, 24, 96)
    got = student.block(x, params, 2)
    assert_close(
        got,
        reference.block(x, params, 2),
        what="block of a 64×24 input with 2 heads, d_ff = 96 and given gamma/beta (h = x + "
        "attention(layernorm("
        "x, gamma_1, beta_1)), y = h + mlp(layernorm(h, gamma_2, beta_2)); every row compared)",
        diagnose=mistakes.block(x, params, 2),
    )


@pytest.mark.points(0.5)
def test_block_float64_precision_throughout(student, reference, mistakes):
    """float64 input is computed in float64 from start to end: the one block test a float32 step
    inside fails."""
    rng = np.random.default_rng(410)
    x = rng.normal(size=(7, 12))
    params = random_params(rng, 12, 48)
    got = student.block(x, params, 3)
    assert_close(
        got,
        reference.block(x, params, 3),
        **F64,
        what="block of a float64 7×12 input with 3 heads, to float64 precision (relative 1e-10: no "
        "float32 array or cast anywhere inside)",
        diagnose=mistakes.block(x, params, 3),
    )


# --------------------------------------------------------------------------------- block properties


@pytest.mark.property
@pytest.mark.points(2)
def test_block_changing_token_40_of_64_leaves_rows_0_to_39_unchanged(student, reference):
    """Causality through the block, on your own outputs: changing token 40 of 64 changes none of
    your rows 0 to 39, and it does reach the last row (through attention: a block that never mixes
    tokens earns nothing)."""
    rng = np.random.default_rng(403)
    x = rng.normal(size=(64, 16))
    params = random_params(rng, 16, 64)
    changed = x.copy()
    changed[40] += 2.0 * rng.normal(size=16)
    what = (
        "your block of 64 tokens (d = 16, 2 heads) after changing one token in the middle: your "
        "rows before it "
        "must stay as they were"
    )
    before = float_array(student.block(x, params, 2), (64, 16), what)
    assert_attempt(before, reference.block(x, params, 2), what=what)
    after = float_array(student.block(changed, params, 2), (64, 16), what)
    assert_close(after[:40], before[:40], what=what)
    if np.allclose(after[-1], before[-1], rtol=0, atol=1e-6):
        raise Mismatch(
            what, "your last row did not change either: the last token attends to the changed one"
        )


@pytest.mark.property
@pytest.mark.points(2.5)
def test_block_leaves_x_and_params_unchanged(student, reference):
    """block never writes into x, into any array of params, or into the dict itself (no key added or
    removed)."""
    rng = np.random.default_rng(411)
    x = rng.normal(size=(5, 8))
    params = random_params(
        rng, 8, 32, affine=False
    )  # gamma and beta left out: a block must not add them
    got, args, _ = student.call_with_inputs("block", x, params, 2)
    what = (
        "x and params after your block of a 5×8 input with 2 heads (each must be exactly as it was "
        "given)"
    )
    judgeable(got, x, what)
    assert_attempt(got, reference.block(x, params, 2), what=what)
    if not same_array(args[0], x):
        raise Mismatch(
            what, "x was modified: the residual makes a new array (h = x + ..., never x += ...)"
        )
    left = args[1]
    if type(left) is not dict or set(left) != set(params):
        raise Mismatch(
            what,
            "params was modified: keys were added or removed (read optional entries with "
            "params.get, never params.setdefault or params[...] = ...)",
        )
    for key, value in params.items():
        if not same_array(left[key], value):
            raise Mismatch(what, f"params[{key!r}] was modified: never write into the weights")


@pytest.mark.property
@pytest.mark.points(2)
def test_block_attention_off_never_calls_attention(student, reference, mistakes):
    """use_attention=False skips the attention branch: y = x + mlp(layernorm(x, gamma_2, beta_2)),
    and attention is never called (not even to throw its result away): here W_q, W_k, W_v and W_o
    are 3×3, which no attention of a width-8 input can use, so a block that computes the branch
    anyway raises. Such a block is then run with weights attention can use, so that what it computes
    says which mistake it makes (an exception says none)."""
    rng = np.random.default_rng(402)
    x = rng.normal(size=(4, 8))
    params = random_params(rng, 8, 32)
    unusable = {**params, **{name: np.zeros((3, 3)) for name in ("W_q", "W_k", "W_v", "W_o")}}
    what = (
        "block of a 4×8 input with use_attention=False, given gamma/beta and attention weights no "
        "attention can "
        "use (y = x + mlp(layernorm(x, gamma_2, beta_2), W_1, W_2); attention is never called)"
    )
    expected = reference.block(x, params, 2, use_attention=False)
    try:
        got = student.block(x, unusable, 2, use_attention=False)
    except StudentError as err:
        if err.kind != "raised":
            raise
        called = (
            "block of a 4×8 input with use_attention=False: with attention weights no attention "
            "can use your block raised (it called attention); with usable ones it gives"
        )
        assert_close(
            student.block(x, params, 2, use_attention=False),
            expected,
            what=f"{called} other values (skip the branch: h = x)",
            diagnose=mistakes.block(x, params, 2, use_attention=False),
        )
        raise Mismatch(
            f"{called} the right values",
            "attention was called and its result thrown away: "
            "with use_attention=False do not call it at all",
        ) from None
    assert_close(
        got, expected, what=what, diagnose=mistakes.block(x, params, 2, use_attention=False)
    )
