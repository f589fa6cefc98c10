# Alan -- layer norm
import numpy as np


def layernorm(x, gamma=None, beta=None, eps=1e-5):
    """Standardise each token's vector: subtract its mean, divide by its standard deviation."""
    d = x.shape[-1]
    gamma = np.ones(d, x.dtype) if gamma is None else gamma
    beta = np.zeros(d, x.dtype) if beta is None else beta
    mean = x.mean(axis=-1, keepdims=True)
    # sample variance, like in the stats course (unbiased estimator)
    var = x.var(axis=-1, ddof=1, keepdims=True)
    return gamma * (x - mean) / np.sqrt(var + eps) + beta
