"""Exercise: GELU, the MLP's activation, in GPT-2's tanh form (Hendrycks and Gimpel 2016).

You may import numpy and the Python standard library; nothing else is available when this is graded.
"""
import math

import numpy as np


def gelu(x):  # (...) -> (...)
    """Elementwise GELU, the tanh approximation GPT-2 uses.

    x: any shape. Returns a new array of the same shape (x left as it was).

        gelu(x) = 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x**3)))

    What matters:
    - this is the tanh form, not the exact x * Phi(x) = 0.5 * x * (1 + erf(x / sqrt(2))); the two
      differ by up to about 5e-4 (near |x| = 2.7), enough for the grader to tell them apart;
    - the cubic coefficient is 0.044715, and sqrt(2 / pi) is about 0.798;
    - no loops: np.tanh works elementwise on whole arrays; large |x| (up to 50) stays finite;
    - float32 input gives a float array of float32 or float64 (NumPy 2 promotes float32 times a
      float64 scalar such as np.sqrt(d), NumPy 1 did not: both are accepted) with the values float64
      input gives, to float32 precision; float64 input stays float64 throughout (checked to 1e-10).

    Course check: gelu(-1.102) is about -0.149 and gelu(1.102) about 0.953 (0.95279: the course
    text's 0.952 is a rounding slip).
    Source: Hendrycks and Gimpel 2016, section 2; GPT-2 (Radford et al. 2019).
    """
    raise NotImplementedError
