"""SwiGLU, the modern block's MLP (Shazeer 2020, "GLU Variants Improve Transformer")."""
import numpy as np


def silu(x):  # (...) -> (...)
    """SiLU (swish), x * sigmoid(x) = x / (1 + exp(-x)), elementwise; same shape and dtype.

    exp(-x) overflows to inf for x below about -710 (float64), and x / inf is the right limit, -0.0:
    the overflow is silenced, not avoided.  Ramachandran et al. 2017; Elfwing et al. 2018.
    """
    with np.errstate(over="ignore"):
        return x / (1 + np.exp(-x))  # (...) -> (...)


def swiglu_width(d):  # int -> int
    """The hidden width: 8d/3 (so three matrices hold what two of a 4d MLP do), rounded to a
    multiple of 256 with Python's round for d >= 256, else 8d // 3 (the course text's rule; Meta's
    code rounds up instead)."""
    return round(8 * d / 3 / 256) * 256 if d >= 256 else 8 * d // 3


def swiglu(u, W_1, W_3, W_2):  # (n, d) -> (n, d)
    """The gated MLP: (silu(u @ W_1) * (u @ W_3)) @ W_2; the gate W_1 goes through SiLU, W_3 is the
    linear value.

    u: (n, d). W_1, W_3: (d, d_ff). W_2: (d_ff, d). Returns (n, d). Shazeer 2020, eq. (6)
    (FFN_SwiGLU); no biases.
    """
    return (silu(u @ W_1) * (u @ W_3)) @ W_2  # (n, d) -> (n, d_ff) -> (n, d)
