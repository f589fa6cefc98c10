"""A pre-LN transformer block: talk (attention), then think (MLP), each added to the residual stream
(GPT-2)."""
from attention import attention
from gelu import gelu
from layernorm import layernorm


def mlp(u, W_1, W_2):  # (n, d_model) -> (n, d_model)
    """Position-wise feed-forward network: gelu(u @ W_1) @ W_2, the same weights for every token.

    u: (n, d_model). W_1: (d_model, d_ff). W_2: (d_ff, d_model). Returns (n, d_model).
    Vaswani et al. 2017, eq. (2), with GELU in place of ReLU as in GPT-2 (Radford et al. 2018,
    2019); no biases.
    """
    return gelu(u @ W_1) @ W_2  # (n, d_model) -> (n, d_ff) -> (n, d_model)


def block(x, params, n_heads=1, use_attention=True):  # (n, d_model) -> (n, d_model)
    """One pre-LN block: h = x + attention(LN_1(x)), y = h + mlp(LN_2(h)).

    x: (n, d_model). params: dict with W_q, W_k, W_v, W_o (d_model, d_model), W_1 (d_model, d_ff),
    W_2 (d_ff, d_model) and optional gamma_1, beta_1, gamma_2, beta_2 (d_model,), default ones and
    zeros. use_attention=False skips the attention branch (h = x). Returns (n, d_model).
    Pre-LN as in GPT-2 (Radford et al. 2019, section 2.3; Xiong et al. 2020).
    """
    p = params
    h = x
    if use_attention:
        u = layernorm(x, p.get("gamma_1"), p.get("beta_1"))  # (n, d_model) -> (n, d_model)
        h = x + attention(u, p["W_q"], p["W_k"], p["W_v"], p["W_o"], n_heads)  # (n, d_model)
    u = layernorm(h, p.get("gamma_2"), p.get("beta_2"))  # (n, d_model) -> (n, d_model)
    return h + mlp(u, p["W_1"], p["W_2"])  # (n, d_model) -> (n, d_model)
