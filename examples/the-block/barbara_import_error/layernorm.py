# Barbara - layernorm (copied over from my notebook)
import numpy as np


def layernorm(x, gamma=None, beta=None, eps=1e-5):
    d = x.shape[-1]
    if gamma is None:
        gamma = np.ones(d, dtype=x.dtype)
    if beta is None:
        beta = np.zeros(d, dtype=x.dtype)
    m = np.mean(x, axis=-1, keepdims=True)
    v = np.var(x, axis=-1, keepdims=True)  # ddof=0 (population)
    normed = (x - m) / np.sqrt(v + eps)
    return normed * gamma + beta
