"""Exercise: GELU, the MLP's activation, in GPT-2's tanh form (Hendrycks and Gimpel 2016).

You may import numpy and the Python standard library; nothing else is available when this is graded.
"""
import math

import numpy as np


def gelu(x):  # (...) -> (...)
    """Elementwise GELU, the tanh approximation GPT-2 uses.

    x: any shape. Returns the same shape (and dtype).

        gelu(x) = 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x**3)))

    What matters:
    - this is the tanh form, not the exact x * Phi(x) = 0.5 * x * (1 + erf(x / sqrt(2))); the two differ by up
      to about 5e-4 (near |x| = 2.7), enough for the grader to tell them apart;
    - the cubic coefficient is 0.044715, and sqrt(2 / pi) is about 0.798;
    - no loops: np.tanh works elementwise on whole arrays. math.sqrt keeps float32 input float32.

    Course check: gelu(-1.102) is about -0.149 and gelu(1.102) about 0.953 (0.95279: the course text's
    0.952 is a rounding slip).
    Source: Hendrycks and Gimpel 2016, section 2; GPT-2 (Radford et al. 2019).
    """
    raise NotImplementedError
