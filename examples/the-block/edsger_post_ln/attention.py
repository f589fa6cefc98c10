"""Causal multi-head attention. E. D."""
import math

import numpy as np


def softmax(s, axis=-1):
    """exp(s - max) / sum: the max is subtracted so that exp cannot overflow."""
    shifted = s - np.amax(s, axis=axis, keepdims=True)
    numerators = np.exp(shifted)
    return numerators / np.sum(numerators, axis=axis, keepdims=True)


def attention(u, W_q, W_k, W_v, W_o, n_heads=1, causal=True):
    """Heads are consecutive column blocks of q, k and v; their outputs are concatenated, then W_o."""
    n, d_model = u.shape
    d_head = d_model // n_heads
    q, k, v = u @ W_q, u @ W_k, u @ W_v
    visible = np.tril(np.ones((n, n), dtype=bool))
    pieces = []
    for h in range(n_heads):
        block_ = slice(h * d_head, (h + 1) * d_head)
        scores = (q[:, block_] @ k[:, block_].T) / math.sqrt(d_head)
        if causal:
            scores = np.where(visible, scores, -np.inf)
        pieces.append(softmax(scores, axis=-1) @ v[:, block_])
    return np.concatenate(pieces, axis=-1) @ W_o
