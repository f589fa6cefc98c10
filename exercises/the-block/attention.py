"""Exercise: causal multi-head self-attention (Vaswani et al. 2017; GPT-2, Radford et al. 2019).

You may import numpy and the Python standard library; nothing else is available when this is graded.
"""
import math

import numpy as np


def softmax(s, axis=-1):  # (..., n) -> (..., n)
    """Softmax along `axis`: exp(s) / sum(exp(s)), each slice along `axis` summing to 1.

    s: any shape. Returns the same shape; float32 scores give float32 or float64 weights (both
    accepted).

    What matters:
    - subtract the row max before exp: exp(s - max) / sum(exp(s - max)) is the same softmax, but exp
      never sees a large positive number, so s = [1000, 1001] gives [0.269, 0.731] instead of nan;
    - keepdims=True on the max and the sum, so they broadcast back against s;
    - an entry of -inf gets weight exactly 0 (exp(-inf) = 0), which is how the causal mask works.
    """
    raise NotImplementedError


def attention(u, W_q, W_k, W_v, W_o, n_heads=1, causal=True):  # (n, d_model) -> (n, d_model)
    """Multi-head self-attention on the normalised stream u.

    u: (n, d_model), one row per token. W_q, W_k, W_v, W_o: (d_model, d_model), applied as u @ W.
    Returns (n, d_model).

        q, k, v = u @ W_q, u @ W_k, u @ W_v                    (n, d_model) each
        d_head = d_model // n_heads
        head h uses columns h*d_head:(h+1)*d_head of q, k and v:
            scores = q_h @ k_h.T / sqrt(d_head)                (n, n)
            scores[i, j] = -inf for j > i, when causal         token i sees tokens 0..i only
            out_h = softmax(scores) @ v_h                      (n, d_head)
        concatenate out_0, out_1, ... in order, then @ W_o     (n, d_model)

    What matters:
    - scale by sqrt(d_head), not sqrt(d_model) (they differ as soon as n_heads > 1);
    - the mask hides the future (j > i) and keeps the diagonal: every token sees itself;
    - mask with -inf before the softmax, never by multiplying by 0 after it; a stand-in must be at
      least as strong: -1e9 or np.finfo(scores.dtype).min are fine, -1000 is not (scores can reach
      thousands);
    - heads are consecutive column blocks; concatenating them in order undoes the split;
    - softmax over the last axis (the keys j), one row per query i;
    - leave u and the weights unchanged;
    - float32 input and weights give a float array of float32 or float64 (NumPy 2 promotes float32
      times a float64 scalar such as np.sqrt(d), NumPy 1 did not: both are accepted) with the values
      float64 input gives, to float32 precision; float64 input stays float64 throughout (checked to
      1e-10).

    Source: Vaswani et al. 2017, eq. (1) and section 3.2.2; causal masking as in GPT-2 (Radford et
    al. 2019).
    """
    raise NotImplementedError
