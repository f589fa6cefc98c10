"""The transformer block. E. D.

Layout as in the original Transformer (Vaswani et al. 2017): each sublayer's output is added to its input and
the sum is normalised, LayerNorm(x + Sublayer(x)).
"""
from attention import attention
from gelu import gelu
from layernorm import layernorm


def mlp(u, W_1, W_2):
    """Position-wise feed-forward: gelu(u W_1) W_2."""
    return gelu(u @ W_1) @ W_2


def block(x, params, n_heads=1, use_attention=True):
    """Attention sublayer (optional), then the MLP sublayer, each followed by add & norm."""
    h = x
    if use_attention:
        a = attention(h, params["W_q"], params["W_k"], params["W_v"], params["W_o"], n_heads)
        h = layernorm(h + a, params.get("gamma_1"), params.get("beta_1"))
    m = mlp(h, params["W_1"], params["W_2"])
    return layernorm(h + m, params.get("gamma_2"), params.get("beta_2"))
