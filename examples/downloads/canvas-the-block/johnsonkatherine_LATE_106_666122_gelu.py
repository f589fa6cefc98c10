"""Kathy's GELU. Why approximate? GELU(x) = x * Phi(x) with Phi the normal CDF, and math has erf."""
import math

import numpy as np

_erf = np.vectorize(math.erf, otypes=[float])


def gelu(x):  # (...) -> (...)
    x = np.asarray(x)
    phi = 0.5 * (1.0 + _erf(x / math.sqrt(2.0)))  # standard normal CDF, exactly
    return (x * phi).astype(x.dtype, copy=False)  # vectorize hands back float64; keep the input's dtype
