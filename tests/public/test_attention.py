"""Public tests for softmax(s, axis=-1) and attention(u, W_q, W_k, W_v, W_o, n_heads=1, causal=True).

Attention contract: u is (n, d), every W is (d, d) applied as u @ W; head h uses columns h*d_head:(h+1)*d_head
of q, k and v; scores q k^T / sqrt(d_head); with causal=True token i sees tokens 0..i (itself included); the
heads' outputs are concatenated in order and multiplied by W_o.

The expected numbers were computed once from a correct solution and written here to 10 significant digits.
"""
import numpy as np
import pytest

from grader.compare import assert_close
from public.toy import W_k, W_o, W_q, W_v
from public.trace import attention_weights

# layernorm(X) of the course's toy embeddings: the u that attention reads (to 10 significant digits).
U_TOY = np.array([[0.9045077212, -0.3015025737, -1.507512869, 0.9045077212],
                  [0.3015091518, -0.9045274554, -0.9045274554, 1.507545759],
                  [-0.7624871774, -0.1524974355, -0.7624871774, 1.67747179],
                  [-0.2294118701, -0.2294118701, -1.147059351, 1.605883091],
                  [-0.5773464202, -0.5773464202, -0.5773464202, 1.732039261]])

# The weights of the toy's causal attention: row i is how token i spreads its attention over tokens 1..i.
TOY_WEIGHTS = np.array([[1.0, 0.0, 0.0, 0.0, 0.0],
                        [0.4100722339, 0.5899277661, 0.0, 0.0, 0.0],
                        [0.18438661, 0.3201562739, 0.4954571161, 0.0, 0.0],
                        [0.1860089488, 0.2453061685, 0.2686119681, 0.3000729146, 0.0],
                        [0.09713089255, 0.1948798435, 0.2371269266, 0.2183136073, 0.2525487301]])

# A 3-token, d = 4 example with fixed weights (one decimal each).
U3 = np.array([[-1.0, 0.6, -1.6, -1.0],
               [-0.6, -0.8, 1.6, 1.2],
               [1.6, 1.8, -1.6, -1.4]])
WQ = np.array([[0.7, -0.8, -0.6, -0.6],
               [0.8, -0.3, -0.4, -0.6],
               [-0.1, 0.2, 0.6, 0.2],
               [0.9, -0.7, 0.0, 0.1]])
WK = np.array([[0.4, -0.9, -0.6, -0.1],
               [-0.8, 0.9, 0.3, 0.6],
               [0.0, 0.2, -0.3, -0.3],
               [-0.7, -0.6, 0.5, -0.1]])
WV = np.array([[0.6, -0.4, 0.4, 0.7],
               [0.6, -0.5, -0.3, -0.4],
               [0.6, 0.6, -0.1, -0.4],
               [-0.8, -0.4, -0.7, -0.8]])
WO = np.array([[0.5, -0.1, 0.9, -0.4],
               [-0.2, 0.7, 0.2, -0.4],
               [-0.2, 0.5, -0.3, 0.0],
               [0.0, -0.1, 0.0, 0.9]])


@pytest.mark.points(1)
def test_softmax_of_1_2_3(student, mistakes):
    """softmax([1, 2, 3]) = exp(s) / sum(exp(s)) = [0.0900, 0.2447, 0.6652]."""
    got = student.softmax(np.array([1.0, 2.0, 3.0]))
    assert_close(got, [0.09003057317, 0.2447284711, 0.6652409558], what="softmax of [1, 2, 3]",
                 diagnose=mistakes.softmax(np.array([1.0, 2.0, 3.0])))


@pytest.mark.points(1)
def test_softmax_works_row_by_row_on_a_matrix(student, mistakes):
    """softmax of a 3×3 matrix normalises each row (the last axis) on its own."""
    s = np.array([[0.0, 1.0, -1.0],
                  [5.0, 5.0, 5.0],
                  [-2.0, 0.5, 0.25]])
    expected = [[0.2447284711, 0.6652409558, 0.09003057317],
                [0.3333333333, 0.3333333333, 0.3333333333],
                [0.04411071299, 0.5373784946, 0.4185107924]]
    got = student.softmax(s)
    assert_close(got, expected, what="softmax of a 3×3 matrix along the last axis (each row sums to 1)",
                 diagnose=mistakes.softmax(s))


@pytest.mark.points(2)
def test_toy_attention_gives_the_course_a5(student, mistakes, figure):
    """The course's toy attention (one head, causal): its last row is the course's a_5 = [-0.739, 1.411, -0.521, -0.520].

    The feedback page also shows your attention weights on the toy beside the reference's.
    """
    expected = [[1.085409265, 0.8140569491, 0.03015025724, 1.537663126],
                [0.2316538577, 1.134230943, -0.07657052685, 0.7194872634],
                [-0.5503710135, 1.332490213, -0.4582633873, -0.3104359719],
                [-0.3961614663, 1.323475041, -0.4425360883, -0.1422107695],
                [-0.7389777932, 1.41068709, -0.5209523665, -0.5199763565]]
    got = student.attention(U_TOY, W_q, W_k, W_v, W_o)
    figure("attention weights on the course's toy (row i: how token i weighs tokens 1 to 5)",
           yours=lambda: attention_weights(student.attention, U_TOY, W_q, W_k), reference=TOY_WEIGHTS)
    assert_close(got, expected, what="attention of the course's toy u = layernorm(X) with the toy weights "
                                     "(one head, causal)",
                 diagnose=mistakes.attention(U_TOY, W_q, W_k, W_v, W_o))


@pytest.mark.points(2)
def test_two_heads_with_causal_mask(student, mistakes):
    """Two heads (d_head = 2) on 3 tokens: each head uses its own 2 columns and scales by sqrt(2)."""
    expected = [[-0.164, -0.192, -0.536, 0.794],
                [-0.3721496494, 0.2646930785, -0.5400377457, 0.4451232537],
                [0.3471550025, -0.4139166349, 0.4947920172, -1.38969607]]
    got = student.attention(U3, WQ, WK, WV, WO, 2)
    assert_close(got, expected, what="attention of a 3×4 input with 2 heads, causal (head h uses columns "
                                     "2h:2h+2, scores divided by sqrt(d_head) = sqrt(2))",
                 diagnose=mistakes.attention(U3, WQ, WK, WV, WO, 2))


@pytest.mark.points(1)
def test_a_single_token_only_sees_itself(student, mistakes):
    """With one token the attention weights are [1], so the output is u @ W_v @ W_o whatever W_q and W_k."""
    u = np.array([[0.1, 0.2, -0.5, -0.6, 0.1, -0.2]])
    w_v = np.array([[0.0, -0.6, -0.1, -0.4, 0.1, 0.2],
                    [0.0, 0.0, -0.4, -0.9, 0.3, 0.8],
                    [0.2, -0.5, -0.1, 0.0, -0.1, -0.7],
                    [0.7, -0.2, -0.9, 0.5, -0.9, -0.5],
                    [-0.2, 0.7, 0.4, 0.2, -0.1, 0.3],
                    [0.7, 0.8, 0.5, 0.0, -0.5, -0.7]])
    w_o = np.array([[-0.2, 0.3, -0.6, 0.3, 0.6, 0.6],
                    [-0.3, -0.7, 0.7, -0.5, 0.3, 0.8],
                    [0.8, 0.1, -0.2, -0.6, 0.5, -0.1],
                    [-0.4, -0.2, -0.7, -0.7, -0.2, 0.2],
                    [-0.3, -0.9, -0.4, -0.8, -0.8, -0.5],
                    [0.2, -0.2, -0.8, 0.1, 0.8, 0.8]])
    got = student.attention(u, np.eye(6), -np.eye(6), w_v, w_o, 2)
    assert_close(got, u @ w_v @ w_o, what="attention of a single token (1×6, 2 heads): it can only attend to "
                                          "itself, so the output is u @ W_v @ W_o",
                 diagnose=mistakes.attention(u, np.eye(6), -np.eye(6), w_v, w_o, 2))


@pytest.mark.points(1)
def test_causal_false_lets_every_token_see_all(student, mistakes):
    """With causal=False every token attends to all 3 tokens, the later ones included."""
    expected = [[0.2336826175, -0.3497864695, 0.1088004548, 0.5883692597],
                [0.1640271718, -0.3719606189, -0.06514334364, 0.8320933617],
                [-0.2930017731, 0.3795914017, -0.1078051871, -1.309350229]]
    got = student.attention(U3, WQ, WK, WV, WO, 1, causal=False)
    assert_close(got, expected, what="attention of a 3×4 input with one head and causal=False (no mask)",
                 diagnose=mistakes.attention(U3, WQ, WK, WV, WO, 1, causal=False))
