"""The course's modern block (the-block.txt, the script after "All five rows"): 5 tokens, d = 8, 2
query heads, 1 K/V head, SwiGLU hidden width swiglu_width(8) = 21, drawn exactly as the script draws
them (rng = np.random.default_rng(0); W_q, W_k, W_v, W_o, then W_1, W_3, W_2, then x), so its shapes
are the course's: Q (2, 5, 4), K and V (1, 5, 4) repeated to (2, 5, 4), weights (2, 5, 5), SwiGLU
hidden (5, 21), y (5, 8).

The script's RMSNorm has no gain: PARAMS leaves gain_1 and gain_2 out (their default, ones). The
arrays are read-only: copy before changing one.
"""

import numpy as np


def _const(a):
    """A read-only float64 array, so that no test can change the example for the next one."""
    a = np.array(a, dtype=np.float64)
    a.setflags(write=False)
    return a


N, D, HEADS, KV_HEADS = 5, 8, 2, 1
D_HEAD, D_FF = D // HEADS, 8 * D // 3  # 4, 21

_rng = np.random.default_rng(0)
W_q, W_k, W_v, W_o = (
    _const(_rng.normal(size=s) / np.sqrt(D))
    for s in [(D, D), (D, KV_HEADS * D_HEAD), (D, KV_HEADS * D_HEAD), (D, D)]
)
W_1 = _const(_rng.normal(size=(D, D_FF)) / np.sqrt(D))
W_3 = _const(_rng.normal(size=(D, D_FF)) / np.sqrt(D))
W_2 = _const(_rng.normal(size=(D_FF, D)) / np.sqrt(D_FF))
X = _const(_rng.normal(size=(N, D)))  # the residual stream entering the block, one row per token

# Keys match modern_block()'s parameter names; gain_1 and gain_2 take their default.
PARAMS = {"W_q": W_q, "W_k": W_k, "W_v": W_v, "W_o": W_o, "W_1": W_1, "W_3": W_3, "W_2": W_2}
