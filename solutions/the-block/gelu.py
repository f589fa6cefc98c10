"""GELU, the MLP's activation, in GPT-2's tanh form (Hendrycks and Gimpel 2016, "Gaussian Error
Linear Units")."""
import math

import numpy as np


def gelu(x):  # (...) -> (...)
    """Elementwise GELU, tanh approximation: 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 *
    x**3))).

    x: any shape; returns the same shape and dtype. The tanh approximation of x * Phi(x) from
    Hendrycks and Gimpel 2016, section 2, as GPT-2 uses it (Radford et al. 2019); not the exact form
    with erf.
    """
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))  # (...) -> (...)
