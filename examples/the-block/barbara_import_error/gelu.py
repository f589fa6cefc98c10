# Barbara - gelu (copied over from my notebook)
import math

import numpy as np


def gelu(x):
    c = math.sqrt(2 / math.pi)
    return x * 0.5 * (1 + np.tanh(c * (x + 0.044715 * x**3)))
