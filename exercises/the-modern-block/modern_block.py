"""Exercise: a modern pre-norm block, RMSNorm, grouped-query attention and SwiGLU (Llama, without
RoPE).

You may import numpy and the Python standard library; nothing else is available when this is graded.
"""
from gqa import gqa_attention
from rmsnorm import rmsnorm
from swiglu import swiglu


def modern_block(x, params, n_heads, n_kv_heads, use_attention=True):  # (n, d) -> (n, d)
    """One block: normalise a copy, compute a correction, add it to the stream; twice.

    x: (n, d). params: dict with "W_q", "W_o" (d, d), "W_k", "W_v" (d, n_kv_heads * d_head), "W_1",
    "W_3" (d, d_ff), "W_2" (d_ff, d) and, optionally, "gain_1", "gain_2" (d,) (absent means ones:
    use params.get). Returns (n, d).

        h = x + gqa_attention(rmsnorm(x, gain_1), W_q, W_k, W_v, W_o, n_heads, n_kv_heads)
        y = h + swiglu(rmsnorm(h, gain_2), W_1, W_3, W_2)

    What matters:
    - pre-norm: RMSNorm on each branch's input, the residual adds to the un-normalised stream;
    - use_attention=False skips the first branch entirely: h = x;
    - use your own rmsnorm, gqa_attention and swiglu; don't modify x or params (no new keys:
      params.get);
    - float32 input and weights give a float array of float32 or float64 (NumPy 2 promotes float32
      times a float64 scalar such as np.sqrt(d), NumPy 1 did not: both are accepted) with the values
      float64 input gives, to float32 precision; float64 input stays float64 throughout.

    Course check: the course's script pushes 5 tokens of d = 8 through it (2 query heads, 1 K/V
    head, SwiGLU hidden (5, 21)): (5, 8) in, (5, 8) out.
    Source: Llama (Touvron et al. 2023; Grattafiori et al. 2024).
    """
    raise NotImplementedError
