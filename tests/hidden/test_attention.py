"""Hidden tests for softmax(s, axis=-1) and attention(u, W_q, W_k, W_v, W_o, n_heads=1, causal=True).

Expected values come from the reference solution on fixed inputs. Aimed at: softmax without the max subtracted
(scores + 100 in float32, scores x 1000), softmax over the wrong axis, heads split or merged wrongly and
sqrt(d_model) for sqrt(d_head) (several heads with distinct weights, all sizes distinct), a causal mask that
hides the diagonal, is missing or leaks the next token, causal=False, float32 input; and the course's h_5 and
"change only the last token" cases. Weights are random, so q and k swapped or a transposed W shows too.
"""
import numpy as np
import pytest

from grader.compare import assert_close
from public.toy import H5, W_k, W_o, W_q, W_v, X

F32 = {"rtol": 1e-4, "atol": 1e-5}  # float32 input against the reference on the float64 cast
COURSE = {"rtol": 0.0, "atol": 1e-3}  # the course prints three decimals


def random_weights(rng, d, scale=1.0):
    """Four random (d, d) matrices W_q, W_k, W_v, W_o, entries N(0, scale^2 / d)."""
    return [rng.normal(scale=scale / np.sqrt(d), size=(d, d)) for _ in range(4)]


@pytest.mark.points(1.5)
def test_softmax_scores_shifted_by_100_in_float32(student, reference, mistakes):
    """float32 scores around 100 need the max subtracted first: exp(100) overflows float32."""
    rng = np.random.default_rng(301)
    s = (100.0 + rng.normal(size=(4, 6))).astype(np.float32)
    got = student.softmax(s)
    assert_close(got, reference.softmax(s.astype(np.float64)),
                 what="softmax of a float32 4×6 array of scores around 100 (subtract each row's max before exp)",
                 **F32,
                 diagnose=mistakes.softmax(s))


@pytest.mark.points(1.5)
def test_softmax_scores_times_1000(student, reference, mistakes):
    """Scores of size 1000 need the max subtracted first: exp(1000) overflows even float64."""
    rng = np.random.default_rng(302)
    s = 1000.0 * rng.normal(size=(3, 5))
    got = student.softmax(s)
    assert_close(got, reference.softmax(s),
                 what="softmax of a 3×5 array of scores of size about 1000 (subtract each row's max before exp)",
                 diagnose=mistakes.softmax(s))


@pytest.mark.points(1.5)
def test_softmax_along_the_axis_it_is_given(student, reference, mistakes):
    """softmax(s, axis=0) normalises columns, and axis=1 of a 3-D array normalises along that axis."""
    rng = np.random.default_rng(303)
    s2 = rng.normal(size=(4, 3))
    got = student.softmax(s2, axis=0)
    assert_close(got, reference.softmax(s2, axis=0),
                 what="softmax of a 4×3 array with axis=0 (each column sums to 1)",
                 diagnose=mistakes.softmax(s2, axis=0))
    s3 = rng.normal(size=(2, 5, 3))
    got = student.softmax(s3, axis=1)
    assert_close(got, reference.softmax(s3, axis=1),
                 what="softmax of a 2×5×3 array with axis=1 (use the axis argument for the max and the sum)",
                 diagnose=mistakes.softmax(s3, axis=1))


@pytest.mark.points(1.5)
def test_course_h5_is_x5_plus_attention(student, reference, mistakes):
    """On the course's example, x_5 plus the attention row of ␣the is the course's h_5 = [-1.239, 0.911, -1.021, 0.980]."""
    u = reference.layernorm(X)
    got = student.attention(u, W_q, W_k, W_v, W_o)
    expected = np.array(reference.attention(u, W_q, W_k, W_v, W_o), dtype=np.float64)
    expected[4] = H5 - X[4]  # the course's a_5, read off h_5 = x_5 + a_5
    assert_close(got, expected, what="attention on the course's toy example: x_5 + (row 5 of your output) must be "
                                     "the course's h_5 = [-1.239, 0.911, -1.021, 0.980]", **COURSE,
                 diagnose=mistakes.attention(u, W_q, W_k, W_v, W_o))


@pytest.mark.points(2)
def test_changing_last_token_leaves_earlier_rows_unchanged(student, reference, mistakes):
    """Changing only the last token changes only the last output row: earlier tokens cannot see it."""
    rng = np.random.default_rng(304)
    u = rng.normal(size=(6, 8))
    weights = random_weights(rng, 8)
    u_changed = u.copy()
    u_changed[-1] += 3.0 * rng.normal(size=8)
    got = student.attention(u_changed, *weights, 2)
    expected = np.array(reference.attention(u, *weights, 2), dtype=np.float64)
    expected[-1] = reference.attention(u_changed, *weights, 2)[-1]
    assert_close(got, expected, what="attention (6 tokens, 2 heads, causal) after changing only the last token: "
                                     "rows 0 to 4 must stay as before, since no earlier token may see a later one",
                 diagnose=mistakes.attention(u_changed, *weights, 2))


@pytest.mark.points(2)
def test_two_heads_distinct_weights(student, reference, mistakes):
    """Two heads with distinct random weights on 4 tokens, d = 8: heads split by columns, scaled by sqrt(4)."""
    rng = np.random.default_rng(305)
    u = rng.normal(size=(4, 8))
    weights = random_weights(rng, 8, scale=2.0)
    got = student.attention(u, *weights, 2)
    assert_close(got, reference.attention(u, *weights, 2),
                 what="attention of a 4×8 input with 2 heads, causal (head h uses columns 4h:4h+4 of q, k and v; "
                      "scores divided by sqrt(d_head) = 2, not sqrt(d_model))",
                 diagnose=mistakes.attention(u, *weights, 2))


@pytest.mark.points(1.5)
def test_four_heads_all_sizes_distinct(student, reference, mistakes):
    """Four heads of width 3 on 5 tokens (n = 5, d = 12, d_head = 3): no two sizes coincide."""
    rng = np.random.default_rng(306)
    u = rng.normal(size=(5, 12))
    weights = random_weights(rng, 12, scale=2.0)
    got = student.attention(u, *weights, 4)
    assert_close(got, reference.attention(u, *weights, 4),
                 what="attention of a 5×12 input with 4 heads of width 3, causal (split q, k, v by columns, "
                      "merge the heads back in order)",
                 diagnose=mistakes.attention(u, *weights, 4))


@pytest.mark.points(1.5)
def test_each_token_also_sees_itself(student, reference, mistakes):
    """The causal mask keeps the diagonal: token i sees tokens 0..i, itself included (token 0 sees only itself)."""
    rng = np.random.default_rng(307)
    u = rng.normal(size=(5, 6))
    _, _, w_v, w_o = random_weights(rng, 6)
    w_qk = 2.0 * np.eye(6)  # every token scores itself highest
    got = student.attention(u, w_qk, w_qk, w_v, w_o)
    assert_close(got, reference.attention(u, w_qk, w_qk, w_v, w_o),
                 what="attention of a 5×6 input, one head, causal, where each token scores itself highest "
                      "(mask only j > i: the diagonal stays visible)",
                 diagnose=mistakes.attention(u, w_qk, w_qk, w_v, w_o))


@pytest.mark.points(1)
def test_causal_false_uses_every_token(student, reference, mistakes):
    """With causal=False and 2 heads every token attends to all 5 tokens."""
    rng = np.random.default_rng(308)
    u = rng.normal(size=(5, 8))
    weights = random_weights(rng, 8, scale=2.0)
    got = student.attention(u, *weights, 2, causal=False)
    assert_close(got, reference.attention(u, *weights, 2, causal=False),
                 what="attention of a 5×8 input with 2 heads and causal=False (no mask at all)",
                 diagnose=mistakes.attention(u, *weights, 2, causal=False))


@pytest.mark.points(1.5)
def test_float32_input_and_weights(student, reference, mistakes):
    """float32 input and weights give the right values (float32 or float64 out)."""
    rng = np.random.default_rng(309)
    u = rng.normal(size=(6, 8)).astype(np.float32)
    weights = [w.astype(np.float32) for w in random_weights(rng, 8, scale=2.0)]
    got = student.attention(u, *weights, 2)
    expected = reference.attention(u.astype(np.float64), *[w.astype(np.float64) for w in weights], 2)
    assert_close(got, expected, what="attention of a float32 6×8 input with float32 weights, 2 heads, causal", **F32,
                 diagnose=mistakes.attention(u, *weights, 2))


@pytest.mark.points(1.5)
def test_large_scores_stay_finite(student, reference, mistakes):
    """Scores in the thousands still give finite outputs: the softmax inside attention subtracts the max."""
    rng = np.random.default_rng(310)
    u = 4.0 * rng.normal(size=(5, 8))
    w_q, w_k = 3.0 * rng.normal(size=(8, 8)), 3.0 * rng.normal(size=(8, 8))
    _, _, w_v, w_o = random_weights(rng, 8)
    got = student.attention(u, w_q, w_k, w_v, w_o, 2)
    assert_close(got, reference.attention(u, w_q, w_k, w_v, w_o, 2),
                 what="attention of a 5×8 input with 2 heads whose scores reach the thousands (a stable softmax "
                      "keeps them finite)",
                 diagnose=mistakes.attention(u, w_q, w_k, w_v, w_o, 2))
