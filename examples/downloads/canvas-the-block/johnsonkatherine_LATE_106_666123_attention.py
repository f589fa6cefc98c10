"""Kathy's attention: reshape into heads, batched matmuls."""
import numpy as np


def softmax(s, axis=-1):
    z = s - s.max(axis=axis, keepdims=True)
    ez = np.exp(z)
    return ez / ez.sum(axis=axis, keepdims=True)


def attention(u, W_q, W_k, W_v, W_o, n_heads=1, causal=True):  # (n, d) -> (n, d)
    n, d = u.shape
    d_head = d // n_heads

    def heads(m):  # (n, d) -> (n_heads, n, d_head)
        return m.reshape(n, n_heads, d_head).transpose(1, 0, 2)

    q, k, v = heads(u @ W_q), heads(u @ W_k), heads(u @ W_v)
    s = q @ k.transpose(0, 2, 1) / d_head**0.5  # (n_heads, n, n)
    if causal:
        s = np.where(np.tri(n, dtype=bool), s, -np.inf)
    o = softmax(s) @ v  # (n_heads, n, d_head)
    return o.transpose(1, 0, 2).reshape(n, d) @ W_o
