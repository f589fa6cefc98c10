"""Causal grouped-query attention (Ainslie et al. 2023, "GQA"; Shazeer 2019 for one K/V head)."""
import math

import numpy as np


def softmax(s):  # (..., n) -> (..., n)
    """Softmax over the last axis, the max subtracted first."""
    e = np.exp(s - s.max(axis=-1, keepdims=True))  # (..., n) -> (..., n)
    return e / e.sum(axis=-1, keepdims=True)


def gqa_attention(u, W_q, W_k, W_v, W_o, n_heads, n_kv_heads, causal=True):  # (n, d) -> (n, d)
    """Self-attention where groups of query heads share one K/V head.

    u: (n, d). W_q, W_o: (d, d). W_k, W_v: (d, n_kv_heads * d_head), d_head = d // n_heads. Query
    head h reads K/V head h // (n_heads // n_kv_heads): each K/V head is repeated (not tiled) for
    its group. Scores are scaled by sqrt(d_head) and masked causally; the heads are concatenated in
    order and projected by W_o. Returns (n, d). Ainslie et al. 2023; scaled dot-product attention,
    Vaswani et al. 2017, eq. (1).
    """
    n, d = u.shape
    if n_heads % n_kv_heads:
        raise ValueError(f"n_kv_heads={n_kv_heads} does not divide n_heads={n_heads}")
    d_head = d // n_heads
    q = (u @ W_q).reshape(n, n_heads, d_head).transpose(1, 0, 2)  # (n, d) -> (h, n, d_head)
    k = (u @ W_k).reshape(n, n_kv_heads, d_head).transpose(1, 0, 2)  # -> (h_kv, n, d_head)
    v = (u @ W_v).reshape(n, n_kv_heads, d_head).transpose(1, 0, 2)
    k, v = (t.repeat(n_heads // n_kv_heads, axis=0) for t in (k, v))  # -> (h, n, d_head)
    scores = q @ k.transpose(0, 2, 1) / math.sqrt(d_head)  # -> (h, n, n)
    if causal:
        scores = np.where(np.tri(n, dtype=bool), scores, -np.inf)  # token i sees tokens 0..i
    out = softmax(scores) @ v  # (h, n, n) @ (h, n, d_head) -> (h, n, d_head)
    return out.transpose(1, 0, 2).reshape(n, d) @ W_o  # (h, n, d_head) -> (n, d) -> (n, d)
