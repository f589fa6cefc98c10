"""GELU -- Grace"""
import math

import numpy as np


def gelu(x):
    # GPT-2's tanh approximation
    k = math.sqrt(2.0 / math.pi)
    return 0.5 * x * (1 + np.tanh(k * (x + 0.044715 * x ** 3)))
