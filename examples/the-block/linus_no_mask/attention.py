import math

import numpy as np


def softmax(s, axis=-1):
    m = np.max(s, axis=axis, keepdims=True)
    e = np.exp(s - m)
    return e / np.sum(e, axis=axis, keepdims=True)


def one_head(q, k, v):
    scores = q @ k.T / math.sqrt(q.shape[1])
    n = scores.shape[0]
    mask = np.triu(np.full((n, n), -np.inf), k=1)  # causal: no peeking at later tokens
    weights = softmax(scores)
    return weights @ v


def attention(u, W_q, W_k, W_v, W_o, n_heads=1, causal=True):
    # linus: loop over heads, glue them back together, project
    q, k, v = u @ W_q, u @ W_k, u @ W_v
    dh = u.shape[1] // n_heads
    heads = []
    for h in range(n_heads):
        a, b = h * dh, (h + 1) * dh
        heads.append(one_head(q[:, a:b], k[:, a:b], v[:, a:b]))
    return np.hstack(heads) @ W_o
