"""Hidden tests for gqa_attention(u, W_q, W_k, W_v, W_o, n_heads, n_kv_heads, causal=True).

Aimed at: K/V heads tiled instead of repeated (visible only with 1 < n_kv_heads < n_heads), every
query head on one K/V head, scores / sqrt(d) instead of sqrt(d_head); the course's d = 8 walk;
n_kv_heads = n_heads is multi-head attention (checked against an independent formula written here,
head by head, without the reference); n_kv_heads = 1 (multi-query); causality over 64 tokens and 8
heads, inputs left alone, float32 (properties).
"""

import math

import numpy as np
import pytest
from public.toy import HEADS, KV_HEADS, W_k, W_o, W_q, W_v, X

from grader.feedback.compare import (
    Mismatch,
    assert_array,
    assert_attempt,
    assert_close,
    assert_close_own,
)


def weights(rng, d, n_heads, n_kv_heads):
    """Random W_q, W_k, W_v, W_o (entries N(0, 1/d)), W_k and W_v of n_kv_heads heads of d //
    n_heads."""
    kv = n_kv_heads * (d // n_heads)
    return tuple(
        rng.normal(scale=1 / np.sqrt(d), size=s) for s in [(d, d), (d, kv), (d, kv), (d, d)]
    )


def multi_head(u, W_q, W_k, W_v, W_o, n_heads):
    """The-block's causal multi-head attention, written out again: head h on columns
    h*d_head:(h+1)*d_head."""
    n, d = u.shape
    d_head = d // n_heads
    q, k, v = u @ W_q, u @ W_k, u @ W_v
    out = np.zeros((n, d))
    for h in range(n_heads):
        s = slice(h * d_head, (h + 1) * d_head)
        for i in range(n):
            scores = [float(q[i, s] @ k[j, s]) / math.sqrt(d_head) for j in range(i + 1)]
            top = max(scores)
            e = [math.exp(t - top) for t in scores]
            out[i, s] = sum(w / sum(e) * v[j, s] for j, w in enumerate(e))
    return out @ W_o


@pytest.mark.points(2.5)
def test_gqa_course_d8_walk(student, reference, mistakes):
    """The course's walk: Q (2, 5, 4), K and V (1, 5, 4) repeated to (2, 5, 4), weights (2, 5, 5),
    out (5, 8)."""
    u = X / np.sqrt((X**2).mean(axis=-1, keepdims=True) + 1e-6)
    got = student.gqa_attention(u, W_q, W_k, W_v, W_o, HEADS, KV_HEADS)
    assert_close(
        got,
        reference.gqa_attention(u, W_q, W_k, W_v, W_o, HEADS, KV_HEADS),
        what="gqa_attention of the course's u = rmsnorm(x) (5×8), 2 query heads sharing 1 K/V head",
        diagnose=mistakes.gqa_attention(u, W_q, W_k, W_v, W_o, HEADS, KV_HEADS),
    )


@pytest.mark.points(1)
def test_gqa_square_input(student, reference, mistakes):
    """8 tokens of width 8, 4 query heads of 2 and 2 K/V heads: the scores are 8×8 like the input,
    so only the axes tell the queries from the keys and the tokens from the features."""
    rng = np.random.default_rng(330)
    u, w = 1.5 * rng.normal(size=(8, 8)), weights(rng, 8, 4, 2)
    assert_close(
        student.gqa_attention(u, *w, 4, 2),
        reference.gqa_attention(u, *w, 4, 2),
        what="gqa_attention of an 8×8 input, 4 query heads, 2 K/V heads (as many tokens as "
        "features: the softmax over the keys, the last axis)",
        diagnose=mistakes.gqa_attention(u, *w, 4, 2),
    )


@pytest.mark.points(2.5)
def test_gqa_with_n_kv_heads_equal_to_n_heads_is_multi_head_attention(student, mistakes):
    """n_kv_heads = n_heads = 4: every query head has its own K/V head, the-block's attention (an
    independent formula, head by head, is the expected value)."""
    rng = np.random.default_rng(321)
    u, w = rng.normal(size=(7, 12)), weights(rng, 12, 4, 4)
    assert_close(
        student.gqa_attention(u, *w, 4, 4),
        multi_head(u, *w, 4),
        what="gqa_attention of a 7×12 input with 4 query heads and 4 K/V heads (multi-head "
        "attention)",
        diagnose=mistakes.gqa_attention(u, *w, 4, 4),
    )


@pytest.mark.points(1.5)
def test_gqa_multi_query_one_kv_head(student, reference, mistakes):
    """n_kv_heads = 1, 8 query heads (multi-query attention): all eight read the one K/V head."""
    rng = np.random.default_rng(322)
    u, w = rng.normal(size=(9, 16)), weights(rng, 16, 8, 1)
    assert_close(
        student.gqa_attention(u, *w, 8, 1),
        reference.gqa_attention(u, *w, 8, 1),
        what="gqa_attention of a 9×16 input with 8 query heads and 1 K/V head (W_k, W_v 16×2)",
        diagnose=mistakes.gqa_attention(u, *w, 8, 1),
    )


@pytest.mark.points(2.5)
def test_gqa_eight_heads_two_kv_heads_repeat_not_tile(student, reference, mistakes):
    """8 query heads, 2 K/V heads: heads 0-3 read K/V head 0 and heads 4-7 head 1 (np.tile gives 0,
    1, 0, 1, ...)."""
    rng = np.random.default_rng(323)
    u, w = rng.normal(size=(10, 16)), weights(rng, 16, 8, 2)
    assert_close(
        student.gqa_attention(u, *w, 8, 2),
        reference.gqa_attention(u, *w, 8, 2),
        what="gqa_attention of a 10×16 input with 8 query heads and 2 K/V heads "
        "(head h reads K/V head h // 4)",
        diagnose=mistakes.gqa_attention(u, *w, 8, 2),
    )


@pytest.mark.points(1)
def test_gqa_scaled_by_sqrt_d_head(student, reference, mistakes):
    """Large scores, 4 heads of 4 and 2 K/V heads: the scores are divided by sqrt(d_head) = 2, not
    sqrt(d) = 4."""
    rng = np.random.default_rng(324)
    u, w = 2.0 * rng.normal(size=(6, 16)), weights(rng, 16, 4, 2)
    assert_close(
        student.gqa_attention(u, *w, 4, 2),
        reference.gqa_attention(u, *w, 4, 2),
        what="gqa_attention of a 6×16 input, 4 heads of 4, 2 K/V heads (scores / sqrt(d_head))",
        diagnose=mistakes.gqa_attention(u, *w, 4, 2),
    )


@pytest.mark.property
@pytest.mark.points(2)
def test_gqa_changing_last_token_leaves_earlier_rows_unchanged(student, reference):
    """64 tokens, 8 heads, 2 K/V heads: changing the last token changes only your last row."""
    rng = np.random.default_rng(325)
    u, w = rng.normal(size=(64, 16)), weights(rng, 16, 8, 2)
    changed = u.copy()
    changed[-1] = rng.normal(size=16)
    what = (
        "your gqa_attention of 64 tokens (8 heads, 2 K/V heads) after changing the last token: "
        "rows 1 to 63 "
        "as before"
    )
    before = assert_array(student.gqa_attention(u, *w, 8, 2), u.shape, what=what)
    assert_attempt(before, reference.gqa_attention(u, *w, 8, 2), what=what)
    after = assert_array(student.gqa_attention(changed, *w, 8, 2), u.shape, what=what)
    assert_close_own(after[:-1], before[:-1], what=what)
    if np.allclose(after[-1], before[-1], rtol=0, atol=1e-6):
        raise Mismatch(what, "your last row did not change: the last token sees itself")


@pytest.mark.property
@pytest.mark.points(1)
def test_gqa_leaves_its_inputs_unchanged(student, reference):
    """gqa_attention leaves u and the four weights as they were."""
    rng = np.random.default_rng(326)
    u, w = rng.normal(size=(5, 8)), weights(rng, 8, 4, 2)
    got, after, _ = student.call_with_inputs("gqa_attention", u, *w, 4, 2)
    assert_attempt(
        got,
        reference.gqa_attention(u, *w, 4, 2),
        what="gqa_attention of a 5×8 input, 4 heads, 2 K/V heads, whose inputs must stay as they "
        "were",
    )
    for name, before, a in zip(("u", "W_q", "W_k", "W_v", "W_o"), (u, *w), after):
        assert_close(
            a,
            before,
            rtol=0.0,
            atol=0.0,
            what=f"{name} after calling gqa_attention (it must not change)",
        )


@pytest.mark.property
@pytest.mark.points(1)
def test_gqa_float32_input_to_float32_precision(student, reference):
    """float32 input and weights give a float array with the values float64 gives, to float32
    precision."""
    rng = np.random.default_rng(327)
    u, w = rng.normal(size=(6, 8)), weights(rng, 8, 4, 2)
    what = "gqa_attention of a float32 6×8 input with float32 weights, against float64"
    got = assert_array(
        student.gqa_attention(u.astype(np.float32), *(t.astype(np.float32) for t in w), 4, 2),
        u.shape,
        (np.float32, np.float64),
        what=what,
    )
    own = student.gqa_attention(u, *w, 4, 2)
    assert_attempt(own, reference.gqa_attention(u, *w, 4, 2), what=what)
    assert_close_own(got, own, rtol=1e-4, atol=1e-5, what=what)


@pytest.mark.property
@pytest.mark.points(2)
def test_gqa_is_multi_head_attention_with_each_kv_head_repeated(student, reference):
    """8 query heads on 2 K/V heads give, on your own outputs, what 8 heads with W_k and W_v's
    column blocks repeated for their groups (each K/V head copied 4 times, then n_kv_heads = 8)
    give."""
    rng = np.random.default_rng(328)
    u, (w_q, w_k, w_v, w_o) = rng.normal(size=(7, 16)), weights(rng, 16, 8, 2)
    wide_k, wide_v = (np.repeat(w.reshape(16, 2, 2), 4, axis=1).reshape(16, 16) for w in (w_k, w_v))
    what = (
        "your gqa_attention with 8 heads and 2 K/V heads against yours with 8 K/V heads made of "
        "each K/V head's "
        "columns repeated 4 times (query head h reads K/V head h // 4)"
    )
    own = student.gqa_attention(u, w_q, w_k, w_v, w_o, 8, 2)
    assert_attempt(own, reference.gqa_attention(u, w_q, w_k, w_v, w_o, 8, 2), what=what)
    assert_close_own(own, student.gqa_attention(u, w_q, wide_k, wide_v, w_o, 8, 8), what=what)


@pytest.mark.property
@pytest.mark.points(1.5)
def test_gqa_without_the_mask_follows_the_tokens_order(student, reference):
    """causal=False: shuffling the tokens shuffles your output rows the same way (attention has no
    order of its own)."""
    rng = np.random.default_rng(329)
    u, w = rng.normal(size=(6, 8)), weights(rng, 8, 4, 2)
    order = np.array([3, 0, 5, 1, 4, 2])
    what = (
        "your gqa_attention (causal=False) of 6 shuffled tokens against your rows of the "
        "unshuffled ones, shuffled"
    )
    own = assert_array(student.gqa_attention(u, *w, 4, 2, causal=False), u.shape, what=what)
    assert_attempt(own, reference.gqa_attention(u, *w, 4, 2, causal=False), what=what)
    assert_close_own(student.gqa_attention(u[order], *w, 4, 2, causal=False), own[order], what=what)
