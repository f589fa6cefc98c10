"""Kathy's block (pre-LN, like GPT-2)."""
from attention import attention
from gelu import gelu
from layernorm import layernorm


def mlp(u, W_1, W_2):
    return gelu(u @ W_1) @ W_2


def block(x, params, n_heads=1, use_attention=True):
    get = params.get
    h = x
    if use_attention:
        h = h + attention(layernorm(x, get("gamma_1"), get("beta_1")),
                          params["W_q"], params["W_k"], params["W_v"], params["W_o"], n_heads)
    return h + mlp(layernorm(h, get("gamma_2"), get("beta_2")), params["W_1"], params["W_2"])
