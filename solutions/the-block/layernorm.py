"""LayerNorm, the Norm of a GPT-2 block (Ba, Kiros and Hinton 2016, "Layer Normalization")."""
import numpy as np


def layernorm(x, gamma=None, beta=None, eps=1e-5):  # (..., d) -> (..., d)
    """Normalise each row of x over its last axis, then scale by gamma and shift by beta.

    x: (..., d). gamma, beta: (d,), default ones and zeros. Returns a new array of x's shape and
    dtype. mean and population variance (divide by d) of each row; eps inside the square root:
    y = gamma * (x - mean) / sqrt(var + eps) + beta.  Ba et al. 2016; GPT-2, Radford et al. 2019.
    """
    gamma = np.ones(x.shape[-1], dtype=x.dtype) if gamma is None else gamma
    beta = np.zeros(x.shape[-1], dtype=x.dtype) if beta is None else beta
    mean = x.mean(axis=-1, keepdims=True)  # (..., d) -> (..., 1)
    var = x.var(axis=-1, keepdims=True)  # (..., d) -> (..., 1), ddof=0
    return gamma * (x - mean) / np.sqrt(var + eps) + beta  # (..., d) -> (..., d)
