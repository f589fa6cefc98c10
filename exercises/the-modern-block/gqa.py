"""Exercise: causal grouped-query attention (Ainslie et al. 2023, "GQA"; Shazeer 2019 for one K/V
head).

You may import numpy and the Python standard library; nothing else is available when this is graded.
"""
import math

import numpy as np


def gqa_attention(u, W_q, W_k, W_v, W_o, n_heads, n_kv_heads, causal=True):  # (n, d) -> (n, d)
    """Self-attention where groups of query heads share one K/V head.

    u: (n, d), one row per token. d_head = d // n_heads. W_q, W_o: (d, d). W_k, W_v: (d, n_kv_heads
    * d_head), applied as u @ W. Returns (n, d).

        q = (u @ W_q) split into n_heads heads       (n_heads, n, d_head)
        k, v = (u @ W_k), (u @ W_v) split likewise   (n_kv_heads, n, d_head)
        group = n_heads // n_kv_heads; query head h reads K/V head h // group:
            k = k.repeat(group, axis=0)              (n_heads, n, d_head), and v the same
        scores = q @ k^T / sqrt(d_head)              (n_heads, n, n)
        scores[:, i, j] = -inf for j > i, when causal
        out = softmax(scores) @ v                    (n_heads, n, d_head)
        heads concatenated in order, then @ W_o      (n, d)

    What matters:
    - repeat, not tile: with 4 query heads and 2 K/V heads, heads 0, 1 read K/V head 0 and heads 2,
      3 read K/V head 1 (np.tile would give 0, 1, 0, 1);
    - scale by sqrt(d_head), not sqrt(d);
    - n_kv_heads must divide n_heads: raise ValueError otherwise;
    - n_kv_heads = n_heads is the-block's multi-head attention, n_kv_heads = 1 is multi-query
      attention;
    - write your own softmax (max subtracted, over the last axis); leave the inputs unchanged;
    - float32 input and weights give a float array of float32 or float64 (NumPy 2 promotes float32
      times a float64 scalar such as np.sqrt(d), NumPy 1 did not: both are accepted) with the values
      float64 input gives, to float32 precision; float64 input stays float64 throughout.

    Course check: the course's script has 5 tokens, d = 8, 2 query heads and 1 K/V head: Q is (2, 5,
    4), K and V (1, 5, 4) repeated to (2, 5, 4), the weights (2, 5, 5), the output (5, 8).
    Source: Ainslie et al. 2023; Vaswani et al. 2017, eq. (1).
    """
    raise NotImplementedError
