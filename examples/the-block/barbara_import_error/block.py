# Barbara - block (copied over from my notebook)
from attention import attention
from gelu import gelu
from layernorm import layernorm


def mlp(u, W_1, W_2):
    z = u @ W_1
    return gelu(z) @ W_2


def block(x, params, n_heads=1, use_attention=True):
    h = x.copy()
    if use_attention:
        ln1 = layernorm(x, params.get("gamma_1"), params.get("beta_1"))
        h = h + attention(ln1, params["W_q"], params["W_k"], params["W_v"], params["W_o"], n_heads=n_heads)
    ln2 = layernorm(h, params.get("gamma_2"), params.get("beta_2"))
    return h + mlp(ln2, params["W_1"], params["W_2"])
