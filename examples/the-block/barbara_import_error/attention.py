# Barbara - attention (copied over from my notebook)
import math

import numpy as np


def softmax(s, axis=-1):
    e = np.exp(s - np.max(s, axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def attention(u, W_q, W_k, W_v, W_o, n_heads=1, causal=True):
    n, d = u.shape
    hd = d // n_heads
    q = (u @ W_q).reshape(n, n_heads, hd).swapaxes(0, 1)  # (heads, n, hd)
    k = (u @ W_k).reshape(n, n_heads, hd).swapaxes(0, 1)
    v = (u @ W_v).reshape(n, n_heads, hd).swapaxes(0, 1)
    att = q @ k.swapaxes(1, 2) / math.sqrt(hd)
    if causal:
        att[:, ~np.tri(n, dtype=bool)] = -np.inf  # upper triangle = the future
    y = softmax(att) @ v  # (heads, n, hd)
    return y.swapaxes(0, 1).reshape(n, d) @ W_o


# quick check from the notebook
out = attention(u_demo, Wq, Wk, Wv, Wo, n_heads=2)
print(out.shape)
