"""LayerNorm -- Grace"""
import numpy as np


def layernorm(x, gamma=None, beta=None, eps=1e-5):
    # one row = one token, so everything is over the last axis
    mean = np.mean(x, axis=-1, keepdims=True)
    var = np.var(x, axis=-1, keepdims=True)  # np.var divides by d by default, which is what we want
    x_hat = (x - mean) / np.sqrt(var + eps)
    if gamma is not None:
        x_hat = x_hat * gamma
    if beta is not None:
        x_hat = x_hat + beta
    return x_hat
