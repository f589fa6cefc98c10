"""Causal multi-head attention (Ada): all heads at once with einsum."""
import numpy as np


def softmax(s, axis=-1):
    shifted = s - np.max(s, axis=axis, keepdims=True)  # largest entry becomes 0, so exp can't overflow
    w = np.exp(shifted)
    return w / np.sum(w, axis=axis, keepdims=True)


def attention(u, W_q, W_k, W_v, W_o, n_heads=1, causal=True):
    n, d = u.shape
    dh = d // n_heads
    # (n, d) -> (n, heads, dh): head h gets columns h*dh .. (h+1)*dh - 1
    q = (u @ W_q).reshape(n, n_heads, dh)
    k = (u @ W_k).reshape(n, n_heads, dh)
    v = (u @ W_v).reshape(n, n_heads, dh)
    scores = np.einsum("ihc,jhc->hij", q, k) * dh**-0.5  # (heads, n, n)
    if causal:
        future = np.triu(np.ones((n, n), dtype=bool), k=1)  # j > i
        scores = np.where(future, -np.inf, scores)
    weights = softmax(scores, axis=-1)
    out = np.einsum("hij,jhc->ihc", weights, v)  # back to (n, heads, dh)
    return out.reshape(n, d) @ W_o
