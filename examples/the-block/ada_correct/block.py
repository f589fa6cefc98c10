"""Pre-LN block (Ada): talk, then think."""
from attention import attention
from gelu import gelu
from layernorm import layernorm


def mlp(u, W_1, W_2):
    hidden = gelu(u @ W_1)  # (n, d_ff)
    return hidden @ W_2


def block(x, params, n_heads=1, use_attention=True):
    p = params
    stream = x
    if use_attention:
        talk = attention(layernorm(stream, p.get("gamma_1"), p.get("beta_1")),
                         p["W_q"], p["W_k"], p["W_v"], p["W_o"], n_heads=n_heads)
        stream = stream + talk  # not +=, that would write into the caller's x
    think = mlp(layernorm(stream, p.get("gamma_2"), p.get("beta_2")), p["W_1"], p["W_2"])
    return stream + think
