# Alan -- the block
from attention import attention
from gelu import gelu
from layernorm import layernorm


def mlp(u, W_1, W_2):
    return gelu(u @ W_1) @ W_2


def block(x, params, n_heads=1, use_attention=True):
    """pre-LN: normalise, sublayer, add back"""
    if use_attention:
        a = attention(layernorm(x, params.get("gamma_1"), params.get("beta_1")),
                      params["W_q"], params["W_k"], params["W_v"], params["W_o"], n_heads)
        h = x + a
    else:
        h = x
    m = mlp(layernorm(h, params.get("gamma_2"), params.get("beta_2")), params["W_1"], params["W_2"])
    return h + m
