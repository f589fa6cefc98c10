"""Single faults written as a class writes them, for the diagnosis measurement
(test_diagnosis_evidence.py).

Each fault is one module of the reference rewritten in another shape (loops, einsum, a class,
PyTorch's habits, a formula copied from a paper) with one thing wrong. The shapes come first, each
correct, as controls: a correct module in an unusual shape must get full marks and no diagnosis.
Then:

- UNCATALOGUED: faults that no catalogued mistake describes (written differently from the
  catalogue's variants and from tests/the-block/checks/mutants.py); a diagnosis naming a catalogued
  mistake is a wrong diagnosis, unless ``accept`` lists it (its message is true of the fault, e.g.
  "the wrong gains" for gain_1 given to both norms);
- CATALOGUED: the catalogue's mistakes in these shapes, each of which must be named (and nothing
  else).

Nothing here is run at import: ``write(folder, assignment, name)`` writes a submission.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[3]


@dataclass(frozen=True)
class Fault:
    """One module in a shape, with ``edits`` made to it; ``mistake``: the catalogued family it is
    ("" when it is none), ``accept``: families whose message is also true of it."""

    module: str
    shape: str
    edits: tuple[tuple[str, str], ...] = ()
    mistake: str = ""
    accept: tuple[str, ...] = ()


# ============================================================================================
# the-block: shapes

LN_LOOPS = '''"""LayerNorm with explicit loops over the rows."""
import numpy as np


def _moments(row):
    n = len(row)
    total = 0.0
    for value in row:
        total += float(value)
    mean = total / n
    spread = 0.0
    for value in row:
        spread += (float(value) - mean) ** 2
    return mean, spread / n


def layernorm(x, gamma=None, beta=None, eps=1e-5):
    x = np.asarray(x)
    d = x.shape[-1]
    gamma = np.ones(d) if gamma is None else np.asarray(gamma, dtype=np.float64)
    beta = np.zeros(d) if beta is None else np.asarray(beta, dtype=np.float64)
    rows = x.reshape(-1, d)
    out = np.empty(rows.shape)
    for i in range(rows.shape[0]):
        mean, var = _moments(rows[i])
        out[i] = gamma * (rows[i] - mean) / np.sqrt(var + eps) + beta
    return out.reshape(x.shape)
'''

LN_CLASS = '''"""LayerNorm as PyTorch writes it: a module with a weight and a bias."""
import numpy as np


class LayerNorm:
    def __init__(self, d, eps=1e-5, weight=None, bias=None):
        self.eps = eps
        self.weight = np.ones(d) if weight is None else np.asarray(weight)
        self.bias = np.zeros(d) if bias is None else np.asarray(bias)

    def __call__(self, x):
        mu = x.mean(-1, keepdims=True)
        sigma2 = ((x - mu) ** 2).mean(-1, keepdims=True)
        x_hat = (x - mu) / np.sqrt(sigma2 + self.eps)
        return self.weight * x_hat + self.bias


def layernorm(x, gamma=None, beta=None, eps=1e-5):
    return LayerNorm(x.shape[-1], eps, gamma, beta)(x)
'''

LN_EINSUM = '''"""LayerNorm with the statistics as einsum contractions."""
import numpy as np


def layernorm(x, gamma=None, beta=None, eps=1e-5):
    d = x.shape[-1]
    mean = np.einsum("...d->...", x)[..., None] / d
    centred = x - mean
    var = np.einsum("...d,...d->...", centred, centred)[..., None] / d
    inv = 1.0 / np.sqrt(var + eps)
    y = centred * inv
    if gamma is not None:
        y = y * gamma
    if beta is not None:
        y = y + beta
    return y
'''

LN_NUMPY = '''"""LayerNorm along the features' axis."""
import numpy as np


def layernorm(x, gamma=None, beta=None, eps=1e-5):
    d = x.shape[-1]
    axis = -1
    mean = np.mean(x, axis=axis, keepdims=True)
    var = np.mean((x - mean) ** 2, axis=axis, keepdims=True)
    normed = (x - mean) / np.sqrt(var + eps)
    gamma = np.ones(d, dtype=x.dtype) if gamma is None else gamma
    beta = np.zeros(d, dtype=x.dtype) if beta is None else beta
    return normed * gamma + beta
'''

GELU_PAPER = '''"""GELU as Hendrycks and Gimpel write the tanh approximation."""
import math

import numpy as np

SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
C = 0.044715


def gelu(x):
    inner = SQRT_2_OVER_PI * (x + C * np.power(x, 3))
    return 0.5 * x * (1.0 + np.tanh(inner))
'''

GELU_SCALAR = '''"""GELU one number at a time, vectorised at the end."""
import math

import numpy as np


def _gelu(v):
    return 0.5 * v * (1 + math.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v ** 3)))


def gelu(x):
    return np.vectorize(_gelu, otypes=[float])(x)
'''

ATT_EINSUM = '''"""Attention with every product as an einsum."""
import math

import numpy as np


def softmax(s, axis=-1):
    m = np.max(s, axis=axis, keepdims=True)
    e = np.exp(s - m)
    return e / np.sum(e, axis=axis, keepdims=True)


def attention(u, W_q, W_k, W_v, W_o, n_heads=1, causal=True):
    n, d = u.shape
    d_head = d // n_heads
    q = np.einsum("nd,de->ne", u, W_q).reshape(n, n_heads, d_head)
    k = np.einsum("nd,de->ne", u, W_k).reshape(n, n_heads, d_head)
    v = np.einsum("nd,de->ne", u, W_v).reshape(n, n_heads, d_head)
    scores = np.einsum("ihd,jhd->hij", q, k) / math.sqrt(d_head)
    if causal:
        future = np.triu(np.ones((n, n), dtype=bool), k=1)
        scores = np.where(future, -np.inf, scores)
    weights = softmax(scores, axis=-1)
    out = np.einsum("hij,jhd->ihd", weights, v).reshape(n, d)
    return out @ W_o
'''

ATT_LOOPS = '''"""Attention with Python loops over heads, queries and keys."""
import math

import numpy as np


def _softmax_row(row):
    top = max(row)
    exps = [np.exp(v - top) for v in row]
    total = sum(exps)
    return np.array([e / total for e in exps])


def softmax(s, axis=-1):
    return np.apply_along_axis(_softmax_row, axis, np.asarray(s, dtype=np.float64))


def attention(u, W_q, W_k, W_v, W_o, n_heads=1, causal=True):
    n, d = u.shape
    d_head = d // n_heads
    q, k, v = u @ W_q, u @ W_k, u @ W_v
    out = np.zeros((n, d))
    for h in range(n_heads):
        cols = slice(h * d_head, (h + 1) * d_head)
        for i in range(n):
            row = []
            for j in range(n):
                if causal and j > i:
                    row.append(-math.inf)
                else:
                    row.append(float(q[i, cols] @ k[j, cols]) / math.sqrt(d_head))
            out[i, cols] = _softmax_row(row) @ v[:, cols]
    return out @ W_o
'''

ATT_CLASS = '''"""Attention as a PyTorch module: split, score, mask, merge, project."""
import math

import numpy as np


def softmax(s, axis=-1):
    shifted = s - np.max(s, axis=axis, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=axis, keepdims=True)


class CausalSelfAttention:
    def __init__(self, W_q, W_k, W_v, W_o, n_heads):
        self.W_q, self.W_k, self.W_v, self.W_o = W_q, W_k, W_v, W_o
        self.n_heads = n_heads

    def split(self, t):
        n, d = t.shape
        return t.reshape(n, self.n_heads, d // self.n_heads).transpose(1, 0, 2)

    def merge(self, t):
        h, n, dh = t.shape
        return t.transpose(1, 0, 2).reshape(n, h * dh)

    def forward(self, u, causal=True):
        q, k, v = (self.split(u @ W) for W in (self.W_q, self.W_k, self.W_v))
        scores = q @ k.transpose(0, 2, 1) / math.sqrt(q.shape[-1])
        if causal:
            n = u.shape[0]
            mask = np.tril(np.ones((n, n)))
            scores = np.where(mask == 0, -np.inf, scores)
        return self.merge(softmax(scores) @ v) @ self.W_o


def attention(u, W_q, W_k, W_v, W_o, n_heads=1, causal=True):
    return CausalSelfAttention(W_q, W_k, W_v, W_o, n_heads).forward(u, causal)
'''

BLOCK_CLASS = '''"""The block as modules: an MLP and a Block that calls them."""
from attention import attention
from gelu import gelu
from layernorm import layernorm


class MLP:
    def __init__(self, W_1, W_2):
        self.fc, self.proj = W_1, W_2

    def __call__(self, u):
        return gelu(u @ self.fc) @ self.proj


def mlp(u, W_1, W_2):
    return MLP(W_1, W_2)(u)


class Block:
    def __init__(self, params, n_heads):
        self.p, self.n_heads = params, n_heads

    def ln(self, v, i):
        return layernorm(v, self.p.get(f"gamma_{i}"), self.p.get(f"beta_{i}"))

    def attn(self, u):
        p = self.p
        return attention(u, p["W_q"], p["W_k"], p["W_v"], p["W_o"], self.n_heads)

    def __call__(self, x, use_attention=True):
        h = x + self.attn(self.ln(x, 1)) if use_attention else x
        return h + mlp(self.ln(h, 2), self.p["W_1"], self.p["W_2"])


def block(x, params, n_heads=1, use_attention=True):
    return Block(params, n_heads)(x, use_attention)
'''

BLOCK_STEPS = '''"""The block one named step at a time, the residual stream kept in a variable."""
from attention import attention
from gelu import gelu
from layernorm import layernorm


def mlp(u, W_1, W_2):
    hidden = u @ W_1
    hidden = gelu(hidden)
    return hidden @ W_2


def block(x, params, n_heads=1, use_attention=True):
    g1, b1 = params.get("gamma_1"), params.get("beta_1")
    g2, b2 = params.get("gamma_2"), params.get("beta_2")
    residual = x
    if use_attention:
        normed = layernorm(residual, g1, b1)
        attn_out = attention(normed, params["W_q"], params["W_k"], params["W_v"], params["W_o"], n_heads)
        residual = residual + attn_out
    normed = layernorm(residual, g2, b2)
    return residual + mlp(normed, params["W_1"], params["W_2"])
'''

PARAMS_SHAPES = '''"""Parameter counts from the shapes of the weights."""
import math


def _shapes(d, n_heads, n_kv_heads, d_ff, style):
    d_head = d // n_heads
    if style == "gpt2":
        d_ff = 4 * d if d_ff is None else d_ff
        return {"attention": [(d, d), (d, d), (d, d), (d, d), (d,), (d,), (d,), (d,)],
                "mlp": [(d, d_ff), (d_ff,), (d_ff, d), (d,)],
                "norm": [(d,), (d,), (d,), (d,)]}
    kv = n_heads if n_kv_heads is None else n_kv_heads
    if d_ff is None:
        d_ff = round(8 * d / 3 / 256) * 256 if d >= 256 else 8 * d // 3
    return {"attention": [(d, d), (d, kv * d_head), (d, kv * d_head), (d, d)],
            "mlp": [(d, d_ff), (d, d_ff), (d_ff, d)],
            "norm": [(d,), (d,)]}


def count_params(d_model, n_heads, n_kv_heads=None, d_ff=None, style="gpt2"):
    if style not in ("gpt2", "llama"):
        raise ValueError(f"unknown style {style!r}")
    counts = {part: sum(math.prod(s) for s in shapes)
              for part, shapes in _shapes(d_model, n_heads, n_kv_heads, d_ff, style).items()}
    counts["total"] = sum(counts.values())
    return counts
'''

THE_BLOCK_SHAPES = {
    "ln_loops": ("layernorm", LN_LOOPS),
    "ln_class": ("layernorm", LN_CLASS),
    "ln_einsum": ("layernorm", LN_EINSUM),
    "ln_numpy": ("layernorm", LN_NUMPY),
    "gelu_paper": ("gelu", GELU_PAPER),
    "gelu_scalar": ("gelu", GELU_SCALAR),
    "att_einsum": ("attention", ATT_EINSUM),
    "att_loops": ("attention", ATT_LOOPS),
    "att_class": ("attention", ATT_CLASS),
    "block_class": ("block", BLOCK_CLASS),
    "block_steps": ("block", BLOCK_STEPS),
    "params_shapes": ("params", PARAMS_SHAPES),
}

LN_CLASS_HAT = "x_hat = (x - mu) / np.sqrt(sigma2 + self.eps)"
LN_CLASS_OUT = "return self.weight * x_hat + self.bias"
GELU_INNER = "inner = SQRT_2_OVER_PI * (x + C * np.power(x, 3))"
GELU_OUT = "return 0.5 * x * (1.0 + np.tanh(inner))"
EINSUM_SCALE = " / math.sqrt(d_head)"
CLASS_QKV = "(self.split(u @ W) for W in (self.W_q, self.W_k, self.W_v))"
CLASS_OUT = "return self.merge(softmax(scores) @ v) @ self.W_o"
BLOCK_CLASS_H = "h = x + self.attn(self.ln(x, 1)) if use_attention else x"
BLOCK_ATTN = 'return attention(u, p["W_q"], p["W_k"], p["W_v"], p["W_o"], self.n_heads)'
STEPS_G1 = 'g1, b1 = params.get("gamma_1"), params.get("beta_1")'
STEPS_G2 = 'g2, b2 = params.get("gamma_2"), params.get("beta_2")'
STEPS_OUT = 'return residual + mlp(normed, params["W_1"], params["W_2"])'
GPT2_ATT = "[(d, d), (d, d), (d, d), (d, d), (d,), (d,), (d,), (d,)]"
GPT2_MLP = "[(d, d_ff), (d_ff,), (d_ff, d), (d,)]"
LLAMA_WIDTH = "round(8 * d / 3 / 256) * 256 if d >= 256 else 8 * d // 3"

THE_BLOCK_UNCATALOGUED = {
    # LayerNorm
    "ln_mean_abs_deviation": Fault(
        "layernorm",
        "ln_loops",
        (
            ("spread += (float(value) - mean) ** 2", "spread += abs(float(value) - mean)"),
            ("return mean, spread / n", "return mean, (spread / n) ** 2"),
        ),
    ),
    "ln_eps_as_a_zero_guard": Fault(
        "layernorm",
        "ln_class",
        (  # the issue's: eps only keeps 0/0 away
            (LN_CLASS_HAT, "x_hat = (x - mu) / np.maximum(np.sqrt(sigma2), self.eps)"),
        ),
    ),
    "ln_gamma_and_beta_swapped": Fault(
        "layernorm", "ln_class", ((LN_CLASS_OUT, "return self.bias * x_hat + self.weight"),)
    ),
    "ln_beta_inside_gamma": Fault(
        "layernorm", "ln_class", ((LN_CLASS_OUT, "return self.weight * (x_hat + self.bias)"),)
    ),
    "ln_variance_not_centred": Fault(
        "layernorm",
        "ln_class",
        (
            (
                "sigma2 = ((x - mu) ** 2).mean(-1, keepdims=True)",
                "sigma2 = (x ** 2).mean(-1, keepdims=True)",
            ),
        ),
    ),
    "ln_each_matrix_of_a_batch": Fault(
        "layernorm", "ln_numpy", (("axis = -1", "axis = tuple(range(1, x.ndim))"),)
    ),
    # GELU
    "gelu_bracket_slip": Fault(
        "gelu",
        "gelu_paper",
        (  # the issue's: the cubic term outside sqrt(2 / pi) * (...)
            (GELU_INNER, "inner = SQRT_2_OVER_PI * x + C * np.power(x, 3)"),
        ),
    ),
    "gelu_sqrt_outside_tanh": Fault(
        "gelu",
        "gelu_paper",
        (
            (GELU_INNER, "inner = x + C * np.power(x, 3)"),
            (GELU_OUT, "return 0.5 * x * (1.0 + SQRT_2_OVER_PI * np.tanh(inner))"),
        ),
    ),
    "gelu_times_3_for_cubed": Fault("gelu", "gelu_paper", (("np.power(x, 3)", "(x * 3)"),)),
    "gelu_without_the_1": Fault(
        "gelu", "gelu_paper", ((GELU_OUT, "return 0.5 * x * np.tanh(inner)"),)
    ),
    "gelu_is_silu": Fault("gelu", "gelu_paper", ((GELU_OUT, "return x / (1.0 + np.exp(-x))"),)),
    "gelu_tanh_from_exp": Fault(
        "gelu",
        "gelu_paper",
        (  # overflows in the tails
            (
                GELU_OUT,
                "t = (np.exp(2 * inner) - 1) / (np.exp(2 * inner) + 1)\n    return 0.5 * x * (1.0 "
                "+ t)",
            ),
        ),
    ),
    "gelu_in_float16": Fault(
        "gelu",
        "gelu_paper",
        ((GELU_INNER, "x = np.asarray(x, dtype=np.float16)\n    " + GELU_INNER),),
    ),
    # softmax and attention
    "att_mask_hides_the_past": Fault(
        "attention",
        "att_einsum",
        (
            (
                "np.triu(np.ones((n, n), dtype=bool), k=1)",
                "np.tril(np.ones((n, n), dtype=bool), k=-1)",
            ),
        ),
    ),
    "att_scores_times_sqrt_d_head": Fault(
        "attention", "att_einsum", ((EINSUM_SCALE, " * math.sqrt(d_head)"),)
    ),
    "att_values_are_u": Fault(
        "attention",
        "att_einsum",
        (
            (
                'v = np.einsum("nd,de->ne", u, W_v).reshape(n, n_heads, d_head)',
                "v = u.reshape(n, n_heads, d_head)",
            ),
        ),
    ),
    "softmax_base_2": Fault("attention", "att_loops", (("np.exp(v - top)", "2.0 ** (v - top)"),)),
    "softmax_divided_by_the_largest": Fault(
        "attention", "att_loops", (("total = sum(exps)", "total = max(exps)"),)
    ),
    "softmax_over_every_entry": Fault(
        "attention",
        "att_class",
        (("return e / e.sum(axis=axis, keepdims=True)", "return e / e.sum()"),),
    ),
    # block and mlp
    "mlp_gelu_before_w_1": Fault(
        "block",
        "block_class",
        (  # the issue's: the same numbers on the toy's W_1, W_2
            ("return gelu(u @ self.fc) @ self.proj", "return gelu(u) @ self.fc @ self.proj"),
        ),
    ),
    "block_w_q_and_w_k_swapped": Fault(
        "block",
        "block_class",
        (  # the issue's: told an attention mistake
            (
                BLOCK_ATTN,
                'return attention(u, p["W_k"], p["W_q"], p["W_v"], p["W_o"], self.n_heads)',
            ),
        ),
    ),
    "block_attention_scaled_down": Fault(
        "block",
        "block_class",
        (  # GPT-2's 1/sqrt(2 n_layer), misread
            (BLOCK_CLASS_H, "h = x + self.attn(self.ln(x, 1)) / 2 ** 0.5 if use_attention else x"),
        ),
    ),
    "block_parallel_branches": Fault(
        "block",
        "block_steps",
        (  # GPT-J: both branches read x
            ("    normed = layernorm(residual, g2, b2)", "    normed = layernorm(x, g2, b2)"),
        ),
    ),
    "block_second_residual_from_x": Fault(
        "block",
        "block_steps",
        ((STEPS_OUT, 'return x + mlp(normed, params["W_1"], params["W_2"])'),),
    ),
    "block_second_norm_without_gamma": Fault(
        "block", "block_steps", ((STEPS_G2, "g2 = b2 = None"),)
    ),
    "block_attention_added_twice": Fault(
        "block",
        "block_steps",
        (("residual = residual + attn_out", "residual = residual + 2 * attn_out"),),
    ),
    "mlp_gelu_after_w_2_too": Fault(
        "block", "block_steps", (("return hidden @ W_2", "return gelu(hidden @ W_2)"),)
    ),
    "att_one_head_scaled_per_head": Fault(
        "attention",
        "att_class",
        (  # n_heads only in the scale
            (
                "return CausalSelfAttention(W_q, W_k, W_v, W_o, n_heads).forward(u, causal)",
                "scale = math.sqrt(u.shape[-1] / n_heads) / math.sqrt(u.shape[-1])\n"
                "    return CausalSelfAttention(W_q * scale, W_k, W_v, W_o, 1).forward(u, causal)",
            ),
        ),
    ),
    "softmax_global_max": Fault(
        "attention",
        "att_class",
        (("shifted = s - np.max(s, axis=axis, keepdims=True)", "shifted = s - np.max(s)"),),
    ),
    # parameter counts
    "params_llama_w_o_grouped_too": Fault(
        "params",
        "params_shapes",
        (
            (
                '"attention": [(d, d), (d, kv * d_head), (d, kv * d_head), (d, d)]',
                '"attention": [(d, d), (d, kv * d_head), (d, kv * d_head), (kv * d_head, d)]',
            ),
        ),
    ),
    "params_llama_with_biases": Fault(
        "params",
        "params_shapes",
        (
            (
                '"attention": [(d, d), (d, kv * d_head), (d, kv * d_head), (d, d)]',
                '"attention": [(d, d), (d, kv * d_head), (d, kv * d_head), (d, d), (d,), (kv * '
                "d_head,), (kv * d_head,), "
                "(d,)]",
            ),
        ),
    ),
    "params_gpt2_d_ff_3d": Fault(
        "params", "params_shapes", (("d_ff = 4 * d if d_ff", "d_ff = 3 * d if d_ff"),)
    ),
    "params_llama_two_matrices": Fault(
        "params",
        "params_shapes",
        (('"mlp": [(d, d_ff), (d, d_ff), (d_ff, d)]', '"mlp": [(d, d_ff), (d_ff, d)]'),),
    ),
    "params_llama_layernorm_norms": Fault(
        "params", "params_shapes", (('"norm": [(d,), (d,)]}', '"norm": [(d,), (d,), (d,), (d,)]}'),)
    ),
    "params_llama_multiple_of_128": Fault(
        "params",
        "params_shapes",
        ((LLAMA_WIDTH, "round(8 * d / 3 / 128) * 128 if d >= 256 else 8 * d // 3"),),
    ),
    "params_llama_no_minimum": Fault(
        "params", "params_shapes", ((LLAMA_WIDTH, "round(8 * d / 3 / 256) * 256"),)
    ),
}

THE_BLOCK_CATALOGUED = {
    "ln_loops_ddof1": Fault(
        "layernorm",
        "ln_loops",
        (("return mean, spread / n", "return mean, spread / (n - 1)"),),
        "layernorm.ddof1",
    ),
    "ln_class_eps_outside": Fault(
        "layernorm",
        "ln_class",
        ((LN_CLASS_HAT, "x_hat = (x - mu) / (np.sqrt(sigma2) + self.eps)"),),
        "layernorm.eps_outside",
    ),
    "ln_class_rms": Fault(
        "layernorm", "ln_class", (("mu = x.mean(-1, keepdims=True)", "mu = 0.0"),), "layernorm.rms"
    ),
    "ln_class_eps_1e_12": Fault(
        "layernorm",
        "ln_class",
        (("gamma=None, beta=None, eps=1e-5", "gamma=None, beta=None, eps=1e-12"),),
        "layernorm.eps",
    ),
    "ln_einsum_no_affine": Fault(
        "layernorm",
        "ln_einsum",
        (
            (
                "    if gamma is not None:\n        y = y * gamma\n    if beta is not None:\n      "
                "  y = y + beta\n",
                "",
            ),
        ),
        "layernorm.no_affine",
    ),
    "ln_einsum_no_mean": Fault(
        "layernorm", "ln_einsum", (("y = centred * inv", "y = x * inv"),), "layernorm.no_mean"
    ),
    # the axis picked from the shape: the first axis of width d, wrong only on a square input
    "ln_axis_from_the_shape": Fault(
        "layernorm", "ln_numpy", (("axis = -1", "axis = x.shape.index(d)"),), "layernorm.axis"
    ),
    "gelu_erfc": Fault(
        "gelu",
        "gelu_paper",
        ((GELU_OUT, "return 0.5 * x * np.vectorize(math.erfc)(-x / math.sqrt(2))"),),
        "gelu.erf",
    ),
    "gelu_sigmoid_as_tanh": Fault(
        "gelu",
        "gelu_paper",
        ((GELU_OUT, "return 0.5 * x * (1.0 + np.tanh(0.851 * x))"),),
        "gelu.sigmoid",
    ),
    "gelu_relu_where": Fault(
        "gelu", "gelu_paper", ((GELU_OUT, "return np.where(x > 0, x, 0.0)"),), "gelu.relu"
    ),
    "gelu_no_half": Fault(
        "gelu", "gelu_scalar", (("return 0.5 * v * (1", "return v * (1"),), "gelu.no_half"
    ),
    "gelu_no_x": Fault(
        "gelu", "gelu_paper", ((GELU_OUT, "return 0.5 * (1.0 + np.tanh(inner))"),), "gelu.no_x"
    ),
    "gelu_square": Fault("gelu", "gelu_scalar", (("v ** 3", "v * v"),), "gelu.square"),
    "gelu_sqrt_pi_over_2": Fault(
        "gelu",
        "gelu_paper",
        (("math.sqrt(2.0 / math.pi)", "math.sqrt(math.pi / 2.0)"),),
        "gelu.constant",
    ),
    "att_einsum_no_mask": Fault(
        "attention",
        "att_einsum",
        (("scores = np.where(future, -np.inf, scores)", "pass"),),
        "attention.no_mask",
    ),
    "att_einsum_scores_transposed": Fault(
        "attention",
        "att_einsum",
        (('np.einsum("ihd,jhd->hij", q, k)', 'np.einsum("ihd,jhd->hji", q, k)'),),
        "attention.scores_transposed",
    ),
    "att_einsum_interleaved": Fault(
        "attention",
        "att_einsum",
        tuple(
            (
                f"u, W_{w}).reshape(n, n_heads, d_head)",
                f"u, W_{w}).reshape(n, d_head, n_heads).transpose(0, 2, 1)",
            )
            for w in "qkv"
        ),
        "attention.head_interleaved",
    ),
    "att_einsum_softmax_axis": Fault(
        "attention",
        "att_einsum",
        (("softmax(scores, axis=-1)", "softmax(scores, axis=1)"),),
        "softmax.axis",
    ),
    "att_loops_mask_diagonal": Fault(
        "attention",
        "att_loops",
        (("if causal and j > i:", "if causal and j >= i:"),),
        "attention.mask_diagonal",
    ),
    "att_loops_mask_leak": Fault(
        "attention",
        "att_loops",
        (("if causal and j > i:", "if causal and j > i + 1:"),),
        "attention.mask_leak",
    ),
    "att_loops_no_max": Fault(
        "attention", "att_loops", (("top = max(row)", "top = 0.0"),), "softmax.no_max"
    ),
    "att_loops_heads_reversed": Fault(
        "attention",
        "att_loops",
        (
            (
                "out[i, cols] = ",
                "out[i, slice((n_heads - 1 - h) * d_head, (n_heads - h) * d_head)] = ",
            ),
        ),
        "attention.heads_reversed",
    ),
    "att_class_torch_layout": Fault(
        "attention",
        "att_class",
        (
            (CLASS_QKV, "(self.split(u @ W.T) for W in (self.W_q, self.W_k, self.W_v))"),
            (CLASS_OUT, "return self.merge(softmax(scores) @ v) @ self.W_o.T"),
        ),
        "attention.transposed",
    ),
    "att_class_no_w_o": Fault(
        "attention",
        "att_class",
        ((CLASS_OUT, "return self.merge(softmax(scores) @ v)"),),
        "attention.no_w_o",
    ),
    "att_class_scale_w_k_width": Fault(
        "attention",
        "att_class",
        (  # W_k is d × d here: sqrt(d_model)
            ("math.sqrt(q.shape[-1])", "math.sqrt(self.W_k.shape[1])"),
        ),
        "attention.scale_d_model",
    ),
    "att_class_no_scale": Fault(
        "attention", "att_class", ((" / math.sqrt(q.shape[-1])", ""),), "attention.no_scale"
    ),
    "att_class_masked_to_zero": Fault(
        "attention",
        "att_class",
        (("scores = np.where(mask == 0, -np.inf, scores)", "scores = scores * mask"),),
        "attention.mask_zero",
    ),
    "att_class_q_and_k_swapped": Fault(
        "attention",
        "att_class",
        (  # q from W_k, k from W_q: k @ q.T
            (CLASS_QKV, "(self.split(u @ W) for W in (self.W_k, self.W_q, self.W_v))"),
        ),
        "attention.scores_transposed",
    ),
    "block_class_post_ln": Fault(
        "block",
        "block_class",
        (
            (BLOCK_CLASS_H, "h = self.ln(x + self.attn(x), 1) if use_attention else x"),
            (
                'return h + mlp(self.ln(h, 2), self.p["W_1"], self.p["W_2"])',
                'return self.ln(h + mlp(h, self.p["W_1"], self.p["W_2"]), 2)',
            ),
        ),
        "block.post_ln",
    ),
    "block_class_ignores_the_flag": Fault(
        "block",
        "block_class",
        ((BLOCK_CLASS_H, "h = x + self.attn(self.ln(x, 1))"),),
        "block.ignores_use_attention",
    ),
    "block_class_no_gelu": Fault(
        "block",
        "block_class",
        (("return gelu(u @ self.fc) @ self.proj", "return u @ self.fc @ self.proj"),),
        "mlp.no_gelu",
    ),
    "block_steps_no_residual_mlp": Fault(
        "block",
        "block_steps",
        ((STEPS_OUT, 'return mlp(normed, params["W_1"], params["W_2"])'),),
        "block.no_residual_mlp",
    ),
    "block_steps_no_gamma_beta": Fault(
        "block",
        "block_steps",
        ((STEPS_G1, "g1 = b1 = None"), (STEPS_G2, "g2 = b2 = None")),
        "block.no_gamma_beta",
    ),
    "block_steps_second_norm_params": Fault(
        "block", "block_steps", ((STEPS_G2, "g2, b2 = g1, b1"),), "block.second_norm_params"
    ),
    "block_steps_heads_from_params": Fault(
        "block",
        "block_steps",
        (('params["W_o"], n_heads)', 'params["W_o"], params.get("n_heads", 1))'),),
        "block.no_n_heads",
    ),
    "params_shapes_no_bias": Fault(
        "params",
        "params_shapes",
        ((GPT2_ATT, "[(d, d), (d, d), (d, d), (d, d)]"), (GPT2_MLP, "[(d, d_ff), (d_ff, d)]")),
        "params.no_bias",
    ),
    "params_shapes_gpt2_llama_width": Fault(
        "params",
        "params_shapes",
        (
            (
                "d_ff = 4 * d if d_ff is None else d_ff",
                "d_ff = (round(8 * d / 3 / 256) * 256 if d >= 256 else 8 * d // 3) "
                "if d_ff is None else d_ff",
            ),
        ),
        "params.gpt2_d_ff",
    ),
    "params_shapes_no_kv_heads": Fault(
        "params",
        "params_shapes",
        (("kv = n_heads if n_kv_heads is None else n_kv_heads", "kv = n_heads"),),
        "params.n_kv_heads",
    ),
    "params_shapes_ceil": Fault(
        "params",
        "params_shapes",
        ((LLAMA_WIDTH, "math.ceil(8 * d / 3 / 256) * 256 if d >= 256 else 8 * d // 3"),),
        "params.meta_rounding",
    ),
    "params_shapes_no_b_norm": Fault(
        "params",
        "params_shapes",
        (('"norm": [(d,), (d,), (d,), (d,)]}', '"norm": [(d,), (d,)]}'),),
        "params.no_beta",
    ),
}


# ============================================================================================
# the-modern-block: shapes

RMS_NUMPY = '''"""RMSNorm with numpy's square and mean."""
import numpy as np


def rmsnorm(x, gain=None, eps=1e-6):
    ms = np.mean(np.square(x), axis=-1, keepdims=True)
    y = x / np.sqrt(ms + eps)
    return y if gain is None else y * gain
'''

RMS_CLASS = '''"""RMSNorm as Meta's Llama code writes it."""
import numpy as np


class RMSNorm:
    def __init__(self, dim, eps=1e-6, weight=None):
        self.eps = eps
        self.weight = np.ones(dim) if weight is None else weight

    def _norm(self, x):
        return x * (1.0 / np.sqrt((x * x).mean(-1, keepdims=True) + self.eps))

    def __call__(self, x):
        return self._norm(x) * self.weight


def rmsnorm(x, gain=None, eps=1e-6):
    return RMSNorm(x.shape[-1], eps, gain)(x)
'''

SW_PLAIN = '''"""SiLU, the width and SwiGLU, step by step."""
import numpy as np


def silu(x):
    with np.errstate(over="ignore"):
        return x * (1.0 / (1.0 + np.exp(-x)))


def swiglu_width(d):
    if d < 256:
        return 8 * d // 3
    return 256 * round(8 * d / 3 / 256)


def swiglu(u, W_1, W_3, W_2):
    gate = silu(u @ W_1)
    value = u @ W_3
    return (gate * value) @ W_2
'''

SW_CLASS = '''"""SwiGLU as Meta's FeedForward module."""
import numpy as np


def silu(x):
    with np.errstate(over="ignore"):
        return x / (1 + np.exp(-x))


def swiglu_width(d):
    hidden = 8 * d / 3
    if d >= 256:
        return int(256 * round(hidden / 256))
    return int(hidden)


class FeedForward:
    def __init__(self, w1, w3, w2):
        self.w1, self.w3, self.w2 = w1, w3, w2

    def __call__(self, x):
        return (silu(x @ self.w1) * (x @ self.w3)) @ self.w2


def swiglu(u, W_1, W_3, W_2):
    return FeedForward(W_1, W_3, W_2)(u)
'''

GQA_LOOPS = '''"""Grouped-query attention, one query head at a time."""
import math

import numpy as np


def _softmax(s):
    s = s - s.max(axis=-1, keepdims=True)
    e = np.exp(s)
    return e / e.sum(axis=-1, keepdims=True)


def gqa_attention(u, W_q, W_k, W_v, W_o, n_heads, n_kv_heads, causal=True):
    if n_heads % n_kv_heads != 0:
        raise ValueError("n_kv_heads must divide n_heads")
    n, d = u.shape
    d_head = d // n_heads
    group = n_heads // n_kv_heads
    q, k, v = u @ W_q, u @ W_k, u @ W_v
    outs = []
    for h in range(n_heads):
        kv = h // group
        qh = q[:, h * d_head:(h + 1) * d_head]
        kh = k[:, kv * d_head:(kv + 1) * d_head]
        vh = v[:, kv * d_head:(kv + 1) * d_head]
        scores = qh @ kh.T / math.sqrt(d_head)
        if causal:
            scores[np.triu_indices(n, 1)] = -np.inf
        outs.append(_softmax(scores) @ vh)
    return np.concatenate(outs, axis=1) @ W_o
'''

GQA_EINSUM = '''"""Grouped-query attention with the query heads grouped on an axis of their own."""
import math

import numpy as np


def softmax(s):
    e = np.exp(s - np.max(s, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)


def gqa_attention(u, W_q, W_k, W_v, W_o, n_heads, n_kv_heads, causal=True):
    if n_heads % n_kv_heads:
        raise ValueError(f"{n_kv_heads} K/V heads cannot be shared by {n_heads} query heads")
    n, d = u.shape
    d_head = d // n_heads
    group = n_heads // n_kv_heads
    q = (u @ W_q).reshape(n, n_kv_heads, group, d_head)
    k = (u @ W_k).reshape(n, n_kv_heads, d_head)
    v = (u @ W_v).reshape(n, n_kv_heads, d_head)
    scores = np.einsum("ikgd,jkd->kgij", q, k) / math.sqrt(d_head)
    if causal:
        scores = scores + np.triu(np.full((n, n), -np.inf), 1)
    out = np.einsum("kgij,jkd->ikgd", softmax(scores), v)
    return out.reshape(n, d) @ W_o
'''

MB_STEPS = '''"""The modern block step by step."""
from gqa import gqa_attention
from rmsnorm import rmsnorm
from swiglu import swiglu


def modern_block(x, params, n_heads, n_kv_heads, use_attention=True):
    g1, g2 = params.get("gain_1"), params.get("gain_2")
    h = x
    if use_attention:
        a = gqa_attention(rmsnorm(x, g1), params["W_q"], params["W_k"], params["W_v"], params["W_o"], n_heads,
                          n_kv_heads)
        h = x + a
    m = swiglu(rmsnorm(h, g2), params["W_1"], params["W_3"], params["W_2"])
    return h + m
'''

MB_CLASS = '''"""The modern block as Llama's TransformerBlock."""
from gqa import gqa_attention
from rmsnorm import rmsnorm
from swiglu import swiglu


class TransformerBlock:
    def __init__(self, params, n_heads, n_kv_heads):
        self.p = params
        self.n_heads, self.n_kv_heads = n_heads, n_kv_heads

    def attention(self, u):
        p = self.p
        return gqa_attention(u, p["W_q"], p["W_k"], p["W_v"], p["W_o"], self.n_heads, self.n_kv_heads)

    def feed_forward(self, u):
        return swiglu(u, self.p["W_1"], self.p["W_3"], self.p["W_2"])

    def forward(self, x, use_attention=True):
        h = x + self.attention(rmsnorm(x, self.p.get("gain_1"))) if use_attention else x
        return h + self.feed_forward(rmsnorm(h, self.p.get("gain_2")))


def modern_block(x, params, n_heads, n_kv_heads, use_attention=True):
    return TransformerBlock(params, n_heads, n_kv_heads).forward(x, use_attention)
'''

MP_PARTS = '''"""The model's parameters, part by part."""
from swiglu import swiglu_width


def count_model(d_model, n_heads, n_kv_heads, n_layers, vocab_size, d_ff=None, tied=False):
    d = d_model
    head = d // n_heads
    hidden = swiglu_width(d) if d_ff is None else d_ff
    parts = {
        "attention": d * d + d * n_kv_heads * head + d * n_kv_heads * head + d * d,
        "mlp": d * hidden * 3,
        "norm": d * 2,
    }
    parts["block"] = parts["attention"] + parts["mlp"] + parts["norm"]
    parts["blocks"] = parts["block"] * n_layers
    parts["embedding"] = vocab_size * d
    parts["output"] = 0 if tied else vocab_size * d
    parts["final_norm"] = d
    parts["total"] = parts["blocks"] + parts["embedding"] + parts["output"] + parts["final_norm"]
    return {key: int(value) for key, value in parts.items()}
'''

MODERN_SHAPES = {
    "rms_numpy": ("rmsnorm", RMS_NUMPY),
    "rms_class": ("rmsnorm", RMS_CLASS),
    "sw_plain": ("swiglu", SW_PLAIN),
    "sw_class": ("swiglu", SW_CLASS),
    "gqa_loops": ("gqa", GQA_LOOPS),
    "gqa_einsum": ("gqa", GQA_EINSUM),
    "mb_steps": ("modern_block", MB_STEPS),
    "mb_class": ("modern_block", MB_CLASS),
    "mp_parts": ("model_params", MP_PARTS),
}

RMS_Y = "y = x / np.sqrt(ms + eps)"
RMS_MS = "ms = np.mean(np.square(x), axis=-1, keepdims=True)"
MB_FORWARD = """        h = x + self.attention(rmsnorm(x, self.p.get("gain_1"))) if use_attention else x
        return h + self.feed_forward(rmsnorm(h, self.p.get("gain_2")))"""
MP_HIDDEN = "hidden = swiglu_width(d) if d_ff is None else d_ff"

MODERN_UNCATALOGUED = {
    "rms_eps_outside": Fault("rmsnorm", "rms_numpy", ((RMS_Y, "y = x / (np.sqrt(ms) + eps)"),)),
    "rms_sum_not_mean": Fault(
        "rmsnorm", "rms_numpy", ((RMS_MS, RMS_MS.replace("np.mean", "np.sum")),)
    ),
    "rms_gain_as_a_shift": Fault("rmsnorm", "rms_numpy", (("y * gain", "y + gain"),)),
    "rms_layernorm_eps": Fault(
        "rmsnorm",
        "rms_class",
        (("def rmsnorm(x, gain=None, eps=1e-6)", "def rmsnorm(x, gain=None, eps=1e-5)"),),
    ),
    "rms_mean_absolute_value": Fault(
        "rmsnorm",
        "rms_class",
        (
            (
                "np.sqrt((x * x).mean(-1, keepdims=True) + self.eps)",
                "(np.abs(x).mean(-1, keepdims=True) + self.eps)",
            ),
        ),
    ),
    "silu_precedence": Fault(
        "swiglu", "sw_class", (("return x / (1 + np.exp(-x))", "return x / 1 + np.exp(-x)"),)
    ),
    "silu_gelu_constant": Fault("swiglu", "sw_plain", (("np.exp(-x)", "np.exp(-1.702 * x)"),)),
    "swiglu_no_value_branch": Fault(
        "swiglu", "sw_plain", (("return (gate * value) @ W_2", "return gate @ W_2"),)
    ),
    "swiglu_reglu": Fault(
        "swiglu", "sw_plain", (("gate = silu(u @ W_1)", "gate = np.maximum(u @ W_1, 0)"),)
    ),
    "swiglu_geglu": Fault(
        "swiglu",
        "sw_class",
        (
            (
                "silu(x @ self.w1)",
                "0.5 * (x @ self.w1) * (1 + np.tanh(0.7978845608 * ((x @ self.w1) + 0.044715 * "
                "(x @ self.w1) ** 3)))",
            ),
        ),
    ),
    "swiglu_width_truncated": Fault(
        "swiglu", "sw_class", (("round(hidden / 256)", "int(hidden / 256)"),)
    ),
    "swiglu_width_rounded_below_256": Fault(
        "swiglu", "sw_class", (("return int(hidden)", "return round(hidden)"),)
    ),
    "gqa_scale_by_w_k_width": Fault(
        "gqa",
        "gqa_loops",
        (  # the issue's: sqrt(d) where the widths coincide
            ("/ math.sqrt(d_head)", "/ math.sqrt(W_k.shape[1])"),
        ),
    ),
    "gqa_mask_hides_the_diagonal": Fault(
        "gqa", "gqa_loops", (("np.triu_indices(n, 1)", "np.triu_indices(n)"),)
    ),
    "gqa_heads_merged_in_reverse": Fault(
        "gqa",
        "gqa_loops",
        (("np.concatenate(outs, axis=1)", "np.concatenate(outs[::-1], axis=1)"),),
    ),
    "gqa_mask_forgotten": Fault(
        "gqa",
        "gqa_einsum",
        (("    if causal:\n        scores = scores + np.triu(np.full((n, n), -np.inf), 1)\n", ""),),
    ),
    "gqa_values_from_w_k": Fault("gqa", "gqa_einsum", (("v = (u @ W_v)", "v = (u @ W_k)"),)),
    "gqa_softmax_over_the_queries": Fault(
        "gqa", "gqa_einsum", (("axis=-1, keepdims=True)", "axis=-2, keepdims=True)"),)
    ),
    "mb_branches_swapped": Fault(
        "modern_block",
        "mb_class",
        (
            (
                MB_FORWARD,
                """        g1, g2 = self.p.get("gain_1"), self.p.get("gain_2")
        h = x + self.feed_forward(rmsnorm(x, g2))
        return h + self.attention(rmsnorm(h, g1)) if use_attention else h""",
            ),
        ),
    ),
    "mb_parallel_branches": Fault(
        "modern_block", "mb_steps", (("swiglu(rmsnorm(h, g2)", "swiglu(rmsnorm(x, g2)"),)
    ),
    "mb_second_residual_from_x": Fault(
        "modern_block", "mb_steps", (("    return h + m", "    return x + m"),)
    ),
    "mb_gain_1_twice": Fault(
        "modern_block",
        "mb_class",
        (('rmsnorm(h, self.p.get("gain_2"))', 'rmsnorm(h, self.p.get("gain_1"))'),),
        accept=("modern_block.gains",),
    ),
    "mb_head_counts_swapped": Fault(
        "modern_block",
        "mb_class",
        (("self.n_heads, self.n_kv_heads)", "self.n_kv_heads, self.n_heads)"),),
    ),
    "rms_gain_before_the_norm": Fault(
        "rmsnorm",
        "rms_numpy",
        ((RMS_MS, "x = x if gain is None else x * gain\n    " + RMS_MS), ("y * gain", "y")),
    ),
    "mb_first_norm_without_gain": Fault(
        "modern_block", "mb_steps", (("rmsnorm(x, g1)", "rmsnorm(x)"),)
    ),
    "gqa_group_index_confused": Fault(
        "gqa", "gqa_loops", (("kv = h // group", "kv = h // n_kv_heads"),)
    ),
    "model_block_without_norms": Fault(
        "model_params",
        "mp_parts",
        (
            (
                'parts["block"] = parts["attention"] + parts["mlp"] + parts["norm"]',
                'parts["block"] = parts["attention"] + parts["mlp"]',
            ),
        ),
    ),
    "model_tied_inverted": Fault(
        "model_params",
        "mp_parts",
        (("0 if tied else vocab_size * d", "vocab_size * d if tied else 0"),),
    ),
    "model_no_final_norm": Fault(
        "model_params", "mp_parts", (('parts["final_norm"] = d', 'parts["final_norm"] = 0'),)
    ),
    "model_layernorm_norms": Fault(
        "model_params", "mp_parts", (('"norm": d * 2', '"norm": d * 4'),)
    ),
    "model_gpt2_width": Fault(
        "model_params", "mp_parts", ((MP_HIDDEN, "hidden = 4 * d if d_ff is None else d_ff"),)
    ),
    "model_width_no_minimum": Fault(
        "model_params",
        "mp_parts",
        (  # the count's own width, no rule below 256
            (MP_HIDDEN, "hidden = round(8 * d / 3 / 256) * 256 if d_ff is None else d_ff"),
        ),
    ),
}

MODERN_CATALOGUED = {
    "rms_mean_subtracted_var": Fault(
        "rmsnorm",
        "rms_numpy",
        (
            (RMS_MS, "ms = np.var(x, axis=-1, keepdims=True)"),
            (RMS_Y, "y = (x - x.mean(axis=-1, keepdims=True)) / np.sqrt(ms + eps)"),
        ),
        "rmsnorm.mean_subtracted",
    ),
    "rms_class_no_eps": Fault(
        "rmsnorm",
        "rms_class",
        ((".mean(-1, keepdims=True) + self.eps)", ".mean(-1, keepdims=True))"),),
        "rmsnorm.no_eps",
    ),
    "rms_class_axis_0": Fault(
        "rmsnorm",
        "rms_class",
        ((".mean(-1, keepdims=True)", ".mean(0, keepdims=True)"),),
        "rmsnorm.axis",
    ),
    "silu_sigmoid_only": Fault(
        "swiglu",
        "sw_plain",
        (("return x * (1.0 / (1.0 + np.exp(-x)))", "return 1.0 / (1.0 + np.exp(-x))"),),
        "silu.sigmoid",
    ),
    "swiglu_class_swapped": Fault(
        "swiglu",
        "sw_class",
        (("FeedForward(W_1, W_3, W_2)", "FeedForward(W_3, W_1, W_2)"),),
        "swiglu.swapped",
    ),
    "swiglu_gate_outside": Fault(
        "swiglu",
        "sw_plain",
        (
            (
                "    gate = silu(u @ W_1)\n    value = u @ W_3\n    return (gate * value) @ W_2",
                "    return silu((u @ W_1) * (u @ W_3)) @ W_2",
            ),
        ),
        "swiglu.gate_outside",
    ),
    "swiglu_width_ceil_trick": Fault(
        "swiglu",
        "sw_plain",
        (("return 256 * round(8 * d / 3 / 256)", "return 256 * -(-int(8 * d / 3) // 256)"),),
        "swiglu.meta_rounding",
    ),
    "gqa_loops_tile": Fault(
        "gqa", "gqa_loops", (("kv = h // group", "kv = h % n_kv_heads"),), "gqa.tile"
    ),
    "gqa_loops_first_kv_head": Fault(
        "gqa", "gqa_loops", (("kv = h // group", "kv = 0"),), "gqa.no_repeat"
    ),
    "gqa_einsum_scale_d": Fault(
        "gqa",
        "gqa_einsum",
        (("/ math.sqrt(d_head)", "/ np.sqrt(u.shape[-1])"),),
        "gqa.scale_d_model",
    ),
    "mb_steps_no_first_residual": Fault(
        "modern_block", "mb_steps", (("h = x + a", "h = a"),), "modern_block.no_residual"
    ),
    "mb_class_ignores_the_flag": Fault(
        "modern_block",
        "mb_class",
        (
            (
                'h = x + self.attention(rmsnorm(x, self.p.get("gain_1"))) if use_attention else x',
                'h = x + self.attention(rmsnorm(x, self.p.get("gain_1")))',
            ),
        ),
        "modern_block.ignores_use_attention",
    ),
    "mb_steps_gains_swapped": Fault(
        "modern_block",
        "mb_steps",
        (
            (
                'g1, g2 = params.get("gain_1"), params.get("gain_2")',
                'g2, g1 = params.get("gain_1"), params.get("gain_2")',
            ),
        ),
        "modern_block.gains",
    ),
    "model_tied_counted_twice": Fault(
        "model_params",
        "mp_parts",
        (("0 if tied else vocab_size * d", "vocab_size * d"),),
        "model.tied_twice",
    ),
    "model_kv_as_d": Fault(
        "model_params",
        "mp_parts",
        (("d * n_kv_heads * head + d * n_kv_heads * head", "d * d + d * d"),),
        "model.n_kv_heads",
    ),
    "model_meta_width_inline": Fault(
        "model_params",
        "mp_parts",
        (  # the count's own lines round up
            (MP_HIDDEN, "hidden = 256 * -(-int(8 * d / 3) // 256) if d_ff is None else d_ff"),
        ),
        "model.meta_rounding",
    ),
}

# Two faults in two modules: either's catalogued mistake may be named, nothing else.
THE_BLOCK_PAIRS = {
    "pair_eps_outside_gelu_bracket": ("ln_class_eps_outside", "gelu_bracket_slip"),
    "pair_no_w_o_block_w_q_w_k": ("att_class_no_w_o", "block_w_q_and_w_k_swapped"),
    "pair_ln_zero_guard_no_gelu": ("ln_eps_as_a_zero_guard", "block_class_no_gelu"),
    "pair_gelu_before_w_1_gelu_silu": ("mlp_gelu_before_w_1", "gelu_is_silu"),
    "pair_scores_transposed_gelu_erfc": ("att_einsum_scores_transposed", "gelu_erfc"),
}
MODERN_PAIRS = {
    "pair_w_k_width_gains": ("gqa_scale_by_w_k_width", "mb_steps_gains_swapped"),
    "pair_tile_rms_eps_outside": ("gqa_loops_tile", "rms_eps_outside"),
    "pair_reglu_parallel": ("swiglu_reglu", "mb_parallel_branches"),
    "pair_silu_sigmoid_model_final_norm": ("silu_sigmoid_only", "model_no_final_norm"),
}

ASSIGNMENTS = {
    "the-block": (THE_BLOCK_SHAPES, THE_BLOCK_UNCATALOGUED, THE_BLOCK_CATALOGUED),
    "the-modern-block": (MODERN_SHAPES, MODERN_UNCATALOGUED, MODERN_CATALOGUED),
}


def source(assignment: str, fault: Fault) -> str:
    """The faulty module's text: its shape with the edits made (each must be there)."""
    shapes = ASSIGNMENTS[assignment][0]
    text = shapes[fault.shape][1]
    for old, new in fault.edits:
        assert old in text, f"{fault.shape}: {old!r} is not there"
        text = text.replace(old, new)
    return text


def write(folder: Path, assignment: str, module: str, text: str) -> Path:
    """A copy of the reference's modules in ``folder`` with ``module`` replaced by ``text``."""
    from grader.course.manifest import load

    folder.mkdir(parents=True)
    for name in load(PROJECT / "course.json", assignment).modules:
        shutil.copyfile(PROJECT / "solutions" / assignment / f"{name}.py", folder / f"{name}.py")
    (folder / f"{module}.py").write_text(text)
    return folder


PAIRS = {"the-block": THE_BLOCK_PAIRS, "the-modern-block": MODERN_PAIRS}


def allowed(fault: Fault | tuple[Fault, ...]) -> set[str]:
    """The catalogued families a submission's diagnoses may name: its faults' own, and those they
    accept."""
    faults = fault if isinstance(fault, tuple) else (fault,)
    return {name for f in faults for name in (f.mistake, *f.accept) if name}


def write_class(root: Path, assignment: str) -> dict[str, Fault | tuple[Fault, ...]]:
    """Every shape (as a correct control), every fault, the pairs and the reference as students in
    ``root``; returns the faults by student name (the controls as faults with no edits, a pair as
    its two faults)."""
    shapes, uncatalogued, catalogued = ASSIGNMENTS[assignment]
    students: dict = {f"shape_{name}": Fault(module, name) for name, (module, _) in shapes.items()}
    students.update(uncatalogued)
    students.update(catalogued)
    for name, fault in list(students.items()):
        write(root / name, assignment, fault.module, source(assignment, fault))
    for name, (first, second) in PAIRS[assignment].items():
        faults = tuple({**uncatalogued, **catalogued}[f] for f in (first, second))
        assert faults[0].module != faults[1].module, name
        folder = write(root / name, assignment, faults[0].module, source(assignment, faults[0]))
        (folder / f"{faults[1].module}.py").write_text(source(assignment, faults[1]))
        students[name] = faults
    folder = root / "reference"
    folder.mkdir(parents=True)
    for path in (PROJECT / "solutions" / assignment).glob("*.py"):
        if path.name != "mistakes.py":
            shutil.copyfile(path, folder / path.name)
    return students
