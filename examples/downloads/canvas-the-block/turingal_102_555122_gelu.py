# Alan -- gelu
import math

import numpy as np

A = 0.044715
B = math.sqrt(2 / math.pi)


def gelu(x):
    """tanh approximation from the GPT-2 code"""
    t = np.tanh(B * (x + A * x * x * x))
    return 0.5 * x * (1 + t)
