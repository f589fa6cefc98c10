"""The catalogue of known mistakes on the block (instructors only: it ships with the solutions,
never to students).

Each mistake is a variant of the reference, written the way students write it (reference/mistakes.md
lists them with their size); some have several variants when students write the same mistake in ways
whose outputs differ, e.g. a mask that hides the diagonal with -inf (NaN in row 0) or with -1e9 (row
0 averages every token). The grader runs them in its own process after a failed check and names the
mistake when the student's output matches exactly one (grader.feedback.mistakes). A mistake inside a
component also has a variant of the functions that use it (softmax without the max inside attention;
the block and mlp around a faulty layernorm, attention or gelu), so a test of attention can name a
softmax mistake, and a block test can accept the right wiring around a component whose own tests
found this mistake. `grade release` stores their outputs on the public tests' inputs in the
release's tests/public/mistakes.json.
"""

import math
from functools import partial

import numpy as np
from attention import attention, softmax
from block import mlp
from layernorm import layernorm
from params import swiglu_width

from grader.feedback.mistakes import fit, mistake

SQRT_2_OVER_PI = math.sqrt(2 / math.pi)
_erf = np.vectorize(math.erf, otypes=[float])


# ---------------------------------------------------------------------------------------- LayerNorm


def ln_variant(
    x,
    gamma=None,
    beta=None,
    eps=1e-5,
    *,
    ddof=0,
    eps_at="inside",
    axis=-1,
    affine=True,
    center=True,
    use_beta=True,
    rms=False,
):
    """LayerNorm with one thing changed: ddof, where eps goes ("inside", "outside", "none", "after":
    added after the division, `/ np.sqrt(var) + eps`), the axis, gamma and beta ignored, beta alone
    ignored, the mean not subtracted, or RMSNorm (x / sqrt(mean(x²) + eps), no mean, no
    variance)."""  # (..., d) -> (..., d)
    if not affine:
        gamma = beta = None
    gamma = np.ones(x.shape[-1]) if gamma is None else gamma
    beta = np.zeros(x.shape[-1]) if beta is None or not use_beta else beta
    if rms:
        return gamma * x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + eps) + beta
    mean = x.mean(axis=axis, keepdims=True) if center else 0.0
    var = x.var(axis=axis, keepdims=True, ddof=ddof)
    if eps_at == "after":
        return gamma * (x - mean) / np.sqrt(var) + eps + beta
    scale = {"inside": np.sqrt(var + eps), "outside": np.sqrt(var) + eps, "none": np.sqrt(var)}[
        eps_at
    ]
    return gamma * (x - mean) / scale + beta


def ln_default_eps(value):
    """LayerNorm whose default eps is ``value`` (an eps the caller gives is used as it is)."""

    def variant(x, gamma=None, beta=None, eps=None):  # (..., d) -> (..., d)
        return ln_variant(x, gamma, beta, value if eps is None else eps)

    return variant


# Defaults students take from other libraries or papers (PyTorch's is the course's 1e-5; Keras 1e-3,
# TF 1e-12).
OTHER_EPS = (1e-2, 1e-3, 1e-4, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10, 1e-12)


# --------------------------------------------------------------------------------------------- GELU


def gelu_tanh(
    x, c=0.044715, k=SQRT_2_OVER_PI, *, half=0.5, power=3, gate_only=False
):  # (...) -> (...)
    """The tanh form with the cubic coefficient c, the factor k, the leading half and the power of
    x; gate_only: the gate 0.5 * (1 + tanh(...)) without the x that multiplies it."""
    return half * (1 if gate_only else x) * (1 + np.tanh(k * (x + c * x**power)))


def gelu_erf(x):  # (...) -> (...)
    """The exact form x * Phi(x)."""
    return 0.5 * x * (1 + _erf(np.asarray(x, dtype=float) / math.sqrt(2)))


def gelu_sigmoid(x):  # (...) -> (...)
    """The sigmoid approximation x * sigmoid(1.702 x)."""
    return x / (1 + np.exp(-1.702 * x))


def gelu_relu(x):  # (...) -> (...)
    return np.maximum(x, 0)


# Constants mistyped or misremembered: the cubic coefficient (0.044715) and sqrt(2 / pi) (0.7979).
WRONG_CONSTANTS = [dict(c=c) for c in (0.47, 0.44715, 0.4715, 0.04715, 0.0044715, 0.44, 0.0044)] + [
    dict(k=k)
    for k in (
        math.sqrt(math.pi / 2),
        2 / math.pi,
        math.sqrt(2) / math.pi,
        math.sqrt(2),
        math.sqrt(2 * math.pi),
    )
]


# ------------------------------------------------------------------------------- softmax, attention


def softmax_variant(
    s, axis=-1, *, stable=True, fixed_axis=None, keepdims=True
):  # (..., n) -> (..., n)
    """Softmax without the max subtracted, along a fixed axis whatever `axis` says, or divided by a
    sum taken without keepdims (on a matrix, row i divided by the sums broadcast along the columns:
    entry j by row j's)."""
    if not keepdims and s.ndim > 2:  # each (n, n) matrix as the student's softmax sees it
        return np.stack(
            [
                softmax_variant(t, axis, stable=stable, fixed_axis=fixed_axis, keepdims=False)
                for t in s
            ]
        )
    axis = axis if fixed_axis is None else fixed_axis
    e = np.exp(s - s.max(axis=axis, keepdims=True)) if stable else np.exp(s)
    return e / e.sum(axis=axis, keepdims=keepdims)


def attention_variant(
    u,
    W_q,
    W_k,
    W_v,
    W_o,
    n_heads=1,
    causal=True,
    *,
    softmax=softmax,
    softmax_axis=-1,
    scale="head",
    hide=1,
    fill=-np.inf,
    mask_after=False,
    split=True,
    merge=True,
    transposed="",
    project=True,
    scores_transposed=False,
):
    """Attention with one thing changed.

    scale: "head" sqrt(d_head), "model" sqrt(d_model), "d_head" d_head itself, "n_heads"
    sqrt(n_heads), "none". hide: the mask hides
    j >= i + hide (1: the future, 0: the diagonal too, 2: leaks the next token, None: no mask).
    fill: what masked scores become. mask_after: multiply the weights by the mask after the softmax
    instead. split / merge: heads split into / merged from consecutive column blocks (True), by a
    bare reshape without the transpose (False), "interleaved" (reshape(n, d_head, n_heads): head h
    takes every n_heads-th column), or merged "reversed" (the last head first). transposed: the
    weights among "qkvo" used as u @ W.T. project: the merged heads multiplied by W_o (False:
    forgotten). scores_transposed: k @ q.T in place of q @ k.T.
    """  # (n, d_model) -> (n, d_model)
    n, d = u.shape
    d_head = d // n_heads
    W_q, W_k, W_v, W_o = (
        W.T if name in transposed else W for name, W in zip("qkvo", (W_q, W_k, W_v, W_o))
    )
    q, k, v = (u @ W for W in (W_q, W_k, W_v))  # (n, d) each

    def heads_of(t):  # (n, d) -> (n_heads, n, d_head)
        if split == "interleaved":
            return t.reshape(n, d_head, n_heads).transpose(2, 0, 1)
        return (
            t.reshape(n, n_heads, d_head).transpose(1, 0, 2)
            if split
            else t.reshape(n_heads, n, d_head)
        )

    q, k, v = (heads_of(t) for t in (q, k, v))
    divisor = {
        "head": math.sqrt(d_head),
        "model": math.sqrt(d),
        "d_head": d_head,
        "n_heads": math.sqrt(n_heads),
        "none": 1.0,
    }[scale]
    scores = (
        k @ q.transpose(0, 2, 1) if scores_transposed else q @ k.transpose(0, 2, 1)
    ) / divisor  # (h, n, n)
    hidden = (
        np.triu(np.ones((n, n), dtype=bool), k=hide)
        if causal and hide is not None
        else np.zeros((n, n), bool)
    )
    if mask_after:
        weights = softmax(scores, axis=softmax_axis) * ~hidden
    else:
        weights = softmax(np.where(hidden, fill, scores), axis=softmax_axis)
    out = weights @ v  # (n_heads, n, d_head)
    if merge == "reversed":
        out = out[::-1]
    if merge == "interleaved":
        out = out.transpose(1, 2, 0).reshape(n, d)
    else:
        out = out.transpose(1, 0, 2).reshape(n, d) if merge else out.reshape(n, d)
    return out @ W_o if project else out


# --------------------------------------------------------------------------------------- block, mlp


def mlp_no_gelu(u, W_1, W_2):  # (n, d) -> (n, d)
    return u @ W_1 @ W_2


def mlp_with(u, W_1, W_2, *, gelu):  # (n, d) -> (n, d)
    """The MLP around another gelu."""
    return gelu(u @ W_1) @ W_2


def block_variant(
    x,
    params,
    n_heads=1,
    use_attention=True,
    *,
    post_ln=False,
    residual=(True, True),
    from_normed=(False, False),
    ignore_flag=False,
    affine=True,
    pass_heads=True,
    second_norm=2,
    mlp=mlp,
    attention=attention,
    layernorm=layernorm,
):
    """The block with one thing changed: post-LN, a residual missing or taken from the normalised
    stream, use_attention ignored, gamma/beta not passed on, n_heads not passed on, the second
    LayerNorm given gamma_1 and beta_1 (second_norm=1), or another mlp, attention or layernorm."""
    p = params

    def norm(v, which):
        return (
            layernorm(v, p.get(f"gamma_{which}"), p.get(f"beta_{which}"))
            if affine
            else layernorm(v)
        )

    def attend(v):
        return attention(v, p["W_q"], p["W_k"], p["W_v"], p["W_o"], n_heads if pass_heads else 1)

    if post_ln:  # the 2017 layout: h = LN(x + attention(x)), y = LN(h + mlp(h))
        h = norm(x + attend(x), 1) if use_attention else x
        return norm(h + mlp(h, p["W_1"], p["W_2"]), second_norm)
    h = x
    if use_attention or ignore_flag:
        u = norm(x, 1)
        h = (u if from_normed[0] else x) * residual[0] + attend(u)
    u = norm(h, second_norm)
    return (u if from_normed[1] else h) * residual[1] + mlp(u, p["W_1"], p["W_2"])


def blocks(**change):
    return partial(block_variant, **change)


# --------------------------------------------------------------------------------- parameter counts


def count_variant(
    d_model,
    n_heads,
    n_kv_heads=None,
    d_ff=None,
    style="gpt2",
    *,
    attention_bias=True,
    mlp_bias=True,
    ln_beta=True,
    kv_heads=True,
    gpt2_d_ff="4d",
    llama_round=round,
    w_o=True,
):
    """Parameter counts with one thing changed: biases forgotten, LayerNorm's beta forgotten,
    n_kv_heads ignored, GPT-2's default d_ff taken from Llama's rule, Llama's width rounded another
    way, or W_o (and its bias) not counted."""
    if style not in ("gpt2", "llama"):
        raise ValueError(f"unknown style {style!r}")
    d = d_model
    if style == "gpt2":
        if d_ff is None:
            d_ff = 4 * d if gpt2_d_ff == "4d" else swiglu_width(d)
        attention_count = (4 if w_o else 3) * d * d + (4 if w_o else 3) * d * attention_bias
        mlp_count = 2 * d * d_ff + (d_ff + d) * mlp_bias
        norm = 4 * d if ln_beta else 2 * d
    else:
        n_kv = n_heads if n_kv_heads is None or not kv_heads else n_kv_heads
        if d_ff is None:
            d_ff = int(llama_round(8 * d / 3 / 256)) * 256 if d >= 256 else 8 * d // 3
        attention_count = (2 if w_o else 1) * d * d + 2 * d * n_kv * (d // n_heads)
        mlp_count = 3 * d * d_ff
        norm = 2 * d
    return {
        "attention": attention_count,
        "mlp": mlp_count,
        "norm": norm,
        "total": attention_count + mlp_count + norm,
    }


def counts(**change):
    return partial(count_variant, **change)


# ------------------------------------------------------------------------------------ the catalogue

_NOMAX = partial(softmax_variant, stable=False)
_NO_KEEPDIMS = partial(softmax_variant, keepdims=False)

MISTAKES = [
    # LayerNorm
    mistake(
        "layernorm.ddof1",
        "this matches LayerNorm with the sample variance (ddof=1, dividing by d - 1): use the "
        "population variance, np.var's default ddof=0",
        layernorm=partial(ln_variant, ddof=1),
    ),
    mistake(
        "layernorm.eps_outside",
        "this matches LayerNorm with eps outside the square root, (x - mean) / (std + eps): "
        "put it inside, (x - mean) / sqrt(var + eps)",
        layernorm=partial(ln_variant, eps_at="outside"),
    ),
    mistake(
        "layernorm.no_eps",
        "this matches LayerNorm without eps, (x - mean) / sqrt(var): add eps inside the square "
        "root, sqrt(var + eps), which also keeps a constant row finite",
        layernorm=partial(ln_variant, eps_at="none"),
    ),
    mistake(
        "layernorm.axis",
        "this matches LayerNorm over the wrong axis (across the tokens, or the whole array): "
        "normalise each row on its own, mean and var with axis=-1, keepdims=True",
        layernorm=[
            partial(ln_variant, axis=0),
            partial(ln_variant, axis=-2),
            partial(ln_variant, axis=None),
        ],
    ),
    mistake(
        "layernorm.no_affine",
        "this matches LayerNorm that ignores gamma and beta: return gamma * normalised + beta",
        layernorm=partial(ln_variant, affine=False),
    ),
    mistake(
        "layernorm.no_mean",
        "this matches LayerNorm that does not subtract the mean: use (x - mean) / sqrt(var + eps)",
        layernorm=partial(ln_variant, center=False),
    ),
    mistake(
        "layernorm.no_beta",
        "this matches LayerNorm that ignores beta (gamma is used): add beta after scaling, "
        "gamma * normalised + beta",
        layernorm=partial(ln_variant, use_beta=False),
    ),
    mistake(
        "layernorm.rms",
        "this matches RMSNorm, x / sqrt(mean(x²) + eps): LayerNorm subtracts the mean first "
        "and divides by the variance's root, (x - mean) / sqrt(var + eps)",
        layernorm=[partial(ln_variant, rms=True), partial(ln_variant, rms=True, use_beta=False)],
    ),
    mistake(
        "layernorm.eps_after",
        "this matches LayerNorm with eps added after the division, / np.sqrt(var) + eps "
        "(operator precedence): write / np.sqrt(var + eps)",
        layernorm=partial(ln_variant, eps_at="after"),
    ),
    *fit(
        "layernorm.eps",
        "this matches LayerNorm with a default eps of about {value}: the course uses eps=1e-5 "
        "(PyTorch's default), inside the square root",
        OTHER_EPS,
        layernorm=ln_default_eps,
    ),
    # GELU
    mistake(
        "gelu.erf",
        "this matches the exact GELU with erf, x * Phi(x): this course uses GPT-2's tanh form, "
        "0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x**3)))",
        gelu=gelu_erf,
    ),
    mistake(
        "gelu.sigmoid",
        "this matches the sigmoid approximation x * sigmoid(1.702 x): use the tanh form, "
        "0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x**3)))",
        gelu=gelu_sigmoid,
    ),
    mistake(
        "gelu.constant",
        "this matches the tanh GELU with a wrong constant: the cubic coefficient is 0.044715 and "
        "the factor is sqrt(2 / pi), about 0.7979",
        gelu=[partial(gelu_tanh, **c) for c in WRONG_CONSTANTS],
    ),
    mistake(
        "gelu.rounded",
        "this matches the tanh GELU with the course text's rounded constants (0.798, 0.0447): "
        "use math.sqrt(2 / math.pi) and 0.044715",
        gelu=[
            partial(gelu_tanh, c=0.0447, k=0.798),
            partial(gelu_tanh, c=0.0447),
            partial(gelu_tanh, k=0.798),
        ],
    ),
    mistake(
        "gelu.relu",
        "this matches ReLU, max(x, 0): GELU lets small negative values through, "
        "0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x**3)))",
        gelu=gelu_relu,
    ),
    mistake(
        "gelu.no_half",
        "this matches exactly 2× GELU: the leading 0.5 is missing, "
        "0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x**3)))",
        gelu=partial(gelu_tanh, half=1.0),
    ),
    mistake(
        "gelu.no_x",
        "this matches the GELU gate without the x in front, 0.5 * (1 + tanh(...)): GELU is x times "
        "the gate, 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x**3)))",
        gelu=partial(gelu_tanh, gate_only=True),
    ),
    mistake(
        "gelu.square",
        "this matches the tanh GELU with x**2 in place of x**3: the cubic term is 0.044715 * x**3",
        gelu=partial(gelu_tanh, power=2),
    ),
    # softmax and attention
    mistake(
        "softmax.no_max",
        "this matches softmax without subtracting the max first: exp overflows to inf for large "
        "scores; use e = np.exp(s - s.max(axis=axis, keepdims=True))",
        softmax=_NOMAX,
        attention=partial(attention_variant, softmax=_NOMAX),
    ),
    mistake(
        "softmax.axis",
        "this matches a softmax along the wrong axis: take the max and the sum along the axis you "
        "are given (in attention, the keys: the last axis), with keepdims=True",
        softmax=[partial(softmax_variant, fixed_axis=-1), partial(softmax_variant, fixed_axis=0)],
        attention=[
            partial(attention_variant, softmax_axis=-2),
            partial(attention_variant, softmax_axis=0),
        ],
    ),
    mistake(
        "softmax.no_keepdims",
        "this matches a softmax whose sum drops keepdims, e / e.sum(axis=axis): on a "
        "matrix each row is then divided by the other rows' sums; use e.sum(axis=axis, "
        "keepdims=True)",
        softmax=_NO_KEEPDIMS,
        attention=partial(attention_variant, softmax=_NO_KEEPDIMS),
    ),
    mistake(
        "attention.mask_diagonal",
        "this matches a causal mask that also hides the diagonal (np.triu(..., k=0) or "
        "np.tril(..., k=-1)): token i must see tokens 0..i, itself included",
        attention=[
            partial(attention_variant, hide=0),
            partial(attention_variant, hide=0, fill=-1e9),
        ],
    ),
    mistake(
        "attention.mask_leak",
        "this matches a causal mask that lets each token see the next one (np.triu(..., k=2)):"
        " hide every j > i",
        attention=partial(attention_variant, hide=2),
    ),
    mistake(
        "attention.no_mask",
        "this matches attention without the causal mask: with causal=True, set scores[i, j] "
        "to -inf for j > i before the softmax",
        attention=partial(attention_variant, hide=None),
    ),
    mistake(
        "attention.mask_zero",
        "this matches masking with 0 instead of -inf (masked scores set to 0, or the weights "
        "multiplied by the mask after the softmax): set the future scores to -inf before the "
        "softmax",
        attention=[
            partial(attention_variant, fill=0.0),
            partial(attention_variant, mask_after=True),
        ],
    ),
    mistake(
        "attention.scale_d_model",
        "this matches scores divided by sqrt(d_model): divide by sqrt(d_head), "
        "d_head = d_model // n_heads",
        attention=partial(attention_variant, scale="model"),
    ),
    mistake(
        "attention.scale_d_head",
        "this matches scores divided by d_head: divide by its square root, "
        "sqrt(d_head) (d_head = d_model // n_heads)",
        attention=partial(attention_variant, scale="d_head"),
    ),
    mistake(
        "attention.scale_n_heads",
        "this matches scores divided by sqrt(n_heads): divide by sqrt(d_head), "
        "d_head = d_model // n_heads (with one head, this is the same as no scaling)",
        attention=partial(attention_variant, scale="n_heads"),
    ),
    mistake(
        "attention.scores_transposed",
        "this matches scores k @ q.T, the transpose: row i of the scores is "
        "query i against every key, q @ k.T, and the mask and the softmax act on that",
        attention=partial(attention_variant, scores_transposed=True),
    ),
    mistake(
        "attention.no_scale",
        "this matches scores that are not scaled: divide q @ k.T by sqrt(d_head)",
        attention=partial(attention_variant, scale="none"),
    ),
    mistake(
        "attention.head_split",
        "this matches heads split (or merged) with a bare reshape(n_heads, n, d_head): "
        "reshape to (n, n_heads, d_head) and transpose to (n_heads, n, d_head), or slice "
        "consecutive column blocks",
        attention=[
            partial(attention_variant, split=False, merge=False),
            partial(attention_variant, split=False),
            partial(attention_variant, merge=False),
        ],
    ),
    mistake(
        "attention.head_interleaved",
        "this matches heads split by reshape(n, d_head, n_heads), which gives head h "
        "every n_heads-th column: head h is columns h*d_head to (h+1)*d_head, reshape(n, n_heads, "
        "d_head)",
        attention=[
            partial(attention_variant, split="interleaved", merge="interleaved"),
            partial(attention_variant, split="interleaved"),
        ],
    ),
    mistake(
        "attention.heads_reversed",
        "this matches the heads' outputs concatenated in reverse order: concatenate "
        "head 0 first, np.concatenate(out, axis=-1)",
        attention=partial(attention_variant, merge="reversed"),
    ),
    mistake(
        "attention.transposed",
        "this matches u @ W.T (PyTorch's [out, in] layout): this course stores the "
        "weights [in, out], so q = u @ W_q, and likewise k, v and the output @ W_o",
        attention=[
            partial(attention_variant, transposed="qkv"),
            partial(attention_variant, transposed="qkvo"),
        ],
    ),
    mistake(
        "attention.no_w_o",
        "this matches attention without the output projection: multiply the concatenated "
        "heads by W_o, np.concatenate(out, axis=-1) @ W_o",
        attention=partial(attention_variant, project=False),
    ),
    # block and mlp
    mistake(
        "block.post_ln",
        "this matches a post-LN block, layernorm(x + attention(x)): GPT-2 is pre-LN, "
        "h = x + attention(layernorm(x)), y = h + mlp(layernorm(h))",
        block=blocks(post_ln=True),
    ),
    mistake(
        "block.no_residual_attention",
        "this matches a block without the first residual, h = attention(layernorm(x)):"
        " add the attention output to the stream, h = x + attention(layernorm(x))",
        block=blocks(residual=(False, True)),
    ),
    mistake(
        "block.no_residual_mlp",
        "this matches a block without the second residual, y = mlp(layernorm(h)): add the "
        "MLP output to the stream, y = h + mlp(layernorm(h))",
        block=blocks(residual=(True, False)),
    ),
    mistake(
        "block.residual_from_normalised",
        "this matches a residual added to the normalised copy, layernorm(x) + "
        "attention(layernorm(x)): add each branch to the un-normalised stream, h = x + ..., y = h "
        "+ ...",
        block=[
            blocks(from_normed=(True, True)),
            blocks(from_normed=(True, False)),
            blocks(from_normed=(False, True)),
        ],
    ),
    mistake(
        "block.ignores_use_attention",
        "this matches a block that ignores use_attention: with "
        "use_attention=False skip the attention branch, h = x",
        block=blocks(ignore_flag=True),
    ),
    mistake(
        "block.no_gamma_beta",
        "this matches a block that does not pass gamma_1, beta_1, gamma_2, beta_2 on to "
        "layernorm: use params.get('gamma_1') and the others",
        block=blocks(affine=False),
    ),
    mistake(
        "block.no_n_heads",
        "this matches a block that does not pass n_heads on to attention: call "
        "attention(u, W_q, W_k, W_v, W_o, n_heads)",
        block=blocks(pass_heads=False),
    ),
    mistake(
        "block.second_norm_params",
        "this matches a block whose second LayerNorm uses gamma_1 and beta_1: the "
        "second one takes gamma_2 and beta_2, layernorm(h, gamma_2, beta_2)",
        block=blocks(second_norm=1),
    ),
    mistake(
        "mlp.no_gelu",
        "this matches an MLP without GELU, u @ W_1 @ W_2: apply gelu between the two products",
        mlp=mlp_no_gelu,
        block=blocks(mlp=mlp_no_gelu),
    ),
    # mlp's own: a ReLU written into it (its gelu() may be right); gelu.relu is named only where
    # gelu's own tests find it
    mistake(
        "mlp.relu",
        "this matches an MLP with ReLU in place of GELU, max(u @ W_1, 0) @ W_2: "
        "call gelu between the two products, gelu(u @ W_1) @ W_2",
        mlp=partial(mlp_with, gelu=gelu_relu),
        block=blocks(mlp=partial(mlp_with, gelu=gelu_relu)),
    ),
    # parameter counts
    mistake(
        "params.no_bias",
        "this matches GPT-2 counts without the linear layers' biases: count a bias of d for each "
        "of W_q, W_k, W_v, W_o, one of d_ff for W_1 and one of d for W_2",
        count_params=[
            counts(attention_bias=False, mlp_bias=False),
            counts(attention_bias=False),
            counts(mlp_bias=False),
        ],
    ),
    mistake(
        "params.no_beta",
        "this matches GPT-2 counts without LayerNorm's beta: each of the two LayerNorms has gamma "
        "and beta, d each (norm = 4d)",
        count_params=counts(ln_beta=False),
    ),
    mistake(
        "params.n_kv_heads",
        "this matches Llama counts that ignore n_kv_heads: W_k and W_v have n_kv_heads * d_head "
        "columns each (attention = 2d² + 2·d·n_kv_heads·d_head)",
        count_params=counts(kv_heads=False),
    ),
    mistake(
        "params.gpt2_d_ff",
        "this matches GPT-2 counts with Llama's default d_ff: "
        "GPT-2's default is d_ff = 4 * d_model",
        count_params=counts(gpt2_d_ff="llama"),
    ),
    mistake(
        "params.rounding",
        "this matches Llama's default d_ff rounded another way: use Python's round, "
        "round(8 * d / 3 / 256) * 256 (24.5 rounds to 24)",
        count_params=[
            counts(llama_round=lambda v: math.floor(v + 0.5)),
            counts(llama_round=math.floor),
        ],
    ),
    mistake(
        "params.meta_rounding",
        "this matches Llama's default d_ff rounded up to a multiple of 256, as Meta's "
        "code does (ceil): this course's formula uses round(), round(8 * d / 3 / 256) * 256",
        count_params=counts(llama_round=math.ceil),
    ),
    mistake(
        "params.no_w_o",
        "this matches counts without W_o: attention is short by d² + d (GPT-2: W_o and its "
        "bias) or d² (Llama: W_o); count W_q, W_k, W_v and W_o",
        count_params=counts(w_o=False),
    ),
]


def _around(m):
    """``m`` with its variants of mlp and block built around its variant of layernorm, attention or
    gelu: the specified wiring around a component with this mistake. The block tests accept them for
    a submission whose own tests found this mistake in that component (a mistake costs points
    once)."""
    around = {
        "block": [blocks(layernorm=v) for v in m.variants.get("layernorm", ())]
        + [blocks(attention=v) for v in m.variants.get("attention", ())]
        + [blocks(mlp=partial(mlp_with, gelu=v)) for v in m.variants.get("gelu", ())],
        "mlp": [partial(mlp_with, gelu=v) for v in m.variants.get("gelu", ())],
    }
    variants = {**m.variants}
    for function, extra in around.items():
        if extra:
            variants[function] = list(variants.get(function, ())) + extra
    return type(m)(m.id, m.message, variants)


MISTAKES = [_around(m) for m in MISTAKES]
