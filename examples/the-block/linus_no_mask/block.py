from attention import attention
from gelu import gelu
from layernorm import layernorm


def mlp(u, W_1, W_2):
    return gelu(u @ W_1) @ W_2


def block(x, params, n_heads=1, use_attention=True):
    # linus: pre-LN, two residual adds
    P = params
    if use_attention:
        u = layernorm(x, P.get("gamma_1"), P.get("beta_1"))
        h = x + attention(u, P["W_q"], P["W_k"], P["W_v"], P["W_o"], n_heads=n_heads)
    else:
        h = x
    u2 = layernorm(h, P.get("gamma_2"), P.get("beta_2"))
    return h + mlp(u2, P["W_1"], P["W_2"])
