"""Exercise: LayerNorm, the Norm of a GPT-2 block (Ba, Kiros and Hinton 2016, "Layer
Normalization").

You may import numpy and the Python standard library; nothing else is available when this is graded.
"""
import numpy as np


def layernorm(x, gamma=None, beta=None, eps=1e-5):  # (..., d) -> (..., d)
    """Normalise each row of x over its last axis, then scale by gamma and shift by beta.

    x: (..., d), e.g. (n, d_model), one row per token. gamma, beta: (d,); None means ones and zeros.
    Returns a new array with x's shape.

        mean = average of the row's d numbers
        var  = average of (row - mean)**2       population variance: divide by d, not d - 1
        y    = gamma * (row - mean) / sqrt(var + eps) + beta

    What matters:
    - the last axis: each token is normalised on its own, never across tokens (axis=-1,
      keepdims=True), also when there are as many tokens as features (a square input);
    - np.var's default is ddof=0, the population variance we want; np.std(ddof=1) or torch.std is
      not;
    - eps goes inside the square root, sqrt(var + eps), not (x - mean) / (std + eps); a constant row
      gives beta;
    - return a new array: leave x, gamma and beta as they were (no x -= ... on them);
    - float32 input gives a float array of float32 or float64 (NumPy 2 promotes float32 times a
      float64 scalar such as np.sqrt(d), NumPy 1 did not: both are accepted) with the values float64
      input gives, to float32 precision; float64 input stays float64 throughout (checked to 1e-10).

    Course check: layernorm([-1.239, 0.911, -1.021, 0.980]) is about [-1.102, 0.964, -0.892, 1.030].
    Source: Ba et al. 2016, section 3; the Norm in GPT-2 (Radford et al. 2019).
    """
    raise NotImplementedError
