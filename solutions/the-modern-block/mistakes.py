"""The catalogue of known mistakes on the modern block (instructors only: it ships with the
solutions, never to students).

Each mistake is a variant of the reference, written the way students write it
(reference/mistakes.md, "Extras": RMSNorm mean-centred or without eps, SwiGLU with the gate on the
wrong branch or outside the product, GQA with np.tile for repeat); the grader runs them in its own
process after a failed check and names the mistake when the student's output matches exactly one
(grader.mistakes). The block and count_model tests stand in correct components (wiring), so a
component's mistake needs no variant of the functions around it. `grade release` stores their
outputs on the public tests' inputs in the release's tests/public/mistakes.json.
"""

import math
from functools import partial

import numpy as np
from gqa import gqa_attention, softmax
from rmsnorm import rmsnorm
from swiglu import silu, swiglu, swiglu_width

from grader.feedback.mistakes import mistake

# ------------------------------------------------------------------------------------------ RMSNorm


def rms_variant(
    x, gain=None, eps=1e-6, *, center=False, use_eps=True, axis=-1
):  # (..., d) -> (..., d)
    """RMSNorm with one thing changed: the mean subtracted first (LayerNorm without its shift), eps
    left out, or the mean square taken over another axis (across the tokens, or the whole array)."""
    gain = np.ones(x.shape[-1]) if gain is None else gain
    if center:
        x = x - x.mean(axis=-1, keepdims=True)
    ms = (x * x).mean(axis=axis, keepdims=True)
    return x / np.sqrt(ms + eps if use_eps else ms) * gain


# ------------------------------------------------------------------------------------- SiLU, SwiGLU


def sigmoid(x):  # (...) -> (...)
    """The sigmoid alone, 1 / (1 + exp(-x)): SiLU without the x in front."""
    with np.errstate(over="ignore"):
        return 1 / (1 + np.exp(-x))


def swiglu_variant(
    u, W_1, W_3, W_2, *, swapped=False, gate_outside=False, act=silu
):  # (n, d) -> (n, d)
    """SwiGLU with the gate on the W_3 branch (W_1 and W_3 swapped), SiLU of the whole product, or
    another activation (a wrong silu, which swiglu calls)."""
    a, b = (u @ W_3, u @ W_1) if swapped else (u @ W_1, u @ W_3)
    return (act(a * b) if gate_outside else act(a) * b) @ W_2


def width_meta(d):  # int -> int
    """Meta's rounding (llama/model.py): int(8d/3) rounded UP to a multiple of 256, also below
    256."""
    return 256 * ((int(8 * d / 3) + 255) // 256)


# ---------------------------------------------------------------------------------------------- GQA


def gqa_variant(
    u, W_q, W_k, W_v, W_o, n_heads, n_kv_heads, causal=True, *, kv="repeat", scale="head"
):
    """GQA with one thing changed. kv: "repeat" (right), "tile" (np.tile: query head h reads K/V
    head h % n_kv_heads), "first" (K/V not repeated: every query head reads K/V head 0). scale:
    "head" sqrt(d_head), "model" sqrt(d)."""  # (n, d) -> (n, d)
    n, d = u.shape
    d_head = d // n_heads
    q = (u @ W_q).reshape(n, n_heads, d_head).transpose(1, 0, 2)
    k = (u @ W_k).reshape(n, n_kv_heads, d_head).transpose(1, 0, 2)
    v = (u @ W_v).reshape(n, n_kv_heads, d_head).transpose(1, 0, 2)
    group = n_heads // n_kv_heads
    pick = {
        "repeat": lambda t: t.repeat(group, axis=0),
        "tile": lambda t: np.tile(t, (group, 1, 1)),
        "first": lambda t: np.repeat(t[:1], n_heads, axis=0),
    }[kv]
    k, v = pick(k), pick(v)
    scores = q @ k.transpose(0, 2, 1) / math.sqrt(d_head if scale == "head" else d)
    if causal:
        scores = np.where(np.tri(n, dtype=bool), scores, -np.inf)
    return (softmax(scores) @ v).transpose(1, 0, 2).reshape(n, d) @ W_o


# ---------------------------------------------------------------------------------------- the block


def block_variant(
    x,
    params,
    n_heads,
    n_kv_heads,
    use_attention=True,
    *,
    residual=(True, True),
    ignore_flag=False,
    gains=(1, 2),
):  # (n, d) -> (n, d)
    """The modern block with one thing changed: a residual missing, use_attention ignored, or the
    gains given to the other RMSNorm (gains=(2, 1)) or to neither (gains=(None, None))."""
    p = params

    def norm(v, which):
        return rmsnorm(v, p.get(f"gain_{which}")) if which else rmsnorm(v)

    h = x
    if use_attention or ignore_flag:
        h = x * residual[0] + gqa_attention(
            norm(x, gains[0]), p["W_q"], p["W_k"], p["W_v"], p["W_o"], n_heads, n_kv_heads
        )
    return h * residual[1] + swiglu(norm(h, gains[1]), p["W_1"], p["W_3"], p["W_2"])


# ------------------------------------------------------------------------------------- model counts


def count_variant(
    d_model,
    n_heads,
    n_kv_heads,
    n_layers,
    vocab_size,
    d_ff=None,
    tied=False,
    *,
    tied_twice=False,
    kv_heads=True,
    width=swiglu_width,
):
    """count_model with one thing changed: a tied output counted again, n_kv_heads ignored (W_k, W_v
    d × d), or the default width computed another way."""
    d, d_head = d_model, d_model // n_heads
    d_ff = width(d) if d_ff is None else d_ff
    attention = 2 * d * d + 2 * d * (n_kv_heads if kv_heads else n_heads) * d_head
    block = attention + 3 * d * d_ff + 2 * d
    output = 0 if tied and not tied_twice else vocab_size * d
    c = {
        "attention": attention,
        "mlp": 3 * d * d_ff,
        "norm": 2 * d,
        "block": block,
        "blocks": n_layers * block,
        "embedding": vocab_size * d,
        "output": output,
        "final_norm": d,
    }
    c["total"] = c["blocks"] + c["embedding"] + c["output"] + c["final_norm"]
    return c


# ------------------------------------------------------------------------------------ the catalogue

MISTAKES = [
    mistake(
        "rmsnorm.mean_subtracted",
        "this matches RMSNorm with the mean subtracted first (LayerNorm without beta): "
        "RMSNorm centres nothing, x / sqrt(mean(x**2) + eps) * gain",
        rmsnorm=partial(rms_variant, center=True),
    ),
    mistake(
        "rmsnorm.no_eps",
        "this matches RMSNorm without eps, x / sqrt(mean(x**2)): add eps inside the square root, "
        "which also keeps a row of zeros finite",
        rmsnorm=partial(rms_variant, use_eps=False),
    ),
    mistake(
        "rmsnorm.axis",
        "this matches RMSNorm over the wrong axis (across the tokens, or the whole array): "
        "each row on its own, mean(x**2, axis=-1, keepdims=True)",
        rmsnorm=[
            partial(rms_variant, axis=0),
            partial(rms_variant, axis=-2),
            partial(rms_variant, axis=None),
        ],
    ),
    mistake(
        "silu.sigmoid",
        "this matches the sigmoid alone, 1 / (1 + exp(-x)): SiLU is x times the sigmoid, "
        "x / (1 + exp(-x))",
        silu=sigmoid,
        swiglu=partial(swiglu_variant, act=sigmoid),
    ),
    mistake(
        "swiglu.swapped",
        "this matches SwiGLU with W_1 and W_3 swapped (SiLU on u @ W_3): the gate is "
        "silu(u @ W_1), the value u @ W_3, (silu(u @ W_1) * (u @ W_3)) @ W_2",
        swiglu=partial(swiglu_variant, swapped=True),
    ),
    mistake(
        "swiglu.gate_outside",
        "this matches SiLU of the whole product, silu((u @ W_1) * (u @ W_3)): only the "
        "gate goes through SiLU, (silu(u @ W_1) * (u @ W_3)) @ W_2",
        swiglu=partial(swiglu_variant, gate_outside=True),
    ),
    mistake(
        "swiglu.meta_rounding",
        "this matches Meta's width, rounded up to a multiple of 256 (ceil): the course "
        "uses round(8 * d / 3 / 256) * 256 for d >= 256 and 8 * d // 3 below",
        swiglu_width=width_meta,
    ),
    mistake(
        "gqa.tile",
        "this matches K/V heads tiled (np.tile: head h reads K/V head h % n_kv_heads): repeat each "
        "K/V head for its group, .repeat(n_heads // n_kv_heads, axis=0), head h reads h // group",
        gqa_attention=partial(gqa_variant, kv="tile"),
    ),
    mistake(
        "gqa.no_repeat",
        "this matches K/V not repeated for the groups (every query head reads K/V head 0): "
        "query head h reads K/V head h // (n_heads // n_kv_heads)",
        gqa_attention=partial(gqa_variant, kv="first"),
    ),
    mistake(
        "gqa.scale_d_model",
        "this matches scores divided by sqrt(d_model): divide by sqrt(d_head), "
        "d_head = d_model // n_heads",
        gqa_attention=partial(gqa_variant, scale="model"),
    ),
    mistake(
        "modern_block.no_residual",
        "this matches a block without a residual (h = attention(...) or "
        "y = swiglu(...)): add each branch to the stream, h = x + ..., y = h + ...",
        modern_block=[
            partial(block_variant, residual=(False, True)),
            partial(block_variant, residual=(True, False)),
            partial(block_variant, residual=(False, False)),
        ],
    ),
    mistake(
        "modern_block.ignores_use_attention",
        "this matches a block that ignores use_attention: with "
        "use_attention=False skip the attention branch, h = x",
        modern_block=partial(block_variant, ignore_flag=True),
    ),
    mistake(
        "modern_block.gains",
        "this matches a block that gives the RMSNorms the wrong gains (swapped, or none): "
        "rmsnorm(x, params.get('gain_1')) before attention, gain_2 before SwiGLU",
        modern_block=[
            partial(block_variant, gains=(2, 1)),
            partial(block_variant, gains=(None, None)),
        ],
    ),
    mistake(
        "model.tied_twice",
        "this matches a tied model whose output layer is counted again: with tied=True the "
        "output layer is the embedding table, output = 0",
        count_model=partial(count_variant, tied_twice=True),
    ),
    # count_model's own: graded with the course's swiglu_width, its lines compute the width
    mistake(
        "model.meta_rounding",
        "this matches a default d_ff rounded up to a multiple of 256 "
        "(Meta's code): count_model's default is swiglu_width(d), round(8 * d / 3 / 256) * 256 "
        "for d >= 256, 8 * d // 3 below",
        count_model=partial(count_variant, width=width_meta),
    ),
    mistake(
        "model.n_kv_heads",
        "this matches counts that ignore n_kv_heads: W_k and W_v have n_kv_heads * d_head "
        "columns each (attention = 2d² + 2·d·n_kv_heads·d_head)",
        count_model=partial(count_variant, kv_heads=False),
    ),
]
