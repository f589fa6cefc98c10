"""GELU, tanh version (Ada)."""
import numpy as np

C = (2 / np.pi) ** 0.5  # a plain Python float, so float32 arrays stay float32


def gelu(x):
    inner = C * (x + 0.044715 * np.power(x, 3))
    return 0.5 * x * (1.0 + np.tanh(inner))
