"""Exercise: RMSNorm, the Norm of a modern block (Zhang and Sennrich 2019, "Root Mean Square Layer
Normalization").

You may import numpy and the Python standard library; nothing else is available when this is graded.
"""
import numpy as np


def rmsnorm(x, gain=None, eps=1e-6):  # (..., d) -> (..., d)
    """Divide each row of x by its root mean square over the last axis, then scale by gain.

    x: (..., d), e.g. (n, d_model), one row per token. gain: (d,); None means ones.
    Returns a new array with x's shape.

        ms = average of the row's d squares, mean(x**2)
        y  = x / sqrt(ms + eps) * gain

    What matters:
    - no mean is subtracted and there is no beta: that is what RMSNorm drops from LayerNorm;
    - the last axis: each token on its own (axis=-1, keepdims=True), a square input too;
    - eps inside the square root: a row of zeros gives zeros, not nan;
    - return a new array: leave x and gain as they were;
    - float32 input gives a float array of float32 or float64 (NumPy 2 promotes float32 times a
      float64 scalar such as np.sqrt(d), NumPy 1 did not: both are accepted) with the values float64
      input gives, to float32 precision; float64 input stays float64 throughout.

    Course check: rmsnorm([3, 4, 5, 6]) is about [0.647, 0.863, 1.078, 1.294] (mean square 21.5,
    kept: no centring); the course's script (5 tokens, d = 8) normalises x with u = rmsnorm(x),
    shape (5, 8), and a row multiplied by 10 gives the same output row.
    Source: Zhang and Sennrich 2019; Llama (Touvron et al. 2023).
    """
    raise NotImplementedError
