"""Exercise: SwiGLU, the modern block's MLP (Shazeer 2020, "GLU Variants Improve Transformer").

You may import numpy and the Python standard library; nothing else is available when this is graded.
"""
import numpy as np


def silu(x):  # (...) -> (...)
    """Elementwise SiLU (also called swish): x times the sigmoid of x.

    x: any shape. Returns the same shape; float32 input gives float32 or float64 (both accepted),
    with the values float64 input gives.

        silu(x) = x / (1 + exp(-x))

    What matters:
    - x times the sigmoid, not the sigmoid alone;
    - for x = -1000, exp(1000) overflows to inf and x / inf = -0.0 is the right answer: silence
      numpy's overflow warning (with np.errstate(over="ignore")) rather than get a nan from a form
      like exp(x) / (1 + exp(x)) * x.

    Course check: silu(1) is about 0.731 and silu(-1) about -0.269.
    Source: Ramachandran et al. 2017; Elfwing et al. 2018.
    """
    raise NotImplementedError


def swiglu_width(d):  # int -> int
    """The hidden width of SwiGLU for a model of width d, as in the course's script.

        round(8 * d / 3 / 256) * 256    for d >= 256 (Python's round: a multiple of 256 near 8d/3)
        8 * d // 3                      for d < 256

    8d/3 (two thirds of GPT-2's 4d) because SwiGLU has three matrices where GPT-2's MLP has two.
    Meta's code rounds up (ceil) instead; the two differ at d = 2048: 5376 here, 5632 there.

    Course check: swiglu_width(8) = 21, swiglu_width(4096) = 11008.
    """
    raise NotImplementedError


def swiglu(u, W_1, W_3, W_2):  # (n, d) -> (n, d)
    """The gated MLP of a modern block, the same weights for every token.

    u: (n, d). W_1, W_3: (d, d_ff). W_2: (d_ff, d). Returns (n, d).

        gate   = silu(u @ W_1)          (n, d_ff)
        value  = u @ W_3                (n, d_ff)
        out    = (gate * value) @ W_2   (n, d)

    What matters:
    - SiLU on the W_1 branch only, multiplied elementwise by the W_3 branch; no biases;
    - use your own silu.

    Course check: in the course's script the hidden layer is (5, 21) for 5 tokens of d = 8.
    Source: Shazeer 2020, eq. (6) (FFN_SwiGLU); Llama (Touvron et al. 2023).
    """
    raise NotImplementedError
