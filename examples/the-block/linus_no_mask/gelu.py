import numpy as np


def gelu(x):
    # linus: the GPT-2 one
    return 0.5 * x * (1 + np.tanh(0.7978845608028654 * (x + 0.044715 * x**3)))
