"""RMSNorm, the Norm of a modern block (Zhang and Sennrich 2019, "Root Mean Square Layer
Normalization")."""
import numpy as np


def rmsnorm(x, gain=None, eps=1e-6):  # (..., d) -> (..., d)
    """Divide each row of x by its root mean square over the last axis, then scale by gain.

    x: (..., d). gain: (d,), default ones. Returns a new array of x's shape and dtype.
    No mean is subtracted and there is no shift: y = x / sqrt(mean(x**2) + eps) * gain.  Zhang and
    Sennrich 2019; Llama, Touvron et al. 2023.
    """
    gain = np.ones(x.shape[-1], dtype=x.dtype) if gain is None else gain
    ms = (x * x).mean(axis=-1, keepdims=True)  # (..., d) -> (..., 1)
    return x / np.sqrt(ms + eps) * gain  # (..., d) -> (..., d)
