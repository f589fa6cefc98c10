"""Hidden tests for softmax(s, axis=-1) and attention(u, W_q, W_k, W_v, W_o, n_heads=1,
causal=True).

Value tests compare with the reference on fixed seeded inputs; property tests
(@pytest.mark.property) check a rule on the student's own outputs only, so a numeric slip (a wrong
scale, float32 arithmetic, a softmax slip) keeps them. attention runs with the student's own
softmax: both are this problem's.

Aimed at: softmax without the max subtracted (scores + 100 in float32, scores x 1000), softmax over
the wrong axis, heads split or merged wrongly (reversed, bare reshape) and sqrt(d_model) or d_head
for sqrt(d_head) (several heads with distinct weights, d_head != sqrt(d_model), all sizes distinct),
a transposed W or a missing W_o (random weights), a causal mask that hides the diagonal, is missing,
leaks the next token, goes wrong from some row on (every row of 64 tokens) or is too weak (-1000
against scores of several thousand), float32 and float64 precision; and the course's h_5
(causal=False: the public suite).
"""

import numpy as np
import pytest
from public.test_attention import float_array, judgeable
from public.toy import COURSE, F64, H5, W_k, W_o, W_q, W_v, X

from grader.feedback.compare import (
    Mismatch,
    assert_array,
    assert_attempt,
    assert_close,
    assert_close_own,
    raising,
)


def random_weights(rng, d, scale=1.0):
    """Four random (d, d) matrices W_q, W_k, W_v, W_o, entries N(0, scale^2 / d)."""
    return [rng.normal(scale=scale / np.sqrt(d), size=(d, d)) for _ in range(4)]


def unchanged(after, before, what):
    """Each argument as the student's function left it must be the one it was given, exactly."""
    for name, a, b in zip(("u", "W_q", "W_k", "W_v", "W_o"), after, before):
        if (
            type(a) is not np.ndarray
            or a.dtype != b.dtype
            or a.shape != b.shape
            or not np.array_equal(a, b)
        ):
            raise Mismatch(
                what,
                f"{name} was modified: compute new arrays (q = u @ W_q, ...) and never write "
                "into the arguments (no -=, *=, [...] = on them)",
            )


# ------------------------------------------------------------------------------------------ softmax


@pytest.mark.points(1)
def test_softmax_scores_shifted_by_100_in_float32(student, reference, mistakes):
    """float32 scores around 100 need the max subtracted first: exp(100) overflows float32."""
    rng = np.random.default_rng(301)
    s = (100.0 + rng.normal(size=(4, 6))).astype(np.float32)
    with raising(mistakes.softmax(s)):  # a sum without keepdims cannot broadcast on 4×6
        got = student.softmax(s)
    assert_close(
        got,
        reference.softmax(s.astype(np.float64)),
        what="softmax of a float32 4×6 array of scores around 100 (subtract each row's max before "
        "exp)",
        diagnose=mistakes.softmax(s),
    )


@pytest.mark.points(1)
def test_softmax_scores_times_1000(student, reference, mistakes):
    """Scores of size 1000 need the max subtracted first: exp(1000) overflows even float64."""
    rng = np.random.default_rng(302)
    s = 1000.0 * rng.normal(size=(3, 5))
    with raising(mistakes.softmax(s)):
        got = student.softmax(s)
    assert_close(
        got,
        reference.softmax(s),
        what="softmax of a 3×5 array of scores of size about 1000 (subtract each row's max before "
        "exp)",
        diagnose=mistakes.softmax(s),
    )


@pytest.mark.points(0.5)
def test_softmax_along_the_axis_it_is_given(student, reference, mistakes):
    """softmax(s, axis=0) normalises columns (of a 4×3 and of a square 4×4), and axis=1 of a 3-D
    array normalises along that axis."""
    rng = np.random.default_rng(303)
    s2 = rng.normal(size=(4, 3))
    with raising(mistakes.softmax(s2, axis=0)):
        got = student.softmax(s2, axis=0)
    assert_close(
        got,
        reference.softmax(s2, axis=0),
        what="softmax of a 4×3 array with axis=0 (each column sums to 1)",
        diagnose=mistakes.softmax(s2, axis=0),
    )
    s3 = rng.normal(size=(2, 5, 3))
    with raising(mistakes.softmax(s3, axis=1)):
        got = student.softmax(s3, axis=1)
    assert_close(
        got,
        reference.softmax(s3, axis=1),
        what="softmax of a 2×5×3 array with axis=1 (use the axis argument for the max and the sum)",
        diagnose=mistakes.softmax(s3, axis=1),
    )
    s4 = rng.normal(size=(4, 4))  # square: only the axis argument tells rows from columns
    with raising(mistakes.softmax(s4, axis=0)):
        got = student.softmax(s4, axis=0)
    assert_close(
        got,
        reference.softmax(s4, axis=0),
        what="softmax of a 4×4 array with axis=0 (each column sums to 1, whatever the shape)",
        diagnose=mistakes.softmax(s4, axis=0),
    )


@pytest.mark.property
@pytest.mark.points(0.5)
def test_softmax_is_never_negative(student, reference):
    """Every weight of your softmax of a 6×6 matrix of spread-out scores is >= 0."""
    s = 5.0 * np.random.default_rng(311).normal(size=(6, 6))
    what = (
        "the signs of your softmax of a 6×6 matrix of scores (exp is positive: every weight must "
        "be >= 0)"
    )
    got = float_array(student.softmax(s), (6, 6), what)
    assert_attempt(got, reference.softmax(s), what=what)
    if (got < 0).any():
        raise Mismatch(what, "some weights are negative", f"smallest: {got.min():.6g}")


@pytest.mark.property
@pytest.mark.points(0.5)
def test_softmax_keeps_the_shape(student, reference, mistakes):
    """softmax of a 2×3×5 array along axis=1 has the shape 2×3×5."""
    s = np.random.default_rng(312).normal(size=(2, 3, 5))
    with raising(mistakes.softmax(s, axis=1)):
        got = student.softmax(s, axis=1)
    what = (
        "the shape of your softmax of a 2×3×5 array with axis=1 (softmax keeps the input's shape)"
    )
    if type(got) is not np.ndarray or got.shape != (2, 3, 5):
        raise Mismatch(
            what,
            "wrong shape: expected (2, 3, 5) (keepdims=True on the max and the sum)",
            f"yours: {getattr(got, 'shape', type(got).__name__)}",
        )
    assert_attempt(got, reference.softmax(s, axis=1), what=what)


@pytest.mark.property
@pytest.mark.points(0.5)
def test_softmax_float32_input_to_float32_precision(student, reference):
    """softmax of a float32 array is a float array (float32, or float64: see the public float32
    test) with the values the same scores give in float64, to float32 precision."""
    s = np.random.default_rng(313).normal(size=(5, 5))
    what = "your softmax of a float32 5×5 array against the same scores in float64"
    got = assert_array(
        student.softmax(s.astype(np.float32)), s.shape, (np.float32, np.float64), what=what
    )
    own = student.softmax(s)
    assert_attempt(own, reference.softmax(s), what=what)
    assert_close_own(got, own, rtol=1e-4, what=what)


# --------------------------------------------------------------------------------- attention values


@pytest.mark.points(1)
def test_course_h5_is_x5_plus_attention(student, reference, mistakes):
    """On the course's example, x_5 plus the attention row of ␣the is the course's h_5 = [-1.239,
    0.911, -1.021, 0.980]."""
    u = reference.layernorm(X)
    got = student.attention(u, W_q, W_k, W_v, W_o)
    expected = np.array(reference.attention(u, W_q, W_k, W_v, W_o), dtype=np.float64)
    expected[4] = H5 - X[4]  # the course's a_5, read off h_5 = x_5 + a_5
    assert_close(
        got,
        expected,
        what="attention on the course's toy example: x_5 + (row 5 of your output) must be "
        "the course's h_5 = [-1.239, 0.911, -1.021, 0.980]",
        **COURSE,
        diagnose=mistakes.attention(u, W_q, W_k, W_v, W_o),
    )


@pytest.mark.points(1)
def test_two_heads_distinct_weights(student, reference, mistakes):
    """Two heads with distinct random weights on 4 tokens, d = 8: heads split by columns, scaled by
    sqrt(4)."""
    rng = np.random.default_rng(305)
    u = rng.normal(size=(4, 8))
    weights = random_weights(rng, 8, scale=2.0)
    got = student.attention(u, *weights, 2)
    assert_close(
        got,
        reference.attention(u, *weights, 2),
        what="attention of a 4×8 input with 2 heads, causal (head h uses columns 4h:4h+4 of q, k "
        "and v; "
        "scores divided by sqrt(d_head) = 2, not sqrt(d_model))",
        diagnose=mistakes.attention(u, *weights, 2),
    )


@pytest.mark.points(1)
def test_four_heads_all_sizes_distinct(student, reference, mistakes):
    """Four heads of width 3 on 5 tokens (n = 5, d = 12, d_head = 3): no two sizes coincide."""
    rng = np.random.default_rng(306)
    u = rng.normal(size=(5, 12))
    weights = random_weights(rng, 12, scale=2.0)
    got = student.attention(u, *weights, 4)
    assert_close(
        got,
        reference.attention(u, *weights, 4),
        what="attention of a 5×12 input with 4 heads of width 3, causal (split q, k, v by columns, "
        "merge the heads back in order)",
        diagnose=mistakes.attention(u, *weights, 4),
    )


@pytest.mark.points(2)
def test_every_row_of_long_and_wide_inputs(student, reference, mistakes):
    """Every row of 64 tokens with 2 heads (d = 64) and of 12 tokens with 8 heads (d = 40)."""
    rng = np.random.default_rng(314)
    for n, d, heads in ((64, 64, 2), (12, 40, 8)):  # d_head 32 and 5: never sqrt(d_model)
        u = rng.normal(size=(n, d))
        weights = random_weights(rng, d, scale=2.0)
        got = student.attention(u, *weights, heads)
        assert_close(
            got,
            reference.attention(u, *weights, heads),
            what=f"attention of a {n}×{d} input with {heads} heads of width {d // heads}, causal "
            "(every "
            "row compared: the mask, the split into heads and the scale sqrt(d_head) for all of "
            "them)",
            diagnose=mistakes.attention(u, *weights, heads),
        )


@pytest.mark.points(0.5)
def test_each_token_also_sees_itself(student, reference, mistakes):
    """The causal mask keeps the diagonal: token i sees tokens 0..i, itself included (token 0 sees
    only itself)."""
    rng = np.random.default_rng(307)
    u = rng.normal(size=(5, 6))
    _, _, w_v, w_o = random_weights(rng, 6)
    w_qk = 2.0 * np.eye(6)  # every token scores itself highest
    got = student.attention(u, w_qk, w_qk, w_v, w_o)
    assert_close(
        got,
        reference.attention(u, w_qk, w_qk, w_v, w_o),
        what="attention of a 5×6 input, one head, causal, where each token scores itself highest "
        "(mask only j > i: the diagonal stays visible)",
        diagnose=mistakes.attention(u, w_qk, w_qk, w_v, w_o),
    )


@pytest.mark.points(1.5)
def test_mask_holds_against_scores_of_several_thousand(student, reference, mistakes):
    """Scores climb by 1500 per token from -8000: a mask of -1000 (set or added) lets the future
    through, -inf, -1e9 or np.finfo(dtype).min do not (and a softmax computed inside without the max
    overflows)."""
    rng = np.random.default_rng(315)
    u = rng.normal(size=(8, 8))
    u[:, 0] = 1.0  # every query is the same ...
    u[:, 1] = -8.0 + 1.5 * np.arange(8)  # ... and key j scores 1000 * u[j, 1] = -8000 + 1500 j
    w_q, w_k = np.zeros((8, 8)), np.zeros((8, 8))
    w_q[0, 0] = w_k[1, 0] = np.sqrt(1000.0 * np.sqrt(8.0))
    _, _, w_v, w_o = random_weights(rng, 8)
    got = student.attention(u, w_q, w_k, w_v, w_o)
    assert_close(
        got,
        reference.attention(u, w_q, w_k, w_v, w_o),
        what="attention of an 8×8 input, one head, causal, whose scores reach several thousand and "
        "grow "
        "towards the future (mask with -inf, or a number at least as strong as np.finfo(dtype).min "
        "or -1e9: -1000 is not enough)",
        diagnose=mistakes.attention(u, w_q, w_k, w_v, w_o),
    )


@pytest.mark.points(0.5)
def test_float32_input_and_weights(student, reference, mistakes):
    """float32 input and weights give the right values (against the reference on the float64
    cast)."""
    rng = np.random.default_rng(309)
    u = rng.normal(size=(6, 8)).astype(np.float32)
    weights = [w.astype(np.float32) for w in random_weights(rng, 8, scale=2.0)]
    got = student.attention(u, *weights)
    expected = reference.attention(u.astype(np.float64), *[w.astype(np.float64) for w in weights])
    assert_close(
        got,
        expected,
        what="attention of a float32 6×8 input with float32 weights, one head, causal",
        diagnose=mistakes.attention(u, *weights),
    )


@pytest.mark.points(0.5)
def test_float64_precision_throughout(student, reference, mistakes):
    """float64 input is computed in float64 from start to end: the one test a float32 step inside
    fails."""
    rng = np.random.default_rng(316)
    u = rng.normal(size=(9, 16))
    weights = random_weights(rng, 16, scale=2.0)
    got = student.attention(u, *weights, 2)
    assert_close(
        got,
        reference.attention(u, *weights, 2),
        **F64,
        what="attention of a float64 9×16 input with 2 heads, to float64 precision (relative "
        "1e-10: "
        "no float32 array or cast anywhere inside)",
        diagnose=mistakes.attention(u, *weights, 2),
    )


# ----------------------------------------------------------------------------- attention properties


@pytest.mark.property
@pytest.mark.points(2)
def test_changing_last_token_leaves_earlier_rows_unchanged(student, reference):
    """Causality on your own outputs: changing only the last of 64 tokens changes only your last
    row."""
    rng = np.random.default_rng(304)
    u = rng.normal(size=(64, 24))
    weights = random_weights(rng, 24, scale=2.0)
    changed = u.copy()
    changed[-1] += 3.0 * rng.normal(size=24)
    what = (
        "your attention of 64 tokens (d = 24, 2 heads, causal) after changing only the last token: "
        "your rows "
        "0 to 62 must stay as they were, since no earlier token may see a later one"
    )
    before = float_array(student.attention(u, *weights, 2), (64, 24), what)
    assert_attempt(before, reference.attention(u, *weights, 2), what=what)
    after = float_array(student.attention(changed, *weights, 2), (64, 24), what)
    assert_close(after[:-1], before[:-1], what=what)
    if np.allclose(after[-1], before[-1], rtol=0, atol=1e-6):
        raise Mismatch(what, "your last row did not change either: the last token must see itself")


@pytest.mark.property
@pytest.mark.points(1.5)
def test_heads_are_independent(student, reference):
    """With W_o = I, changing head 0's columns of W_q, W_k and W_v changes only your output columns
    of head 0."""
    rng = np.random.default_rng(317)
    u = rng.normal(size=(10, 24))
    w_q, w_k, w_v, _ = random_weights(rng, 24, scale=2.0)
    changed = [w.copy() for w in (w_q, w_k, w_v)]
    for w in changed:
        w[:, :12] = rng.normal(scale=2.0 / np.sqrt(24), size=(24, 12))
    what = (
        "your attention of a 10×24 input with 2 heads of width 12 and W_o = I, after changing head "
        "0's "
        "columns 0:12 of W_q, W_k and W_v: your columns 12:24 (head 1) must stay as they were"
    )
    before = float_array(student.attention(u, w_q, w_k, w_v, np.eye(24), 2), (10, 24), what)
    assert_attempt(before, reference.attention(u, w_q, w_k, w_v, np.eye(24), 2), what=what)
    after = float_array(student.attention(u, *changed, np.eye(24), 2), (10, 24), what)
    assert_close(after[:, 12:], before[:, 12:], what=what)
    if np.allclose(after[:, :12], before[:, :12], rtol=0, atol=1e-6):
        raise Mismatch(
            what,
            "your columns 0:12 did not change either: head 0's output goes there (heads "
            "concatenated in order)",
        )


@pytest.mark.property
@pytest.mark.points(1)
def test_attention_leaves_u_and_the_weights_unchanged(student, reference):
    """attention never writes into u, W_q, W_k, W_v or W_o."""
    rng = np.random.default_rng(318)
    u = rng.normal(size=(6, 12))
    weights = random_weights(rng, 12, scale=2.0)
    got, args, _ = student.call_with_inputs("attention", u, *weights, 2)
    what = (
        "u, W_q, W_k, W_v and W_o after your attention of a 6×12 input with 2 heads (each must be "
        "exactly as it was given)"
    )
    judgeable(got, u, what)
    assert_attempt(got, reference.attention(u, *weights, 2), what=what)
    unchanged(args, [u, *weights], what)


@pytest.mark.property
@pytest.mark.points(0.5)
def test_attention_keeps_the_shape(student, reference):
    """attention of an 11×20 input with 2 heads is 11×20."""
    rng = np.random.default_rng(319)
    u = rng.normal(size=(11, 20))
    weights = random_weights(rng, 20)
    got = student.attention(u, *weights, 2)
    what = (
        "the shape of your attention of an 11×20 input with 2 heads (the output has u's shape, (n, "
        "d_model))"
    )
    judgeable(got, u, what)
    if type(got) is not np.ndarray or got.shape != (11, 20):
        raise Mismatch(
            what,
            "wrong shape: expected (11, 20)",
            f"yours: {getattr(got, 'shape', type(got).__name__)}",
        )
    assert_attempt(got, reference.attention(u, *weights, 2), what=what)
