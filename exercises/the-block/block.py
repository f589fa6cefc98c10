"""Exercise: a pre-LN transformer block, attention then MLP, each added to the residual stream
(GPT-2).

You may import numpy and the Python standard library; nothing else is available when this is graded.
"""
from attention import attention
from gelu import gelu
from layernorm import layernorm


def mlp(u, W_1, W_2):  # (n, d_model) -> (n, d_model)
    """Position-wise feed-forward network, the same weights for every token: gelu(u @ W_1) @ W_2.

    u: (n, d_model). W_1: (d_model, d_ff). W_2: (d_ff, d_model). Returns (n, d_model).
    GELU sits between the two products (no biases in this exercise). float32 input and weights give
    float32 or float64 (both accepted), with the values float64 input gives.

    Course check: with W_1 = [I | -I] and W_2 = [I ; I], mlp(u) = gelu(u) + gelu(-u), and
    mlp([-1.102, 0.964, -0.892, 1.030]) is about [0.803, 0.640, 0.560, 0.718].
    Source: Vaswani et al. 2017, eq. (2), with GELU for ReLU as in GPT-2 (Radford et al. 2019).
    """
    raise NotImplementedError


def block(x, params, n_heads=1, use_attention=True):  # (n, d_model) -> (n, d_model)
    """One pre-LN block: normalise a copy, compute a correction, add it to the stream; twice.

    x: (n, d_model). params: dict with "W_q", "W_k", "W_v", "W_o", "W_1", "W_2" and, optionally,
    "gamma_1", "beta_1", "gamma_2", "beta_2" (absent means LayerNorm's defaults: use params.get).
    Returns (n, d_model).

        h = x + attention(layernorm(x, gamma_1, beta_1), W_q, W_k, W_v, W_o, n_heads)
        y = h + mlp(layernorm(h, gamma_2, beta_2), W_1, W_2)

    What matters:
    - pre-LN: LayerNorm goes on the input of each branch, and the residual adds to the un-normalised
      stream; post-LN, layernorm(x + attention(x)), is the 2017 layout, not GPT-2's;
    - use_attention=False skips the first branch entirely: h = x, and attention is not called at
      all;
    - use your own layernorm, attention, gelu and mlp; don't modify x or params (no x += ..., no new
      keys in params: read the optional ones with params.get);
    - float32 input and weights give a float array of float32 or float64 (NumPy 2 promotes float32
      times a float64 scalar such as np.sqrt(d), NumPy 1 did not: both are accepted) with the values
      float64 input gives, to float32 precision; float64 input stays float64 throughout (checked to
      1e-10).

    Course check: for the toy (tests/public/toy.py) the last row is about [-0.436, 1.551, -0.461,
    1.698], and [-0.248, -0.248, -0.248, 3.088] with use_attention=False.
    Source: GPT-2 (Radford et al. 2019, section 2.3); Xiong et al. 2020 on pre-LN.
    """
    raise NotImplementedError
