"""Public tests for gqa_attention(u, W_q, W_k, W_v, W_o, n_heads, n_kv_heads, causal=True): query
head h reads K/V head h // (n_heads // n_kv_heads), scores / sqrt(d_head), causal mask, heads
concatenated in order, then @ W_o.

Value tests compare with numbers computed once from a correct solution (10 significant digits);
property tests (@pytest.mark.property) check a rule on your own outputs only (causality), so a slip
in the values keeps them.
"""

import numpy as np
import pytest

from grader.feedback.compare import Mismatch, assert_array, assert_close, assert_raises
from public.toy import HEADS, KV_HEADS, W_k, W_o, W_q, W_v, X

U8 = X / np.sqrt((X**2).mean(axis=-1, keepdims=True) + 1e-6)  # the script's u = rmsnorm(x), 5×8


def pattern(rows, cols, seed):
    """Fixed weights with one decimal each (a seeded draw, so the file stays short)."""
    return np.random.default_rng(seed).uniform(-1, 1, (rows, cols)).round(1)


# 6 tokens of width 8, 4 query heads of 2, 2 K/V heads: query heads 0, 1 read K/V head 0 and 2, 3
# read head 1
# (repeat); np.tile would give 0, 1, 0, 1, which these weights tell apart.
U6 = pattern(6, 8, 1)
G = {
    "W_q": pattern(8, 8, 2),
    "W_k": pattern(8, 4, 3),
    "W_v": pattern(8, 4, 4),
    "W_o": pattern(8, 8, 5),
}
LONG = pattern(16, 8, 6)


@pytest.mark.points(2)
def test_gqa_course_d8_walk_two_query_heads_one_kv_head(student, mistakes):
    """The course's attention: u = rmsnorm(x) of 5 tokens, d = 8, 2 query heads of 4 sharing 1 K/V
    head."""
    got = student.gqa_attention(U8, W_q, W_k, W_v, W_o, HEADS, KV_HEADS)
    assert_close(
        got,
        [
            [
                -0.7479141561,
                -0.1558820096,
                -1.452664612,
                -0.1627436907,
                0.2544476461,
                0.1015011104,
                -0.6512598585,
                -0.9818896528,
            ],
            [
                -0.3740578282,
                -0.4917431487,
                -1.949960307,
                0.0140102095,
                0.9837264208,
                0.7042672026,
                -0.1403349389,
                -0.5120390229,
            ],
            [
                -0.3764848251,
                -0.8789319112,
                -1.051156152,
                -0.08432858584,
                1.230904069,
                0.6577452888,
                0.2045478931,
                -0.1177300479,
            ],
            [
                -0.5286916266,
                -0.8384581321,
                -0.5848896424,
                -0.180824601,
                0.6216060417,
                0.4186072682,
                -0.1599873462,
                -0.2282335636,
            ],
            [
                -0.6929062432,
                -0.9844526024,
                -0.004391709146,
                -0.2063321695,
                0.3661120852,
                0.2772789292,
                -0.3011607183,
                -0.1085583464,
            ],
        ],
        what="gqa_attention of the course's u (5×8) with W_k, W_v 8×4, "
        "2 query heads and 1 K/V head",
        diagnose=mistakes.gqa_attention(U8, W_q, W_k, W_v, W_o, HEADS, KV_HEADS),
    )


@pytest.mark.points(2)
def test_gqa_four_query_heads_two_kv_heads(student, mistakes):
    """4 query heads of 2 and 2 K/V heads: heads 0 and 1 share K/V head 0, heads 2 and 3 share K/V
    head 1."""
    got = student.gqa_attention(U6, G["W_q"], G["W_k"], G["W_v"], G["W_o"], 4, 2)
    assert_close(
        got,
        [
            [-1.307, 0.132, -1.77, 1.32, 0.594, 1.116, -1.416, 2.875],
            [
                -0.9721106667,
                0.8644143823,
                -1.149069153,
                0.6660535757,
                0.1735781139,
                0.6410334003,
                -0.3282565157,
                1.444257987,
            ],
            [
                0.6369696761,
                -1.207567255,
                0.9215022769,
                0.3991187207,
                0.7361245392,
                -0.01611817068,
                -0.2424412377,
                -0.02422126072,
            ],
            [
                0.8629574197,
                -0.8885342969,
                0.4906324333,
                -0.5285201545,
                0.4834372816,
                -0.9937836092,
                -0.614752517,
                -0.02419672415,
            ],
            [
                -1.184092512,
                1.183329712,
                -1.435424039,
                0.6859694554,
                -0.6800029909,
                1.104335109,
                -0.1790817307,
                1.412858394,
            ],
            [
                0.07915328366,
                -0.4206049656,
                -0.3098618818,
                -0.08778232611,
                0.3046049006,
                -0.6323645931,
                -0.3486090276,
                0.3913068064,
            ],
        ],
        what="gqa_attention of a 6×8 input, 4 query heads, 2 K/V heads (head h reads K/V head h // "
        "2: "
        "repeat each K/V head, do not tile)",
        diagnose=mistakes.gqa_attention(U6, G["W_q"], G["W_k"], G["W_v"], G["W_o"], 4, 2),
    )


@pytest.mark.points(1)
def test_gqa_without_the_causal_mask(student, mistakes):
    """causal=False lets every token see every token."""
    got = student.gqa_attention(U6, G["W_q"], G["W_k"], G["W_v"], G["W_o"], 4, 2, causal=False)
    assert_close(
        got,
        [
            [
                -0.6586407166,
                1.43453088,
                -1.358571843,
                0.2096278348,
                -1.275488141,
                0.7018595439,
                -0.3268053804,
                0.6114397848,
            ],
            [
                -0.2354922692,
                0.04383894091,
                0.009975512559,
                0.1367538231,
                -0.1112376774,
                0.2958281509,
                0.2655353469,
                0.2329286645,
            ],
            [
                -0.07324420329,
                -0.07449789763,
                0.03529755572,
                -0.1141332953,
                -0.1134746757,
                -0.06015293189,
                0.2121116663,
                -0.03766628673,
            ],
            [
                0.5971782503,
                -0.6693689759,
                -0.01636634514,
                -0.4571959312,
                0.2736602538,
                -0.928599443,
                -0.8067515628,
                0.3762932118,
            ],
            [
                -0.9614797786,
                1.316279865,
                -1.286715917,
                0.3884443013,
                -0.9881499359,
                0.9103467299,
                -0.05882075014,
                0.8349333259,
            ],
            [
                0.07915328366,
                -0.4206049656,
                -0.3098618818,
                -0.08778232611,
                0.3046049006,
                -0.6323645931,
                -0.3486090276,
                0.3913068064,
            ],
        ],
        what="gqa_attention of a 6×8 input, 4 query heads, 2 K/V heads, causal=False",
        diagnose=mistakes.gqa_attention(
            U6, G["W_q"], G["W_k"], G["W_v"], G["W_o"], 4, 2, causal=False
        ),
    )


@pytest.mark.property
@pytest.mark.points(0.5)
def test_gqa_n_kv_heads_must_divide_n_heads(student):
    """4 query heads cannot be shared out among 3 K/V heads: ValueError (counted when 2 K/V heads
    raise nothing: a gqa_attention that always raises earns nothing here)."""
    assert_array(
        student.gqa_attention(U6, G["W_q"], G["W_k"], G["W_v"], G["W_o"], 4, 2),
        (6, 8),
        what="gqa_attention with n_heads = 4 and n_kv_heads = 2, before 3 K/V heads (2 divides 4)",
    )
    w = pattern(8, 6, 7)
    assert_raises(
        lambda: student.gqa_attention(U6, G["W_q"], w, w, G["W_o"], 4, 3),
        ValueError,
        what="gqa_attention with n_heads = 4 and n_kv_heads = 3 (3 does not divide 4)",
    )


@pytest.mark.property
@pytest.mark.points(1)
def test_gqa_changing_token_8_of_16_leaves_rows_0_to_7_unchanged(student):
    """Causality, on your own outputs: changing token 8 of 16 changes none of your rows 0 to 7, and
    does reach the last row."""
    changed = LONG.copy()
    changed[8] = [1.5, -2.0, 0.5, 1.0, -1.0, 2.0, 0.0, 0.5]
    what = (
        "your gqa_attention of 16 tokens (4 query heads, 2 K/V heads) after changing token 8: rows "
        "0 to 7 as before"
    )
    args = (G["W_q"], G["W_k"], G["W_v"], G["W_o"], 4, 2)
    before = assert_array(student.gqa_attention(LONG, *args), (16, 8), what=what)
    after = assert_array(student.gqa_attention(changed, *args), (16, 8), what=what)
    assert_close(after[:8], before[:8], what=what)
    if np.allclose(after[-1], before[-1], rtol=0, atol=1e-6):
        raise Mismatch(
            what, "your last row did not change either: the last token attends to token 8"
        )
