"""Public tests for softmax(s, axis=-1) and attention(u, W_q, W_k, W_v, W_o, n_heads=1,
causal=True).

Attention contract: u is (n, d), every W is (d, d) applied as u @ W; head h uses columns
h*d_head:(h+1)*d_head of q, k and v; scores q k^T / sqrt(d_head); with causal=True token i sees
tokens 0..i (itself included); the heads' outputs are concatenated in order and multiplied by W_o.
attention leaves u and the weights unchanged, and float32 input gives a float32 or float64 output
(both accepted) with the values float64 input gives.

attention runs with your own softmax (both are this problem's): a mask of -1e9 instead of -inf is
fine.

Two kinds of test: value tests compare your numbers with the expected ones (computed once from a
correct solution and written here to 10 significant digits); property tests (@pytest.mark.property)
check a rule on your own outputs only (rows that sum to 1, causality, float32 input to float32
precision), so a numeric slip elsewhere keeps them.
"""

import numpy as np
import pytest

from grader.errors import StudentError
from grader.feedback.compare import (
    Diagnosis,
    Mismatch,
    assert_array,
    assert_close,
    assert_close_own,
    either,
)
from public.toy import W_k, W_o, W_q, W_v
from public.trace import attention_weights

# layernorm(X) of the course's toy embeddings: the u that attention reads (to 10 significant
# digits).
U_TOY = np.array(
    [
        [0.9045077212, -0.3015025737, -1.507512869, 0.9045077212],
        [0.3015091518, -0.9045274554, -0.9045274554, 1.507545759],
        [-0.7624871774, -0.1524974355, -0.7624871774, 1.67747179],
        [-0.2294118701, -0.2294118701, -1.147059351, 1.605883091],
        [-0.5773464202, -0.5773464202, -0.5773464202, 1.732039261],
    ]
)

# The weights of the toy's causal attention: row i is how token i spreads its attention over tokens
# 1..i.
TOY_WEIGHTS = np.array(
    [
        [1.0, 0.0, 0.0, 0.0, 0.0],
        [0.4100722339, 0.5899277661, 0.0, 0.0, 0.0],
        [0.18438661, 0.3201562739, 0.4954571161, 0.0, 0.0],
        [0.1860089488, 0.2453061685, 0.2686119681, 0.3000729146, 0.0],
        [0.09713089255, 0.1948798435, 0.2371269266, 0.2183136073, 0.2525487301],
    ]
)

# A 3-token, d = 4 example with fixed weights (one decimal each).
U3 = np.array([[-1.0, 0.6, -1.6, -1.0], [-0.6, -0.8, 1.6, 1.2], [1.6, 1.8, -1.6, -1.4]])
WQ = np.array(
    [[0.7, -0.8, -0.6, -0.6], [0.8, -0.3, -0.4, -0.6], [-0.1, 0.2, 0.6, 0.2], [0.9, -0.7, 0.0, 0.1]]
)
WK = np.array(
    [
        [0.4, -0.9, -0.6, -0.1],
        [-0.8, 0.9, 0.3, 0.6],
        [0.0, 0.2, -0.3, -0.3],
        [-0.7, -0.6, 0.5, -0.1],
    ]
)
WV = np.array(
    [
        [0.6, -0.4, 0.4, 0.7],
        [0.6, -0.5, -0.3, -0.4],
        [0.6, 0.6, -0.1, -0.4],
        [-0.8, -0.4, -0.7, -0.8],
    ]
)
WO = np.array(
    [[0.5, -0.1, 0.9, -0.4], [-0.2, 0.7, 0.2, -0.4], [-0.2, 0.5, -0.3, 0.0], [0.0, -0.1, 0.0, 0.9]]
)

# 4 tokens, d = 6, two heads of width 3 (one decimal each). d_head = 3, sqrt(d_head) = 1.73 and
# sqrt(d_model) =
# 2.45 all differ, so each wrong scale gives other numbers (with d = 4 and 2 heads, d_head =
# sqrt(d_model)).
U6 = np.array(
    [
        [0.6, 0.6, 0.0, -0.4, -0.9, -0.2],
        [-0.2, -0.9, -0.9, 1.0, 0.3, -0.5],
        [-0.1, 0.9, 0.8, 0.7, -0.2, 0.0],
        [0.4, -0.9, 0.1, -0.5, 0.8, -0.9],
    ]
)
WQ6 = np.array(
    [
        [0.4, 0.7, -0.5, 0.8, 0.7, -1.0],
        [0.4, -1.0, 0.0, -0.1, -0.6, -0.4],
        [0.6, -0.4, -0.7, 0.4, -0.1, 0.6],
        [-0.5, -0.4, 0.6, 0.0, 0.0, -0.5],
        [-1.0, 0.9, -0.8, 0.7, -0.3, 0.9],
        [-0.2, 0.9, 0.1, -0.5, 0.5, 0.3],
    ]
)
WK6 = np.array(
    [
        [0.4, -0.1, -0.6, 0.3, -0.8, 0.4],
        [0.3, -0.2, 0.6, -0.6, -0.2, 0.6],
        [-0.2, 0.4, 0.2, 0.9, 1.0, 0.4],
        [0.6, -0.7, 0.4, 0.7, -0.2, 0.1],
        [0.0, 0.9, -0.4, -0.2, -1.0, -0.2],
        [0.3, 0.9, 0.8, -0.3, 1.0, -0.6],
    ]
)
WV6 = np.array(
    [
        [0.6, -0.7, -0.2, -0.9, 0.7, 0.7],
        [-0.7, 0.1, -0.5, 0.0, 0.1, -0.8],
        [0.7, -0.4, -0.1, -0.9, -1.0, -0.6],
        [-0.3, 0.9, 0.8, 0.0, -0.1, 0.3],
        [0.7, -0.3, 0.6, -0.2, 0.2, 0.5],
        [0.0, 0.4, 0.4, -1.0, -0.9, -0.7],
    ]
)
WO6 = np.array(
    [
        [-0.6, -0.6, -0.9, -0.6, 0.2, 0.8],
        [-0.3, -0.3, -0.2, 0.4, 0.6, 0.9],
        [-0.2, 0.4, -0.3, 0.6, -0.5, 0.7],
        [0.0, 0.5, 0.1, -0.4, 0.0, -0.9],
        [-0.9, 0.1, 0.0, 0.7, -1.0, 0.1],
        [0.0, 0.2, 0.5, 0.0, 0.1, 0.0],
    ]
)
# attention(U6, WQ6, WK6, WV6, WO6, n_heads=1): the same call with one head.
ONE_HEAD6 = np.array(
    [
        [0.305, -0.169, 0.766, -0.258, -0.321, -1.689],
        [-0.4125678103, 0.5531330191, 0.730308368, 0.4857140059, -0.6019678471, -0.770978024],
        [-0.5271110295, 0.7253612543, 0.5156669947, 0.7944894465, -0.4355707998, -0.0506842691],
        [-1.1179102585, 0.17199016, -0.0787916628, -0.4496374086, -1.0830429151, -0.1086927719],
    ]
)


def right_with_one_head(student, *args):
    """A hint for a two-head call that no known mistake explains: when the same call with one head
    is right, what differs is how the heads are split, scaled and merged, whatever the mistake."""

    def diagnose(got, expected, same):
        try:
            one = student.attention(*args, 1)
        except StudentError:
            return None
        if not same(one, ONE_HEAD6):
            return None
        return Diagnosis(
            "hint.one_head",
            "right with 1 head, wrong with 2: look at how you split q, k and v into "
            "heads (head h takes columns h*d_head to (h+1)*d_head), divide each "
            "head's scores by sqrt(d_head), and merge the heads back in order",
        )

    return diagnose


def float_array(got, shape, what):
    """The student's output as float64, after checking it is a finite float array of ``shape`` (a
    property test compares the student's outputs with each other: each must be one first)."""
    if (
        type(got) is not np.ndarray
        or got.dtype.kind != "f"
        or got.shape != shape
        or not np.isfinite(got).all()
    ):
        kind = (
            f"an array of shape {got.shape} and dtype {got.dtype}"
            if type(got) is np.ndarray
            else type(got).__name__
        )
        raise Mismatch(what, f"expected a finite float array of shape {shape}", f"yours: {kind}")
    return got.astype(np.float64)


def judgeable(got, given, what):
    """A property such as "leaves its inputs alone" or "float32 input to float32 precision" holds
    for any function that does nothing; it earns points only for an output that could be the
    function's: an array that is neither the input returned as it is nor the same number
    everywhere."""
    if (
        type(got) is np.ndarray
        and got.shape == given.shape
        and (
            (got.dtype == given.dtype and np.array_equal(got, given))
            or (got.size > 1 and np.all(got == got.flat[0]))
        )
    ):
        raise Mismatch(
            what, "your output is the input itself, or the same number everywhere: nothing to judge"
        )


@pytest.mark.points(0.5)
def test_softmax_of_1_2_3(student, mistakes):
    """softmax([1, 2, 3]) = exp(s) / sum(exp(s)) = [0.0900, 0.2447, 0.6652]."""
    got = student.softmax(np.array([1.0, 2.0, 3.0]))
    assert_close(
        got,
        [0.09003057317, 0.2447284711, 0.6652409558],
        what="softmax of [1, 2, 3]",
        diagnose=mistakes.softmax(np.array([1.0, 2.0, 3.0])),
    )


@pytest.mark.points(0.5)
def test_softmax_works_row_by_row_on_a_matrix(student, mistakes):
    """softmax of a 3×3 matrix normalises each row (the last axis) on its own."""
    s = np.array([[0.0, 1.0, -1.0], [5.0, 5.0, 5.0], [-2.0, 0.5, 0.25]])
    expected = [
        [0.2447284711, 0.6652409558, 0.09003057317],
        [0.3333333333, 0.3333333333, 0.3333333333],
        [0.04411071299, 0.5373784946, 0.4185107924],
    ]
    got = student.softmax(s)
    assert_close(
        got,
        expected,
        what="softmax of a 3×3 matrix along the last axis (each row sums to 1)",
        diagnose=mistakes.softmax(s),
    )


@pytest.mark.property
@pytest.mark.points(0.5)
def test_softmax_rows_sum_to_one(student):
    """Each row of your softmax of a 6×6 matrix of scores sums to 1 (checked on your output
    alone)."""
    s = np.array(
        [
            [0.3, -1.2, 2.0, 0.0, 0.7, -0.4],
            [1.5, 1.5, -3.0, 0.2, 0.9, 2.2],
            [-0.8, 0.1, 0.4, -2.5, 1.1, 0.6],
            [4.0, -1.0, 0.5, 0.5, -0.2, 1.3],
            [0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
            [-1.7, 2.4, -0.3, 0.8, -2.2, 0.05],
        ]
    )
    what = (
        "the row sums of your softmax of a 6×6 matrix (each row must sum to 1: divide by the row's "
        "own sum)"
    )
    got = float_array(student.softmax(s), (6, 6), what)
    assert_close(got.sum(axis=-1), np.ones(6), what=what)


@pytest.mark.property
@pytest.mark.points(0.5)
def test_softmax_is_unchanged_by_adding_a_constant_to_each_row(student):
    """softmax(s + c) = softmax(s) when c adds one constant to each row (your two outputs
    compared)."""
    s = np.array(
        [
            [0.5, -0.5, 1.0, 0.0, 2.0],
            [-1.0, 0.3, 0.3, 1.2, -0.6],
            [2.1, -2.0, 0.7, 0.1, 0.0],
            [0.9, 1.9, -0.4, -1.1, 0.6],
            [-0.2, 0.8, 1.4, -0.9, 0.2],
        ]
    )
    shifted = s + np.array([[7.0], [-3.0], [0.5], [-9.0], [4.0]])
    what = (
        "your softmax of a 5×5 matrix with a constant added to each row ([7, -3, 0.5, -9, 4]): it "
        "must equal "
        "your softmax of the matrix itself, since exp(s + c) / sum(exp(s + c)) = exp(s) / "
        "sum(exp(s))"
    )
    before = float_array(student.softmax(s), (5, 5), what)
    assert_close(float_array(student.softmax(shifted), (5, 5), what), before, what=what)


@pytest.mark.points(1)
def test_toy_attention_gives_the_course_a5(student, mistakes, figure):
    """The course's toy attention (one head, causal): its last row is the course's a_5 = [-0.739,
    1.411, -0.521, -0.520].

    The feedback page also shows your attention weights on the toy beside the reference's.
    """
    expected = [
        [1.085409265, 0.8140569491, 0.03015025724, 1.537663126],
        [0.2316538577, 1.134230943, -0.07657052685, 0.7194872634],
        [-0.5503710135, 1.332490213, -0.4582633873, -0.3104359719],
        [-0.3961614663, 1.323475041, -0.4425360883, -0.1422107695],
        [-0.7389777932, 1.41068709, -0.5209523665, -0.5199763565],
    ]
    got = student.attention(U_TOY, W_q, W_k, W_v, W_o)
    figure(
        "attention weights on the course's toy (row i: how token i weighs tokens 1 to 5)",
        yours=lambda: attention_weights(student.attention, U_TOY, W_q, W_k),
        reference=TOY_WEIGHTS,
    )
    assert_close(
        got,
        expected,
        what="attention of the course's toy u = layernorm(X) with the toy weights "
        "(one head, causal)",
        diagnose=mistakes.attention(U_TOY, W_q, W_k, W_v, W_o),
    )


@pytest.mark.points(1)
def test_two_heads_scaled_by_sqrt_d_head(student, mistakes):
    """Two heads of width 3 on 4 tokens (d = 6): scores divided by sqrt(3), not 3 or sqrt(6)."""
    expected = [
        [0.305, -0.169, 0.766, -0.258, -0.321, -1.689],
        [-0.3866015147, 0.6937991094, 1.012170454, 0.3040077587, -0.616373207, -1.212165275],
        [-0.4053017899, 0.7102101972, 0.7233485131, 0.5668748551, -0.3923846496, -0.4896732461],
        [-0.5773214102, -0.368460982, -0.9336440022, -1.102459471, -0.5916608388, 0.09887845892],
    ]
    got = student.attention(U6, WQ6, WK6, WV6, WO6, 2)
    assert_close(
        got,
        expected,
        what="attention of a 4×6 input with 2 heads of width 3, causal (scores divided "
        "by sqrt(d_head) = sqrt(3), heads concatenated in order, then @ W_o)",
        diagnose=either(
            mistakes.attention(U6, WQ6, WK6, WV6, WO6, 2),
            right_with_one_head(student, U6, WQ6, WK6, WV6, WO6),
        ),
    )


@pytest.mark.points(0.5)
def test_a_single_token_only_sees_itself(student, mistakes):
    """With one token the attention weights are [1], so the output is u @ W_v @ W_o whatever W_q and
    W_k."""
    u = np.array([[0.1, 0.2, -0.5, -0.6, 0.1, -0.2]])
    w_v = np.array(
        [
            [0.0, -0.6, -0.1, -0.4, 0.1, 0.2],
            [0.0, 0.0, -0.4, -0.9, 0.3, 0.8],
            [0.2, -0.5, -0.1, 0.0, -0.1, -0.7],
            [0.7, -0.2, -0.9, 0.5, -0.9, -0.5],
            [-0.2, 0.7, 0.4, 0.2, -0.1, 0.3],
            [0.7, 0.8, 0.5, 0.0, -0.5, -0.7],
        ]
    )
    w_o = np.array(
        [
            [-0.2, 0.3, -0.6, 0.3, 0.6, 0.6],
            [-0.3, -0.7, 0.7, -0.5, 0.3, 0.8],
            [0.8, 0.1, -0.2, -0.6, 0.5, -0.1],
            [-0.4, -0.2, -0.7, -0.7, -0.2, 0.2],
            [-0.3, -0.9, -0.4, -0.8, -0.8, -0.5],
            [0.2, -0.2, -0.8, 0.1, 0.8, 0.8],
        ]
    )
    got = student.attention(u, np.eye(6), -np.eye(6), w_v, w_o, 2)
    assert_close(
        got,
        u @ w_v @ w_o,
        what="attention of a single token (1×6, 2 heads): it can only attend to "
        "itself, so the output is u @ W_v @ W_o",
        diagnose=mistakes.attention(u, np.eye(6), -np.eye(6), w_v, w_o, 2),
    )


@pytest.mark.points(0.5)
def test_causal_false_lets_every_token_see_all(student, mistakes):
    """With causal=False every token attends to all 3 tokens, the later ones included."""
    expected = [
        [0.2336826175, -0.3497864695, 0.1088004548, 0.5883692597],
        [0.1640271718, -0.3719606189, -0.06514334364, 0.8320933617],
        [-0.2930017731, 0.3795914017, -0.1078051871, -1.309350229],
    ]
    got = student.attention(U3, WQ, WK, WV, WO, 1, causal=False)
    assert_close(
        got,
        expected,
        what="attention of a 3×4 input with one head and causal=False (no mask)",
        diagnose=mistakes.attention(U3, WQ, WK, WV, WO, 1, causal=False),
    )


def pattern(rows, columns, seed):
    """A fixed rows×columns array of one-decimal entries in [-1, 1], made of integers only (no
    random generator, no sin: the same numbers on every machine and numpy version)."""
    i, j = np.meshgrid(np.arange(rows), np.arange(columns), indexing="ij")
    return ((7 * i * i + 13 * i * j + 3 * j * j + 5 * i + seed) % 97 % 21 - 10) / 10


@pytest.mark.points(1)
def test_24_tokens_with_equal_scores_average_the_tokens_so_far(student, mistakes):
    """With W_q = W_k = 0 every score is 0, so token i averages the values of tokens 0..i: every row
    of 24."""
    u, w_v, w_o = pattern(24, 8, 1), pattern(8, 8, 2), pattern(8, 8, 3)
    zero = np.zeros((8, 8))
    # Equal scores: the causal softmax gives token i the weight 1 / (i + 1) on each of tokens 0..i.
    expected = np.cumsum(u @ w_v, axis=0) / np.arange(1, 25)[:, None] @ w_o
    got = student.attention(u, zero, zero, w_v, w_o, 2)
    assert_close(
        got,
        expected,
        what="attention of a 24×8 input with 2 heads and W_q = W_k = 0, causal: row i "
        "is the mean of (u @ W_v) over tokens 0..i, then @ W_o (every row compared)",
        diagnose=mistakes.attention(u, zero, zero, w_v, w_o, 2),
    )


@pytest.mark.points(0.5)
def test_six_tokens_of_width_six_with_two_heads(student, mistakes):
    """A square input, 6 tokens of width 6 with 2 heads: the scores are 6×6 like the input, so only
    the axes tell the queries from the keys and the tokens from the features."""
    u, weights = 2.0 * pattern(6, 6, 12), [pattern(6, 6, seed) for seed in (13, 14, 15, 16)]
    expected = [
        [-0.388, -3.704, 4.636, -4.008, -1.32, 2.496],
        [1.101006852, 3.365696206, -1.683553811, 2.218433188, -0.1436755728, -2.381764775],
        [0.307769756, -1.612902497, 3.113566854, -3.661396465, -1.68657129, 2.111378642],
        [1.342044541, 2.580333124, -3.935784405, -0.5617986586, -2.142656976, -2.187960645],
        [1.459141805, 0.6074975405, 1.91707998, -2.017619885, -2.157484679, 0.4785346533],
        [-1.627933154, -3.325723164, 1.990170743, 0.455149418, 1.686334338, 1.504912324],
    ]
    got = student.attention(u, *weights, 2)
    assert_close(
        got,
        expected,
        what="attention of a 6×6 input with 2 heads of width 3, causal (as many tokens as "
        "features: softmax over the keys, the last axis; heads by columns)",
        diagnose=mistakes.attention(u, *weights, 2),
    )


@pytest.mark.property
@pytest.mark.points(1)
def test_changing_token_8_of_16_leaves_rows_0_to_7_unchanged(student):
    """Causality on your own outputs: changing token 8 of 16 changes none of your rows 0 to 7 (and
    some later row does change)."""
    u = 2.0 * pattern(16, 6, 4)
    weights = [WQ6, WK6, WV6, WO6]
    changed = u.copy()
    changed[8] = [1.5, -2.0, 0.5, 1.0, -1.0, 2.0]
    what = (
        "your attention of 16 tokens (d = 6, 2 heads, causal) after changing token 8: rows 0 to 7 "
        "must "
        "equal your rows from before the change, since no token may see a later one"
    )
    before = float_array(student.attention(u, *weights, 2), (16, 6), what)
    after = float_array(student.attention(changed, *weights, 2), (16, 6), what)
    assert_close(after[:8], before[:8], what=what)
    if np.allclose(after[8:], before[8:], rtol=0, atol=1e-6):
        raise Mismatch(
            what,
            "rows 8 to 15 did not change either: token 8 and the ones after it must see token 8",
        )


@pytest.mark.property
@pytest.mark.points(0.5)
def test_float32_input_to_float32_precision(student):
    """float32 input and weights give a float array (float32; float64 is accepted: NumPy 2 promotes
    float32 times a float64 scalar such as np.sqrt(d_head), NumPy 1 did not, and one code gets one
    grade on every install) with the values the same input gives in float64, to float32 precision
    (causal=False: a mask of -1e9 or np.finfo(float32).min is fine whatever the dtype)."""
    weights = (WQ6, WK6, WV6, WO6)
    what = (
        "your attention of a float32 4×6 input with float32 weights, 2 heads, causal=False, "
        "against float64"
    )
    u = U6.astype(np.float32)
    got = student.attention(u, *(w.astype(np.float32) for w in weights), 2, causal=False)
    judgeable(got, u, what)
    got = assert_array(got, U6.shape, (np.float32, np.float64), what=what)
    assert_close_own(got, student.attention(U6, *weights, 2, causal=False), rtol=1e-4, what=what)
