"""LayerNorm. E. D."""
import numpy as np


def layernorm(x, gamma=None, beta=None, eps=1e-5):
    """Rows of x to mean 0 and variance 1 (divided by d), then the affine map gamma, beta."""
    n_features = x.shape[-1]
    gamma = np.ones(n_features, dtype=x.dtype) if gamma is None else np.asarray(gamma)
    beta = np.zeros(n_features, dtype=x.dtype) if beta is None else np.asarray(beta)
    deviation = x - np.mean(x, axis=-1, keepdims=True)
    inv_std = 1 / np.sqrt(np.mean(np.square(deviation), axis=-1, keepdims=True) + eps)
    return deviation * inv_std * gamma + beta
