# Alan -- attention, one head at a time
import math

import numpy as np


def softmax(s, axis=-1):
    s = s - s.max(axis=axis, keepdims=True)  # stability
    e = np.exp(s)
    return e / e.sum(axis=axis, keepdims=True)


def attention(u, W_q, W_k, W_v, W_o, n_heads=1, causal=True):
    n, d = u.shape
    dh = d // n_heads
    Q, K, V = u @ W_q, u @ W_k, u @ W_v
    allowed = np.tril(np.ones((n, n), dtype=bool))  # row i: True for columns 0..i
    outs = []
    for h in range(n_heads):
        cols = slice(h * dh, (h + 1) * dh)
        S = Q[:, cols] @ K[:, cols].T / math.sqrt(dh)
        if causal:
            S = np.where(allowed, S, -np.inf)
        outs.append(softmax(S) @ V[:, cols])
    return np.concatenate(outs, axis=1) @ W_o
