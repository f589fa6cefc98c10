"""Causal multi-head self-attention (Vaswani et al. 2017, "Attention Is All You Need"; GPT-2,
Radford et al. 2019)."""
import math

import numpy as np


def softmax(s, axis=-1):  # (..., n) -> (..., n)
    """Softmax along `axis`, made stable by subtracting the max first (exp never sees a large
    positive number).

    s: any shape; returns the same shape, each slice along `axis` summing to 1. A -inf entry gets
    weight 0.
    """
    e = np.exp(s - s.max(axis=axis, keepdims=True))  # (..., n) -> (..., n)
    return e / e.sum(axis=axis, keepdims=True)  # (..., n) -> (..., n)


def causal_mask(n):  # n -> (n, n)
    """Boolean (n, n) mask, True where token i may see token j, i.e. j <= i (GPT-2's autoregressive
    mask)."""
    return np.tri(n, dtype=bool)  # n -> (n, n)


def attend(q, k, v, causal=True):  # (n, d_head), (n, d_head), (n, d_head) -> (n, d_head)
    """One head: softmax(q k^T / sqrt(d_head)) v, masked with -inf above the diagonal when causal.

    Scaled dot-product attention, Vaswani et al. 2017, eq. (1).
    """
    scores = q @ k.swapaxes(-2, -1) / math.sqrt(q.shape[-1])  # (n, d_head) @ (d_head, n) -> (n, n)
    if causal:
        scores = np.where(causal_mask(q.shape[-2]), scores, -np.inf)  # (n, n) -> (n, n)
    return softmax(scores) @ v  # (n, n) @ (n, d_head) -> (n, d_head)


def attention(u, W_q, W_k, W_v, W_o, n_heads=1, causal=True):  # (n, d_model) -> (n, d_model)
    """Multi-head self-attention on the normalised stream u.

    u: (n, d_model). W_q, W_k, W_v, W_o: (d_model, d_model), applied as u @ W (GPT-2 layout, [in,
    out]). Head h uses columns h*d_head:(h+1)*d_head of q, k, v, with d_head = d_model // n_heads;
    the heads' outputs are concatenated in order and projected by W_o. Returns (n, d_model).
    Vaswani et al. 2017, section 3.2.2; causal as in GPT-2, Radford et al. 2019.
    """
    d_model = u.shape[-1]
    if d_model % n_heads:
        raise ValueError(f"d_model={d_model} is not divisible by n_heads={n_heads}")
    d_head = d_model // n_heads
    q, k, v = u @ W_q, u @ W_k, u @ W_v  # (n, d_model) @ (d_model, d_model) -> (n, d_model)
    heads = [slice(h * d_head, (h + 1) * d_head) for h in range(n_heads)]
    out = [attend(q[..., s], k[..., s], v[..., s], causal) for s in heads]  # n_heads x (n, d_head)
    return np.concatenate(out, axis=-1) @ W_o  # (n, d_model) @ (d_model, d_model) -> (n, d_model)
