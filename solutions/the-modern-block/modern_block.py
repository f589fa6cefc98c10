"""A modern pre-norm block: RMSNorm, grouped-query attention, SwiGLU (Llama; Touvron et al.
2023)."""
from gqa import gqa_attention
from rmsnorm import rmsnorm
from swiglu import swiglu


def modern_block(x, params, n_heads, n_kv_heads, use_attention=True):  # (n, d) -> (n, d)
    """One block: h = x + gqa_attention(RMSNorm_1(x)), y = h + swiglu(RMSNorm_2(h)).

    x: (n, d). params: W_q, W_o (d, d), W_k, W_v (d, n_kv_heads * d_head), W_1, W_3 (d, d_ff), W_2
    (d_ff, d) and optional gain_1, gain_2 (d,), default ones. use_attention=False skips the
    attention branch (h = x). Returns (n, d). Llama (Touvron et al. 2023; Grattafiori et al. 2024),
    without RoPE.
    """
    p = params
    h = x
    if use_attention:
        u = rmsnorm(x, p.get("gain_1"))  # (n, d) -> (n, d)
        h = x + gqa_attention(u, p["W_q"], p["W_k"], p["W_v"], p["W_o"], n_heads, n_kv_heads)
    u = rmsnorm(h, p.get("gain_2"))  # (n, d) -> (n, d)
    return h + swiglu(u, p["W_1"], p["W_3"], p["W_2"])  # (n, d) -> (n, d)
