"""Public tests for modern_block(x, params, n_heads, n_kv_heads, use_attention=True):
h = x + gqa_attention(rmsnorm(x, gain_1), ...) (or h = x), y = h + swiglu(rmsnorm(h, gain_2), W_1,
W_3, W_2).

When graded, your modern_block runs with the course's own rmsnorm, gqa_attention and swiglu (in
place of yours, however your code holds them), so a mistake inside those costs points in their own
problems, never here. Here, in grade check, it runs with yours.
"""

import numpy as np
import pytest

from grader.feedback.compare import Mismatch, assert_array, assert_close, assert_close_own
from public.toy import HEADS, KV_HEADS, PARAMS, X

# The toy's weights with gain_1 and gain_2 given as ones: a block may pass the default on either
# way.
TOY = {**PARAMS, "gain_1": np.ones(8), "gain_2": np.ones(8)}
_rng = np.random.default_rng(21)
GAINS = {
    **PARAMS,
    "gain_1": 1 + _rng.uniform(-0.5, 0.5, 8).round(1),
    "gain_2": 1 + _rng.uniform(-0.5, 0.5, 8).round(1),
}
LONG_X = np.random.default_rng(22).normal(size=(16, 8))


@pytest.mark.points(3)
def test_modern_block_course_d8_walk(student, mistakes):
    """The course's script: 5 tokens, d = 8, 2 query heads, 1 K/V head, SwiGLU of 21: (5, 8) in, (5,
    8) out."""
    got = student.modern_block(X, TOY, HEADS, KV_HEADS)
    assert_close(
        got,
        [
            [
                -1.230154467,
                1.341982149,
                -1.792183901,
                -0.9828663987,
                1.107944012,
                1.371167696,
                -2.770499825,
                -1.315816142,
            ],
            [
                -0.5183813827,
                0.4445588704,
                -1.573516413,
                0.3253088464,
                0.7458167864,
                2.737660936,
                1.017521814,
                -1.28531196,
            ],
            [
                1.089904292,
                -1.707520175,
                -1.852408733,
                -2.995145138,
                1.786166577,
                1.356813499,
                1.511811906,
                0.2464358191,
            ],
            [
                -0.2644582553,
                -1.224251036,
                0.04328096563,
                0.4786665204,
                2.512655103,
                -0.2513052167,
                -0.7521644705,
                0.7656171481,
            ],
            [
                1.196948782,
                -1.078063017,
                -0.1644102876,
                -1.204018203,
                -0.05149939981,
                0.55520055,
                -1.013947344,
                -0.5300258768,
            ],
        ],
        what="modern_block of the course's 5×8 x with the script's weights (2 query heads, 1 K/V "
        "head)",
        diagnose=mistakes.modern_block(X, TOY, HEADS, KV_HEADS),
    )


@pytest.mark.points(1.5)
def test_modern_block_with_gains(student, mistakes):
    """gain_1 goes to the first RMSNorm, gain_2 to the second."""
    got = student.modern_block(X, GAINS, HEADS, KV_HEADS)
    assert_close(
        got,
        [
            [
                -0.740490464,
                1.674991437,
                -1.875324394,
                -0.8138514942,
                1.127996878,
                1.349025478,
                -2.648814655,
                -1.266106629,
            ],
            [
                -0.02716816375,
                0.3030856184,
                -1.432034382,
                -0.3723243215,
                0.888728424,
                2.01516509,
                0.2751196131,
                -1.046436925,
            ],
            [
                1.383478047,
                -1.832344816,
                -1.300206437,
                -3.270017737,
                2.064731397,
                0.4970180983,
                1.936725385,
                0.3696875064,
            ],
            [
                -0.0007325950999,
                -1.856510412,
                0.8371487631,
                1.272976064,
                4.004506657,
                -0.4708452549,
                0.6963690936,
                1.000911247,
            ],
            [
                1.529225249,
                -0.2974514761,
                0.2706071211,
                -1.294900593,
                -0.2586432422,
                0.5159065991,
                -0.5819737244,
                -0.3579093293,
            ],
        ],
        what="modern_block of the course's x with gain_1 and gain_2 given (each RMSNorm its own "
        "gain)",
        diagnose=mistakes.modern_block(X, GAINS, HEADS, KV_HEADS),
    )


@pytest.mark.points(1.5)
def test_modern_block_with_attention_off(student, mistakes):
    """use_attention=False skips the attention branch: h = x, y = x + swiglu(rmsnorm(x, gain_2),
    ...)."""
    got = student.modern_block(X, TOY, HEADS, KV_HEADS, use_attention=False)
    assert_close(
        got,
        [
            [
                -0.04732638371,
                1.20046277,
                -0.4177800606,
                -1.269623827,
                1.300669393,
                0.4985785783,
                -2.485868118,
                -0.3572669901,
            ],
            [
                0.4301771507,
                0.8546549695,
                0.1620611282,
                -0.8160483977,
                0.0441776962,
                0.1477878186,
                -0.3714173457,
                -0.05677068365,
            ],
            [
                1.293005362,
                -0.4952755562,
                -0.4438733761,
                -2.601957092,
                0.6135786606,
                0.3949418859,
                1.514922996,
                0.699769395,
            ],
            [
                0.2769907303,
                -0.7420166223,
                1.61443132,
                1.317341793,
                3.18826931,
                -0.8974216173,
                0.2061796882,
                1.125647871,
            ],
            [
                1.703414959,
                -0.215434575,
                -0.07823016125,
                -0.8382848483,
                -0.3612333679,
                0.2989385484,
                -0.8788298291,
                -0.06357626759,
            ],
        ],
        what="modern_block of the course's x with use_attention=False (h = x)",
        diagnose=mistakes.modern_block(X, TOY, HEADS, KV_HEADS, use_attention=False),
    )


@pytest.mark.property
@pytest.mark.points(1.5)
def test_modern_block_changing_token_8_of_16_leaves_rows_0_to_7_unchanged(student):
    """Causality through the block, on your own outputs: changing token 8 of 16 changes none of your
    rows 0 to 7, and it does reach the last row (through attention)."""
    changed = LONG_X.copy()
    changed[8] = [1.5, -2.0, 0.5, 1.0, -1.0, 2.0, 0.0, 0.5]
    what = (
        "your modern_block of 16 tokens (2 query heads, 1 K/V head) after changing token 8: rows 0 "
        "to 7 as before"
    )
    before = assert_array(student.modern_block(LONG_X, TOY, HEADS, KV_HEADS), (16, 8), what=what)
    after = assert_array(student.modern_block(changed, TOY, HEADS, KV_HEADS), (16, 8), what=what)
    assert_close(after[:8], before[:8], what=what)
    if np.allclose(after[-1], before[-1], rtol=0, atol=1e-6):
        raise Mismatch(
            what, "your last row did not change either: the last token attends to token 8"
        )


@pytest.mark.property
@pytest.mark.points(1)
def test_modern_block_float32_input_to_float32_precision(student):
    """A float32 input with float32 weights gives a float array with the values float64 gives, to
    float32 precision."""
    what = "your modern_block of the float32 course x with float32 weights, against float64"
    x32 = X.astype(np.float32)
    got = student.modern_block(
        x32, {k: v.astype(np.float32) for k, v in TOY.items()}, HEADS, KV_HEADS
    )
    got = assert_array(got, X.shape, (np.float32, np.float64), what=what)
    assert_close_own(
        got, student.modern_block(X, TOY, HEADS, KV_HEADS), rtol=1e-4, atol=1e-5, what=what
    )
