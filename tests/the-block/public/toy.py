"""The course's running example through one block (the-block.txt): 5 tokens, d_model = 4, one head,
causal.

The course fixes only the last embedding row (␣the) and prints the numbers for the last token: a_5,
h_5, LayerNorm(h_5), m_5, y_5, and y_5 with attention switched off. The other four rows of X and the
attention weights below are our choice, made so that

    attention(layernorm(X), W_q, W_k, W_v, W_o)[4]   (n_heads=1, causal)

reproduces a_5 to 3.2e-4. We aimed inside the course's rounding so that every number the block then
computes for ␣the (h_5, LayerNorm(h_5), m_5, y_5) rounds to the course's three decimals.

W_q = W_k = I, so token i scores token j by u_i . u_j / 2 (u = layernorm(X), d_head = 4), and ␣the
spreads its attention as [0.097, 0.195, 0.237, 0.218, 0.253] over tokens 1..5: every token counts.
W_o = I, and W_v (one decimal per entry) maps that mixture to a_5. What the last row cannot show: it
sees every token, so a missing causal mask leaves it unchanged; W_q = W_k hides swapped q and k; and
erf GELU moves y_5 by under 1e-3. Tests that must catch those need the other rows or other inputs.

The MLP weights are the course's: W_1 = [I | -I] (4 x 8), W_2 = [I ; I] (8 x 4), so m = gelu(u') +
gelu(-u'), a smooth |u'|. gamma and beta stay at their defaults (ones, zeros); PARAMS leaves them
out.

The worked numbers (A5 ... Y5_NO_ATTENTION) are the course's, rounded to 3 decimals as printed:
compare with COURSE, half a unit of the third decimal, so that a number one digit off in the third
decimal fails. H5 is x_5 + a_5 exactly. M5 alone comes out 7.4e-4 from mlp(LN_H5, W_1, W_2), an
input already rounded: compare it with COURSE_ROUNDED. (The course's gelu(1.102) = 0.952 is a
rounding slip: it is 0.95279, so 0.953.) The arrays are read-only: copy before changing one.
"""

import numpy as np


def _const(rows):
    """A read-only float64 array, so that no test can change the example for the next one."""
    a = np.array(rows, dtype=np.float64)
    a.setflags(write=False)
    return a


# Embeddings, one row per token (n = 5, d_model = 4). Only the last row, ␣the, is the course's.
X = _const(
    [
        [0.5, 0.0, -0.5, 0.5],
        [1.0, 0.0, 0.0, 2.0],
        [-0.5, 0.0, -0.5, 1.5],
        [0.0, 0.0, -0.5, 1.0],
        [-0.5, -0.5, -0.5, 1.5],  # ␣the
    ]
)

# Single-head attention (d_model x d_model, applied as u @ W).
W_q = _const(np.eye(4))
W_k = _const(np.eye(4))
W_v = _const(
    [
        [1.5, 0.0, 0.7, 1.2],
        [0.9, 0.0, 0.0, 0.0],
        [0.0, 0.0, 0.4, -0.6],
        [0.0, 0.9, 0.0, -0.5],
    ]
)
W_o = _const(np.eye(4))

# MLP (the course's): W_1 = [I | -I] is 4 x 8, W_2 = [I ; I] is 8 x 4.
W_1 = _const(np.hstack([np.eye(4), -np.eye(4)]))
W_2 = _const(np.vstack([np.eye(4), np.eye(4)]))

# Keys match block()'s parameter names; gamma_1, beta_1, gamma_2, beta_2 take their defaults.
PARAMS = {"W_q": W_q, "W_k": W_k, "W_v": W_v, "W_o": W_o, "W_1": W_1, "W_2": W_2}

# The course's worked numbers for the last token, ␣the (3 decimals).
A5 = _const([-0.739, 1.411, -0.521, -0.520])  # a_5 = attention(layernorm(X), ...)[4]
H5 = _const([-1.239, 0.911, -1.021, 0.980])  # h_5 = x_5 + a_5
LN_H5 = _const([-1.102, 0.964, -0.892, 1.030])  # u'_5 = layernorm(h_5)
M5 = _const([0.803, 0.640, 0.560, 0.718])  # m_5 = mlp(u'_5, W_1, W_2)
Y5 = _const([-0.436, 1.551, -0.461, 1.698])  # y_5 = h_5 + m_5 = block(X, PARAMS)[4]
Y5_NO_ATTENTION = _const(
    [-0.248, -0.248, -0.248, 3.088]
)  # block(X, PARAMS, use_attention=False)[4]

COURSE = {
    "rtol": 0.0,
    "atol": 5e-4,
}  # the course prints 3 decimals: within half a unit of the third
COURSE_ROUNDED = {
    "rtol": 0.0,
    "atol": 1e-3,
}  # a course number computed from numbers it had rounded (M5)
F64 = {
    "rtol": 1e-10,
    "atol": 0.0,
}  # float64 throughout: the one test a float32 computation inside should fail
