"""Hidden tests for modern_block(x, params, n_heads, n_kv_heads, use_attention=True).

The block is graded on its wiring only: every test runs the student's modern_block with the
reference's rmsnorm, gqa_attention and swiglu (grader.grading.phases). Aimed at: a residual missing,
the branches in the wrong order, gains not passed on or swapped, n_heads / n_kv_heads not passed on,
use_attention ignored; the course's d = 8 walk; causality over 64 tokens and 8 heads, inputs left
alone (properties, on the student's own outputs).
"""

import numpy as np
import pytest
from public.toy import HEADS, KV_HEADS, PARAMS, X

from grader.feedback.compare import (
    Mismatch,
    assert_array,
    assert_attempt,
    assert_close,
    assert_close_own,
)


def random_params(rng, d, n_heads, n_kv_heads, d_ff, gains=True):
    """Random modern-block weights (entries N(0, 1/fan_in)); with gains, random gain_1 and gain_2
    too."""
    kv = n_kv_heads * (d // n_heads)
    p = {
        name: rng.normal(scale=1 / np.sqrt(d), size=s)
        for name, s in [
            ("W_q", (d, d)),
            ("W_k", (d, kv)),
            ("W_v", (d, kv)),
            ("W_o", (d, d)),
            ("W_1", (d, d_ff)),
            ("W_3", (d, d_ff)),
        ]
    }
    p["W_2"] = rng.normal(scale=1 / np.sqrt(d_ff), size=(d_ff, d))
    if gains:
        p["gain_1"], p["gain_2"] = 1.0 + 0.5 * rng.normal(size=d), 1.0 + 0.5 * rng.normal(size=d)
    return p


@pytest.mark.points(3)
def test_modern_block_course_d8_walk_5_by_8(student, reference, mistakes):
    """The course's script end to end: x (5, 8) through RMSNorm, GQA (2 heads, 1 K/V), RMSNorm,
    SwiGLU (21): (5, 8)."""
    got = student.modern_block(X, PARAMS, HEADS, KV_HEADS)
    assert_close(
        got,
        reference.modern_block(X, PARAMS, HEADS, KV_HEADS),
        what="modern_block of the course's 5×8 x with the script's weights (no gains: their "
        "default)",
        diagnose=mistakes.modern_block(X, PARAMS, HEADS, KV_HEADS),
    )


@pytest.mark.points(2)
def test_modern_block_use_attention_off(student, reference, mistakes):
    """use_attention=False on the course's example: h = x, only the SwiGLU branch is added."""
    got = student.modern_block(X, PARAMS, HEADS, KV_HEADS, use_attention=False)
    assert_close(
        got,
        reference.modern_block(X, PARAMS, HEADS, KV_HEADS, use_attention=False),
        what="modern_block of the course's x with use_attention=False (h = x)",
        diagnose=mistakes.modern_block(X, PARAMS, HEADS, KV_HEADS, use_attention=False),
    )


@pytest.mark.points(3)
def test_modern_block_eight_heads_two_kv_heads_with_gains(student, reference, mistakes):
    """12 tokens of 16, 8 query heads, 2 K/V heads, SwiGLU of 40, random gains: every argument
    passed on."""
    rng = np.random.default_rng(331)
    x, p = rng.normal(size=(12, 16)), random_params(rng, 16, 8, 2, 40)
    assert_close(
        student.modern_block(x, p, 8, 2),
        reference.modern_block(x, p, 8, 2),
        what="modern_block of a 12×16 input, 8 heads, 2 K/V heads, gain_1 and gain_2 given",
        diagnose=mistakes.modern_block(x, p, 8, 2),
    )


@pytest.mark.property
@pytest.mark.points(2)
def test_modern_block_changing_last_token_leaves_earlier_rows_unchanged(student, reference):
    """64 tokens, 8 heads, 2 K/V heads: changing the last token changes only your last row."""
    rng = np.random.default_rng(332)
    x, p = rng.normal(size=(64, 16)), random_params(rng, 16, 8, 2, 40)
    changed = x.copy()
    changed[-1] = rng.normal(size=16)
    what = (
        "your modern_block of 64 tokens (8 heads, 2 K/V heads) after changing the last token: rows "
        "1 to 63 as before"
    )
    before = assert_array(student.modern_block(x, p, 8, 2), x.shape, what=what)
    assert_attempt(before, reference.modern_block(x, p, 8, 2), what=what)
    after = assert_array(student.modern_block(changed, p, 8, 2), x.shape, what=what)
    assert_close_own(after[:-1], before[:-1], what=what)
    if np.allclose(after[-1], before[-1], rtol=0, atol=1e-6):
        raise Mismatch(what, "your last row did not change")


@pytest.mark.property
@pytest.mark.points(1.5)
def test_modern_block_leaves_x_and_params_unchanged(student, reference):
    """modern_block leaves x and every entry of params as they were, and adds no key to params."""
    rng = np.random.default_rng(333)
    x, p = rng.normal(size=(5, 8)), random_params(rng, 8, 2, 1, 21, gains=False)
    got, after, _ = student.call_with_inputs("modern_block", x, p, 2, 1)
    assert_attempt(
        got,
        reference.modern_block(x, p, 2, 1),
        what="modern_block of a 5×8 input, whose inputs must stay",
    )
    assert_close(
        after[0],
        x,
        rtol=0.0,
        atol=0.0,
        what="x after calling modern_block (it must not be changed)",
    )
    if type(after[1]) is not dict or set(after[1]) != set(p):
        raise Mismatch(
            "params after calling modern_block",
            "its keys changed: read gain_1 and gain_2 with params.get",
        )
    for name in p:
        assert_close(
            after[1][name],
            p[name],
            rtol=0.0,
            atol=0.0,
            what=f"params[{name!r}] after calling modern_block",
        )


@pytest.mark.property
@pytest.mark.points(1.5)
def test_modern_block_attention_off_is_the_swiglu_branch_alone(student, reference):
    """With use_attention=False, the attention weights do not matter: W_q, W_k, W_v, W_o scaled by 3
    give your same output."""
    rng = np.random.default_rng(334)
    x, p = rng.normal(size=(6, 8)), random_params(rng, 8, 4, 2, 16)
    q = {**p, **{k: 3.0 * p[k] for k in ("W_q", "W_k", "W_v", "W_o")}}
    what = (
        "your modern_block with use_attention=False, attention weights scaled by 3 against as given"
    )
    own = student.modern_block(x, p, 4, 2, use_attention=False)
    assert_attempt(own, reference.modern_block(x, p, 4, 2, use_attention=False), what=what)
    assert_close_own(student.modern_block(x, q, 4, 2, use_attention=False), own, what=what)


@pytest.mark.points(2)
def test_modern_block_multi_head_kv_and_a_wide_swiglu(student, reference, mistakes):
    """4 query heads with 4 K/V heads (multi-head), SwiGLU of 48, random gains."""
    rng = np.random.default_rng(335)
    x, p = rng.normal(size=(9, 16)), random_params(rng, 16, 4, 4, 48)
    assert_close(
        student.modern_block(x, p, 4, 4),
        reference.modern_block(x, p, 4, 4),
        what="modern_block of a 9×16 input, 4 heads, 4 K/V heads, SwiGLU of 48, gains given",
        diagnose=mistakes.modern_block(x, p, 4, 4),
    )


@pytest.mark.property
@pytest.mark.points(1.5)
def test_modern_block_with_zero_output_weights_is_the_identity(student, reference):
    """W_o = 0 and W_2 = 0: both corrections vanish, and your block returns x (each branch is added
    to the stream)."""
    rng = np.random.default_rng(336)
    x, p = rng.normal(size=(6, 8)), random_params(rng, 8, 4, 2, 16)
    zero = {**p, "W_o": np.zeros((8, 8)), "W_2": np.zeros((16, 8))}
    what = "your modern_block with W_o = 0 and W_2 = 0 against x (y = x + 0 + 0)"
    assert_attempt(student.modern_block(x, p, 4, 2), reference.modern_block(x, p, 4, 2), what=what)
    assert_close(student.modern_block(x, zero, 4, 2), x, what=what)
