"""Fairness across shapes (issue 26, "Done when"): the dependent functions (block and mlp;
modern_block; count_model) written the many ways students and third-party numpy GPT-2/Llama ports
write them, graded with `grade autograde` and with `grade check` in a fresh student release.

- SHAPES: correct dependent functions in other shapes: components called one row or one token at a
  time, heads stacked or batched differently, components held as default arguments, class
  attributes, instance attributes, module-level partials, dicts of functions, closures, lambdas and
  decorators, module aliases, star imports, einsum, loops, helpers of the student's own imported
  from a component's module. Each gets full marks in autograde (where its components are the
  reference's) and full public marks in the release's `grade check` (where they are the student's
  own, correct ones).
- FAULTS: one wrong component each (catalogued mistakes and others: constants, transposes, stubs,
  crashes, files that do not import or are missing, forbidden imports), held by a correct dependent
  function of SHAPES: only the component's own problem loses points, every other problem keeps the
  reference's.
- WRONG: dependent functions with a mistake of their own (post-LN, a missing residual, ...) held in
  those shapes: they still lose their problem's points, and nothing else.

Everything is graded in one `grade autograde --jobs 2` run per assignment and one release per
assignment.
"""

from __future__ import annotations

import json
import shutil
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from conftest import PROJECT, grade
from mutants import DELETE
from mutants import FAULTS as BLOCK_FAULTS

from grader.course.manifest import load

THE_BLOCK, MODERN = "the-block", "the-modern-block"
ASSIGNMENTS = (THE_BLOCK, MODERN)
COURSE = {a: load(PROJECT / "course.json", a) for a in ASSIGNMENTS}

Files = (
    dict  # module -> its whole text (str), [(old, new), ...] edits of the text before, or DELETE
)


@dataclass(frozen=True)
class Shape:
    """A correct submission: the reference with these modules written another way; ``problems``: the
    dependent problems whose functions are written in the shape."""

    assignment: str
    files: Files
    problems: tuple[str, ...]


@dataclass(frozen=True)
class Variant:
    """A shape with ``edits`` made on top of it; ``problem``: the one problem that must lose
    points."""

    shape: str
    problem: str
    edits: Files = field(default_factory=dict)


def ref(assignment: str, module: str) -> str:
    return (PROJECT / "solutions" / assignment / f"{module}.py").read_text()


# ================================================================================================
# the-block

HEAD = (
    "import numpy as np\nfrom attention import attention\nfrom gelu import gelu\nfrom layernorm "
    "import layernorm\n\n\n"
)
MLP = "def mlp(u, W_1, W_2):\n    return gelu(u @ W_1) @ W_2\n\n\n"
ATT = 'p["W_q"], p["W_k"], p["W_v"], p["W_o"]'
# a pre-LN block body that the shapes below vary on: LN, ATTN, NORM2 and FFN replaced
BODY = (
    """def block(x, params, n_heads=1, use_attention=True):
    p = params
    h = x
    if use_attention:
        h = x + attention(layernorm(x, p.get("gamma_1"), p.get("beta_1")), """
    + ATT
    + """, n_heads)
    return h + mlp(layernorm(h, p.get("gamma_2"), p.get("beta_2")), p["W_1"], p["W_2"])
"""
)
LINEAR = (
    '\n\ndef linear(x, W):\n    """x @ W: one helper for every projection (picoGPT\'s linear, '
    'without a bias)."""\n    return x @ W\n'
)
SPLIT_HEADS = '''

def split_heads(W, n_heads, rows=False):
    """A weight matrix cut into its heads' blocks: columns (W_q, W_k, W_v) or rows (W_o)."""
    return np.split(W, n_heads, 0 if rows else 1)
'''
LN_CLASS = '''

class LayerNorm:
    """A LayerNorm layer holding its gamma and beta, as torch.nn.LayerNorm does."""

    def __init__(self, gamma=None, beta=None, eps=1e-5):
        self.gamma, self.beta, self.eps = gamma, beta, eps

    def __call__(self, x):
        return layernorm(x, self.gamma, self.beta, self.eps)
'''
FFN_IN_GELU = '''

def ffn(u, W_1, W_2):
    """The position-wise feed-forward network, beside its activation."""
    return gelu(u @ W_1) @ W_2
'''
FFN_ACT_IN_GELU = '''

def feed_forward(u, W_1, W_2, act=gelu):
    """The position-wise feed-forward network, GELU by default."""
    return act(u @ W_1) @ W_2
'''

BLOCK_SHAPES: dict[str, Files] = {
    # (a) one row, one token, one element at a time
    "ln_row_by_row": {
        "block": HEAD
        + MLP
        + """def block(x, params, n_heads=1, use_attention=True):
    g1, b1, g2, b2 = (params.get(k) for k in ("gamma_1", "beta_1", "gamma_2", "beta_2"))
    h = x
    if use_attention:
        u = np.stack([layernorm(row, g1, b1) for row in x])
        h = x + attention(u, params["W_q"], params["W_k"], params["W_v"], params["W_o"], n_heads)
    u = np.stack([layernorm(row, g2, b2) for row in h])
    return h + mlp(u, params["W_1"], params["W_2"])
"""
    },
    "ln_apply_along_axis": {
        "block": HEAD
        + MLP
        + BODY.replace(
            'layernorm(x, p.get("gamma_1"), p.get("beta_1"))',
            'np.apply_along_axis(layernorm, -1, x, p.get("gamma_1"), p.get("beta_1"))',
        ).replace(
            'layernorm(h, p.get("gamma_2"), p.get("beta_2"))',
            'np.apply_along_axis(layernorm, -1, h, p.get("gamma_2"), p.get("beta_2"))',
        )
    },
    "gelu_row_by_row": {
        "block": HEAD
        + """def mlp(u, W_1, W_2):
    a = u @ W_1
    return np.stack([gelu(row) for row in a]) @ W_2


"""
        + BODY
    },
    "gelu_vectorize": {
        "block": HEAD
        + """def mlp(u, W_1, W_2):
    act = np.vectorize(gelu)          # elementwise, one number at a time
    return act(u @ W_1) @ W_2


"""
        + BODY
    },
    "gelu_token_by_token": {
        "block": HEAD
        + """def mlp(u, W_1, W_2):
    return np.stack([gelu(token @ W_1) @ W_2 for token in u])


"""
        + BODY
    },
    # (b) heads stacked or batched another way
    "heads_as_single_head_sum": {
        "block": HEAD
        + MLP
        + '''def multi_head(u, p, n_heads):
    """Multi-head attention as the sum of its heads, each one head's attention projected by its rows of W_o."""
    d_head = u.shape[-1] // n_heads
    out = 0
    for h in range(n_heads):
        s = slice(h * d_head, (h + 1) * d_head)
        out = out + attention(u, p["W_q"][:, s], p["W_k"][:, s], p["W_v"][:, s], p["W_o"][s, :], 1)
    return out


def block(x, params, n_heads=1, use_attention=True):
    p = params
    h = x
    if use_attention:
        h = x + multi_head(layernorm(x, p.get("gamma_1"), p.get("beta_1")), p, n_heads)
    return h + mlp(layernorm(h, p.get("gamma_2"), p.get("beta_2")), p["W_1"], p["W_2"])
'''
    },
    "batch_of_one": {
        "block": HEAD
        + MLP
        + """def block(x, params, n_heads=1, use_attention=True):
    p = params
    x = x[np.newaxis]                  # (B, T, C) with B = 1, as a batched port holds it
    h = x
    if use_attention:
        h = x + attention(layernorm(x, p.get("gamma_1"), p.get("beta_1")), """
        + ATT
        + """, n_heads)
    return (h + mlp(layernorm(h, p.get("gamma_2"), p.get("beta_2")), p["W_1"], p["W_2"]))[0]
"""
    },
    # (c) default arguments
    "default_arguments": {
        "block": HEAD
        + """def mlp(u, W_1, W_2, act=gelu):
    return act(u @ W_1) @ W_2


def block(x, params, n_heads=1, use_attention=True, norm=layernorm, attn=attention, ffn=mlp):
    p = params
    h = x
    if use_attention:
        h = x + attn(norm(x, p.get("gamma_1"), p.get("beta_1")), """
        + ATT
        + """, n_heads)
    return h + ffn(norm(h, p.get("gamma_2"), p.get("beta_2")), p["W_1"], p["W_2"])
"""
    },
    # (d) class attributes, methods, instance attributes
    "class_staticmethods": {
        "block": HEAD
        + """class Ops:
    norm = staticmethod(layernorm)
    attn = staticmethod(attention)
    act = staticmethod(gelu)


def mlp(u, W_1, W_2):
    return Ops.act(u @ W_1) @ W_2


def block(x, params, n_heads=1, use_attention=True):
    p = params
    h = x
    if use_attention:
        h = x + Ops.attn(Ops.norm(x, p.get("gamma_1"), p.get("beta_1")), """
        + ATT
        + """, n_heads)
    return h + mlp(Ops.norm(h, p.get("gamma_2"), p.get("beta_2")), p["W_1"], p["W_2"])
"""
    },
    "class_with_methods": {
        "block": HEAD
        + MLP
        + '''class Block:
    """nanoGPT's Block, in numpy: ln_1, attn, ln_2, mlp."""

    def __init__(self, params, n_heads=1):
        self.p, self.n_heads = params, n_heads

    def ln_1(self, x):
        return layernorm(x, self.p.get("gamma_1"), self.p.get("beta_1"))

    def ln_2(self, x):
        return layernorm(x, self.p.get("gamma_2"), self.p.get("beta_2"))

    def attn(self, x):
        return attention(x, self.p["W_q"], self.p["W_k"], self.p["W_v"], self.p["W_o"], self.n_heads)

    def mlp(self, x):
        return mlp(x, self.p["W_1"], self.p["W_2"])

    def __call__(self, x, use_attention=True):
        if use_attention:
            x = x + self.attn(self.ln_1(x))
        x = x + self.mlp(self.ln_2(x))
        return x


def block(x, params, n_heads=1, use_attention=True):
    return Block(params, n_heads)(x, use_attention)
'''
    },
    "instance_attributes": {
        "block": HEAD
        + """class CausalSelfAttention:
    def __init__(self, W_q, W_k, W_v, W_o, n_heads):
        self.weights, self.n_heads = (W_q, W_k, W_v, W_o), n_heads
        self.attend = attention              # an instance attribute: no binding

    def forward(self, x):
        return self.attend(x, *self.weights, n_heads=self.n_heads)


class MLP:
    def __init__(self, W_1, W_2):
        self.W_1, self.W_2, self.act = W_1, W_2, gelu

    def forward(self, x):
        return self.act(x @ self.W_1) @ self.W_2


def mlp(u, W_1, W_2):
    return MLP(W_1, W_2).forward(u)


def block(x, params, n_heads=1, use_attention=True):
    p = params
    norm = layernorm
    h = x
    if use_attention:
        attn = CausalSelfAttention(p["W_q"], p["W_k"], p["W_v"], p["W_o"], n_heads)
        h = x + attn.forward(norm(x, p.get("gamma_1"), p.get("beta_1")))
    return h + MLP(p["W_1"], p["W_2"]).forward(norm(h, p.get("gamma_2"), p.get("beta_2")))
"""
    },
    # (e) module-level partials
    "module_partials": {
        "block": "import functools\n\n"
        + HEAD
        + """ln = functools.partial(layernorm, eps=1e-5)
causal_self_attention = functools.partial(attention, causal=True)
act = functools.partial(gelu)


def mlp(u, W_1, W_2):
    return act(u @ W_1) @ W_2


def block(x, params, n_heads=1, use_attention=True):
    p = params
    h = x
    if use_attention:
        h = x + causal_self_attention(ln(x, p.get("gamma_1"), p.get("beta_1")), """
        + ATT
        + """, n_heads=n_heads)
    return h + mlp(ln(h, gamma=p.get("gamma_2"), beta=p.get("beta_2")), p["W_1"], p["W_2"])
"""
    },
    # (f) a dict of functions
    "dict_of_functions": {
        "block": HEAD
        + """LAYERS = {"norm": layernorm, "attention": attention, "activation": gelu}


def mlp(u, W_1, W_2):
    return LAYERS["activation"](u @ W_1) @ W_2


def block(x, params, n_heads=1, use_attention=True):
    p = params
    h = x
    if use_attention:
        u = LAYERS["norm"](x, p.get("gamma_1"), p.get("beta_1"))
        h = x + LAYERS["attention"](u, """
        + ATT
        + """, n_heads)
    return h + mlp(LAYERS["norm"](h, p.get("gamma_2"), p.get("beta_2")), p["W_1"], p["W_2"])
"""
    },
    # (g) closures, lambdas, decorators
    "closure_factory": {
        "block": HEAD
        + """def make_block(norm, attn, act):
    def ffn(u, W_1, W_2):
        return act(u @ W_1) @ W_2

    def pre_ln_block(x, params, n_heads=1, use_attention=True):
        p = params
        h = x
        if use_attention:
            h = x + attn(norm(x, p.get("gamma_1"), p.get("beta_1")), """
        + ATT
        + """, n_heads)
        return h + ffn(norm(h, p.get("gamma_2"), p.get("beta_2")), p["W_1"], p["W_2"])

    return ffn, pre_ln_block


mlp, block = make_block(layernorm, attention, gelu)
"""
    },
    "lambdas": {
        "block": HEAD
        + """mlp = lambda u, W_1, W_2: gelu(u @ W_1) @ W_2  # noqa: E731
ln = lambda t, g, b: layernorm(t, g, b)  # noqa: E731


def block(x, params, n_heads=1, use_attention=True):
    p = params
    attn = lambda u: attention(u, """
        + ATT
        + """, n_heads)  # noqa: E731
    h = x + attn(ln(x, p.get("gamma_1"), p.get("beta_1"))) if use_attention else x
    return h + mlp(ln(h, p.get("gamma_2"), p.get("beta_2")), p["W_1"], p["W_2"])
"""
    },
    "wrapper_decorator": {
        "block": "import functools\n\n"
        + HEAD
        + '''def same_shape(f):
    """A check that the layer keeps the stream's shape."""
    @functools.wraps(f)
    def wrapper(x, *args, **kwargs):
        out = f(x, *args, **kwargs)
        assert out.shape == x.shape, f"{f.__name__} changed the shape"
        return out
    return wrapper


norm = same_shape(layernorm)
attend = same_shape(attention)


def mlp(u, W_1, W_2):
    return gelu(u @ W_1) @ W_2


def block(x, params, n_heads=1, use_attention=True):
    p = params
    h = x
    if use_attention:
        h = x + attend(norm(x, p.get("gamma_1"), p.get("beta_1")), '''
        + ATT
        + """, n_heads)
    return h + mlp(norm(h, p.get("gamma_2"), p.get("beta_2")), p["W_1"], p["W_2"])
"""
    },
    # (h) module aliases, star imports, a registry built with importlib
    "module_aliases": {
        "block": """import attention as attn_mod
import gelu as G
import layernorm as ln


def mlp(u, W_1, W_2):
    return G.gelu(u @ W_1) @ W_2


def block(x, params, n_heads=1, use_attention=True):
    p = params
    h = x
    if use_attention:
        h = x + attn_mod.attention(ln.layernorm(x, p.get("gamma_1"), p.get("beta_1")), """
        + ATT
        + """, n_heads)
    return h + mlp(ln.layernorm(h, p.get("gamma_2"), p.get("beta_2")), p["W_1"], p["W_2"])
"""
    },
    "star_imports": {
        "block": "from attention import *  # noqa: F403\nfrom gelu import *  # noqa: F403\n"
        "from layernorm import *  # noqa: F403\n\n\n" + MLP + BODY
    },
    "importlib_registry": {
        "block": """import importlib

PARTS = {name: getattr(importlib.import_module(name), name) for name in ("layernorm", "gelu", "attention")}


def mlp(u, W_1, W_2):
    return PARTS["gelu"](u @ W_1) @ W_2


def block(x, params, n_heads=1, use_attention=True):
    p = params
    h = x
    if use_attention:
        h = x + PARTS["attention"](PARTS["layernorm"](x, p.get("gamma_1"), p.get("beta_1")), """
        + ATT
        + """, n_heads)
    return h + mlp(PARTS["layernorm"](h, p.get("gamma_2"), p.get("beta_2")), p["W_1"], p["W_2"])
"""
    },
    # (i) einsum; every call by keyword, picoGPT's way
    "einsum": {
        "block": HEAD
        + """def mlp(u, W_1, W_2):
    a = gelu(np.einsum("...d,df->...f", u, W_1))
    return np.einsum("...f,fd->...d", a, W_2)


"""
        + BODY
    },
    "picogpt_keywords": {
        "block": HEAD
        + """def ffn(x, c_fc, c_proj):
    return gelu(x @ c_fc) @ c_proj


def mlp(u, W_1, W_2):
    return ffn(u, c_fc=W_1, c_proj=W_2)


def transformer_block(x, mlp, attn, ln_1, ln_2, n_head):
    if attn is not None:
        x = x + attention(layernorm(x, **ln_1), **attn, n_heads=n_head)
    x = x + ffn(layernorm(x, **ln_2), **mlp)
    return x


def block(x, params, n_heads=1, use_attention=True):
    p = params
    attn = {k: p[k] for k in ("W_q", "W_k", "W_v", "W_o")} if use_attention else None
    return transformer_block(x, mlp={"c_fc": p["W_1"], "c_proj": p["W_2"]}, attn=attn,
                             ln_1={"gamma": p.get("gamma_1"), "beta": p.get("beta_1")},
                             ln_2={"gamma": p.get("gamma_2"), "beta": p.get("beta_2")}, n_head=n_heads)
"""
    },
    # (k) loops
    "loops_row_by_row": {
        "block": HEAD
        + """def mlp(u, W_1, W_2):
    out = np.zeros((u.shape[0], W_2.shape[1]), dtype=np.result_type(u, W_1, W_2))
    for i in range(u.shape[0]):
        hidden = gelu(u[i] @ W_1)
        for j in range(W_2.shape[1]):
            out[i, j] = hidden @ W_2[:, j]
    return out


def block(x, params, n_heads=1, use_attention=True):
    p = params
    h = x.copy()
    if use_attention:
        h += attention(layernorm(x, p.get("gamma_1"), p.get("beta_1")), """
        + ATT
        + """, n_heads)
    y = np.empty_like(h)
    for t in range(h.shape[0]):
        u = layernorm(h[t:t + 1], p.get("gamma_2"), p.get("beta_2"))
        y[t] = h[t] + mlp(u, p["W_1"], p["W_2"])[0]
    return y
"""
    },
    # the functions under test as a partial and as a callable instance
    "mlp_partial_object": {
        "block": "import functools\n\n"
        + HEAD
        + """def feed_forward(u, W_1, W_2, act):
    return act(u @ W_1) @ W_2


mlp = functools.partial(feed_forward, act=gelu)


"""
        + BODY
    },
    "block_callable_instance": {
        "block": HEAD
        + MLP
        + """class PreLNBlock:
    def __init__(self, norm, attn, ffn):
        self.norm, self.attn, self.ffn = norm, attn, ffn

    def __call__(self, x, params, n_heads=1, use_attention=True):
        p = params
        h = x
        if use_attention:
            h = x + self.attn(self.norm(x, p.get("gamma_1"), p.get("beta_1")), """
        + ATT
        + """, n_heads)
        return h + self.ffn(self.norm(h, p.get("gamma_2"), p.get("beta_2")), p["W_1"], p["W_2"])


block = PreLNBlock(layernorm, attention, mlp)
"""
    },
    # debugging prints left in
    "debug_prints": {
        "block": HEAD
        + """def mlp(u, W_1, W_2):
    a = u @ W_1
    print("mlp: hidden", a.shape)
    return gelu(a) @ W_2


def block(x, params, n_heads=1, use_attention=True):
    p = params
    print("block:", x.shape, "heads", n_heads, "attention", use_attention)
    h = x
    if use_attention:
        h = x + attention(layernorm(x, p.get("gamma_1"), p.get("beta_1")), """
        + ATT
        + """, n_heads)
        print("after attention, mean", h.mean())
    return h + mlp(layernorm(h, p.get("gamma_2"), p.get("beta_2")), p["W_1"], p["W_2"])
"""
    },
    # a module of the student's own, not the course's, that imports the components
    "helper_module_of_its_own": {
        "layers": "from gelu import gelu\n\n\ndef linear(x, W):\n    return x @ W\n\n\n"
        "def ffn(u, W_1, W_2):\n    return linear(gelu(linear(u, W_1)), W_2)\n",
        "block": HEAD
        + "from layers import ffn\n\n\ndef mlp(u, W_1, W_2):\n    return ffn(u, W_1, W_2)\n\n\n"
        + BODY,
    },
    # (l) a helper of the student's own, defined in a component's module and imported by the block
    "helper_linear_from_attention": {
        "attention": ref(THE_BLOCK, "attention") + LINEAR,
        "block": HEAD.replace(
            "from attention import attention", "from attention import attention, linear"
        )
        + "def mlp(u, W_1, W_2):\n    return linear(gelu(linear(u, W_1)), W_2)\n\n\n"
        + BODY,
    },
    "helper_split_heads_from_attention": {
        "attention": ref(THE_BLOCK, "attention") + SPLIT_HEADS,
        "block": HEAD.replace(
            "from attention import attention", "from attention import attention, split_heads"
        )
        + MLP
        + """def block(x, params, n_heads=1, use_attention=True):
    p = params
    h = x
    if use_attention:
        u = layernorm(x, p.get("gamma_1"), p.get("beta_1"))
        heads = zip(*(split_heads(p[k], n_heads) for k in ("W_q", "W_k", "W_v")), split_heads(p["W_o"], n_heads, rows=True))
        h = x + sum(attention(u, w_q, w_k, w_v, w_o) for w_q, w_k, w_v, w_o in heads)
    return h + mlp(layernorm(h, p.get("gamma_2"), p.get("beta_2")), p["W_1"], p["W_2"])
""",
    },
    "helper_linear_star_import": {
        "attention": ref(THE_BLOCK, "attention") + LINEAR,
        "block": "from attention import *  # noqa: F403\nfrom gelu import gelu\nfrom layernorm "
        "import layernorm\n\n\n"
        "def mlp(u, W_1, W_2):\n    return linear(gelu(linear(u, W_1)), W_2)  # noqa: F405\n\n\n"
        + BODY,
    },
    "helper_layernorm_class": {
        "layernorm": ref(THE_BLOCK, "layernorm") + LN_CLASS,
        "block": HEAD.replace("from layernorm import layernorm", "from layernorm import LayerNorm")
        + MLP
        + """def block(x, params, n_heads=1, use_attention=True):
    p = params
    ln_1, ln_2 = LayerNorm(p.get("gamma_1"), p.get("beta_1")), LayerNorm(p.get("gamma_2"), p.get("beta_2"))
    h = x
    if use_attention:
        h = x + attention(ln_1(x), """
        + ATT
        + """, n_heads)
    return h + mlp(ln_2(h), p["W_1"], p["W_2"])
""",
    },
    "helper_ffn_from_gelu": {
        "gelu": ref(THE_BLOCK, "gelu") + FFN_IN_GELU,
        "block": HEAD.replace("from gelu import gelu", "from gelu import ffn")
        + "def mlp(u, W_1, W_2):\n    return ffn(u, W_1, W_2)\n\n\n"
        + BODY,
    },
    "helper_feed_forward_default_act_from_gelu": {
        "gelu": ref(THE_BLOCK, "gelu") + FFN_ACT_IN_GELU,
        "block": HEAD.replace("from gelu import gelu", "from gelu import feed_forward")
        + "mlp = feed_forward\n\n\n"
        + BODY,
    },
}

# ================================================================================================
# the-modern-block

MHEAD = (
    "import numpy as np\nfrom gqa import gqa_attention\nfrom rmsnorm import rmsnorm\nfrom swiglu "
    "import swiglu\n\n\n"
)
GQA = 'p["W_q"], p["W_k"], p["W_v"], p["W_o"], n_heads, n_kv_heads'
MBODY = (
    """def modern_block(x, params, n_heads, n_kv_heads, use_attention=True):
    p = params
    h = x
    if use_attention:
        h = x + gqa_attention(rmsnorm(x, p.get("gain_1")), """
    + GQA
    + """)
    return h + swiglu(rmsnorm(h, p.get("gain_2")), p["W_1"], p["W_3"], p["W_2"])
"""
)
MDEF = "def modern_block(x, params, n_heads, n_kv_heads, use_attention=True):\n"

MODERN_SHAPES: dict[str, Files] = {
    "rmsnorm_row_by_row": {
        "modern_block": MHEAD
        + MDEF
        + """    p = params
    h = x
    if use_attention:
        u = np.stack([rmsnorm(row, p.get("gain_1")) for row in x])
        h = x + gqa_attention(u, """
        + GQA
        + """)
    u = np.stack([rmsnorm(row, p.get("gain_2")) for row in h])
    return h + swiglu(u, p["W_1"], p["W_3"], p["W_2"])
"""
    },
    "rmsnorm_apply_along_axis": {
        "modern_block": MHEAD
        + MBODY.replace(
            'rmsnorm(x, p.get("gain_1"))', 'np.apply_along_axis(rmsnorm, 1, x, p.get("gain_1"))'
        ).replace(
            'rmsnorm(h, p.get("gain_2"))', 'np.apply_along_axis(rmsnorm, 1, h, p.get("gain_2"))'
        )
    },
    "swiglu_token_by_token": {
        "modern_block": MHEAD
        + MDEF
        + """    p = params
    h = x
    if use_attention:
        h = x + gqa_attention(rmsnorm(x, p.get("gain_1")), """
        + GQA
        + """)
    u = rmsnorm(h, p.get("gain_2"))
    return h + np.concatenate([swiglu(u[i:i + 1], p["W_1"], p["W_3"], p["W_2"]) for i in range(len(u))])
"""
    },
    "silu_vectorize_inline": {
        "modern_block": MHEAD.replace("from swiglu import swiglu", "from swiglu import silu")
        + MDEF
        + """    p = params
    h = x
    if use_attention:
        h = x + gqa_attention(rmsnorm(x, p.get("gain_1")), """
        + GQA
        + """)
    u = rmsnorm(h, p.get("gain_2"))
    gate = np.vectorize(silu)(u @ p["W_1"])   # one number at a time
    return h + (gate * (u @ p["W_3"])) @ p["W_2"]
"""
    },
    # (b) K/V heads repeated into the weights: ordinary multi-head attention, n_kv_heads = n_heads
    "kv_heads_repeated_into_weights": {
        "modern_block": MHEAD
        + '''def repeat_kv(W, n_heads, n_kv_heads):
    """W_k or W_v with each K/V head's columns repeated for its group of query heads (Llama's repeat_kv, on W)."""
    d, width = W.shape
    d_head = width // n_kv_heads
    return np.repeat(W.reshape(d, n_kv_heads, d_head), n_heads // n_kv_heads, axis=1).reshape(d, n_heads * d_head)


'''
        + MDEF
        + """    p = params
    h = x
    if use_attention:
        W_k, W_v = (repeat_kv(p[k], n_heads, n_kv_heads) for k in ("W_k", "W_v"))
        h = x + gqa_attention(rmsnorm(x, p.get("gain_1")), p["W_q"], W_k, W_v, p["W_o"], n_heads, n_heads)
    return h + swiglu(rmsnorm(h, p.get("gain_2")), p["W_1"], p["W_3"], p["W_2"])
"""
    },
    "batch_of_one": {
        "modern_block": MHEAD
        + MDEF
        + """    p = params
    x = x[None]                         # (B, T, C), B = 1
    h = x
    if use_attention:
        h = x + gqa_attention(rmsnorm(x, p.get("gain_1"))[0], """
        + GQA
        + """)[None]
    return (h + swiglu(rmsnorm(h, p.get("gain_2")), p["W_1"], p["W_3"], p["W_2"]))[0]
"""
    },
    # (c)
    "default_arguments": {
        "modern_block": MHEAD
        + """def modern_block(x, params, n_heads, n_kv_heads, use_attention=True, norm=rmsnorm, attn=gqa_attention,
                 ffn=swiglu):
    p = params
    h = x
    if use_attention:
        h = x + attn(norm(x, p.get("gain_1")), """
        + GQA
        + """)
    return h + ffn(norm(h, p.get("gain_2")), p["W_1"], p["W_3"], p["W_2"])
"""
    },
    # (d)
    "class_staticmethods": {
        "modern_block": MHEAD
        + """class Llama:
    norm = staticmethod(rmsnorm)
    attention = staticmethod(gqa_attention)
    feed_forward = staticmethod(swiglu)


"""
        + MDEF
        + """    p = params
    h = x
    if use_attention:
        h = x + Llama.attention(Llama.norm(x, p.get("gain_1")), """
        + GQA
        + """)
    return h + Llama.feed_forward(Llama.norm(h, p.get("gain_2")), p["W_1"], p["W_3"], p["W_2"])
"""
    },
    "llama_transformer_block": {
        "modern_block": "import functools\n\n"
        + MHEAD
        + '''class TransformerBlock:
    """Meta's llama TransformerBlock, in numpy: attention_norm, attention, ffn_norm, feed_forward."""

    def __init__(self, params, n_heads, n_kv_heads):
        self.attention_norm = functools.partial(rmsnorm, gain=params.get("gain_1"))
        self.ffn_norm = functools.partial(rmsnorm, gain=params.get("gain_2"))
        self.attention = functools.partial(gqa_attention, W_q=params["W_q"], W_k=params["W_k"], W_v=params["W_v"],
                                           W_o=params["W_o"], n_heads=n_heads, n_kv_heads=n_kv_heads)
        self.feed_forward = functools.partial(swiglu, W_1=params["W_1"], W_3=params["W_3"], W_2=params["W_2"])

    def forward(self, x, use_attention=True):
        h = x + self.attention(self.attention_norm(x)) if use_attention else x
        return h + self.feed_forward(self.ffn_norm(h))


'''
        + MDEF
        + "    return TransformerBlock(params, n_heads, n_kv_heads).forward(x, use_attention)\n"
    },
    # (e)
    "module_partials": {
        "modern_block": "from functools import partial\n\n"
        + MHEAD
        + """norm = partial(rmsnorm, eps=1e-6)
causal_gqa = partial(gqa_attention, causal=True)


"""
        + MDEF
        + """    p = params
    h = x
    if use_attention:
        h = x + causal_gqa(norm(x, p.get("gain_1")), """
        + GQA
        + """)
    return h + swiglu(norm(h, gain=p.get("gain_2")), p["W_1"], p["W_3"], p["W_2"])
"""
    },
    # (f)
    "dict_of_functions": {
        "modern_block": MHEAD
        + """OPS = {"norm": rmsnorm, "attention": gqa_attention, "mlp": swiglu}


"""
        + MDEF
        + """    p = params
    h = x
    if use_attention:
        h = x + OPS["attention"](OPS["norm"](x, p.get("gain_1")), """
        + GQA
        + """)
    return h + OPS["mlp"](OPS["norm"](h, p.get("gain_2")), p["W_1"], p["W_3"], p["W_2"])
"""
    },
    # (g)
    "closure_residuals": {
        "modern_block": MHEAD
        + '''def residual(f):
    """x -> x + f(x): a residual connection around a sublayer."""
    def wrapped(x, *args):
        return x + f(x, *args)
    return wrapped


'''
        + MDEF
        + """    p = params
    attn = residual(lambda t: gqa_attention(rmsnorm(t, p.get("gain_1")), """
        + GQA
        + """))
    ffn = residual(lambda t: swiglu(rmsnorm(t, p.get("gain_2")), p["W_1"], p["W_3"], p["W_2"]))
    h = attn(x) if use_attention else x
    return ffn(h)
"""
    },
    # (h)
    "module_aliases": {
        "modern_block": """import gqa as A
import rmsnorm as norms
import swiglu as mlps


"""
        + MDEF
        + """    p = params
    h = x
    if use_attention:
        h = x + A.gqa_attention(norms.rmsnorm(x, p.get("gain_1")), """
        + GQA
        + """)
    return h + mlps.swiglu(norms.rmsnorm(h, p.get("gain_2")), p["W_1"], p["W_3"], p["W_2"])
"""
    },
    "star_imports": {
        "modern_block": "from gqa import *  # noqa: F403\nfrom rmsnorm import *  # noqa: F403\n"
        "from swiglu import *  # noqa: F403\n\n\n" + MBODY
    },
    # (i) einsum, the MLP written out with silu
    "einsum_with_silu": {
        "modern_block": MHEAD.replace("from swiglu import swiglu", "from swiglu import silu")
        + MDEF
        + """    p = params
    h = x
    if use_attention:
        h = x + gqa_attention(rmsnorm(x, p.get("gain_1")), """
        + GQA
        + """)
    u = rmsnorm(h, p.get("gain_2"))
    gate, value = np.einsum("td,df->tf", u, p["W_1"]), np.einsum("td,df->tf", u, p["W_3"])
    return h + np.einsum("tf,fd->td", silu(gate) * value, p["W_2"])
"""
    },
    "keyword_calls": {
        "modern_block": MHEAD
        + MDEF
        + """    p = params
    h = x
    if use_attention:
        u = rmsnorm(x=x, gain=p.get("gain_1"))
        h = x + gqa_attention(u=u, W_q=p["W_q"], W_k=p["W_k"], W_v=p["W_v"], W_o=p["W_o"], n_heads=n_heads,
                              n_kv_heads=n_kv_heads, causal=True)
    return h + swiglu(u=rmsnorm(x=h, gain=p.get("gain_2")), W_1=p["W_1"], W_3=p["W_3"], W_2=p["W_2"])
"""
    },
    # (k)
    "loops_row_by_row": {
        "modern_block": MHEAD
        + MDEF
        + """    p = params
    h = x
    if use_attention:
        h = x + gqa_attention(rmsnorm(x, p.get("gain_1")), """
        + GQA
        + """)
    y = np.empty_like(h)
    for t in range(h.shape[0]):
        y[t] = h[t] + swiglu(rmsnorm(h[t][None, :], p.get("gain_2")), p["W_1"], p["W_3"], p["W_2"])[0]
    return y
"""
    },
    "imports_inside_the_function": {
        "modern_block": MDEF
        + """    from gqa import gqa_attention as attn
    from rmsnorm import rmsnorm as norm
    from swiglu import swiglu as ffn

    p = params
    h = x + attn(norm(x, p.get("gain_1")), """
        + GQA
        + """) if use_attention else x
    return h + ffn(norm(h, p.get("gain_2")), p["W_1"], p["W_3"], p["W_2"])
"""
    },
    # (l)
    "helper_linear_from_swiglu": {
        "swiglu": ref(MODERN, "swiglu") + LINEAR,
        "modern_block": MHEAD.replace(
            "from swiglu import swiglu", "from swiglu import linear, silu"
        )
        + MDEF
        + """    p = params
    h = x
    if use_attention:
        h = x + gqa_attention(rmsnorm(x, p.get("gain_1")), """
        + GQA
        + """)
    u = rmsnorm(h, p.get("gain_2"))
    return h + linear(silu(linear(u, p["W_1"])) * linear(u, p["W_3"]), p["W_2"])
""",
    },
}

CHEAD = "from swiglu import swiglu_width\n\n\n"
CDEF = (
    "def count_model(d_model, n_heads, n_kv_heads, n_layers, vocab_size, d_ff=None, tied=False):\n"
)
# the end of a count_model that has d, d_head and d_ff
CTAIL = """    attention = 2 * d * d + 2 * d * n_kv_heads * d_head
    mlp, norm = 3 * d * d_ff, 2 * d
    block = attention + mlp + norm
    counts = {"attention": attention, "mlp": mlp, "norm": norm, "block": block, "blocks": n_layers * block,
              "embedding": vocab_size * d, "output": 0 if tied else vocab_size * d, "final_norm": d}
    counts["total"] = counts["blocks"] + counts["embedding"] + counts["output"] + counts["final_norm"]
    return counts
"""
FF_ARGS = '''

@dataclass
class FeedForwardArgs:
    """Llama's FeedForward arguments: the hidden width is swiglu_width(dim) unless given."""
    dim: int
    hidden_dim: int | None = None

    def __post_init__(self):
        if self.hidden_dim is None:
            self.hidden_dim = swiglu_width(self.dim)
'''
COUNT_SHAPES: dict[str, Files] = {
    # (j)
    "width_default_argument": {
        "model_params": CHEAD
        + """def count_model(d_model, n_heads, n_kv_heads, n_layers, vocab_size, d_ff=None, tied=False,
                width=swiglu_width):
    d, d_head = d_model, d_model // n_heads
    d_ff = width(d) if d_ff is None else d_ff
"""
        + CTAIL
    },
    "module_attribute": {
        "model_params": "import swiglu\n\n\n"
        + CDEF
        + """    d, d_head = d_model, d_model // n_heads
    d_ff = d_ff or swiglu.swiglu_width(d)
"""
        + CTAIL
    },
    "model_args_dataclass": {
        "model_params": "from dataclasses import dataclass\n\n"
        + CHEAD
        + '''@dataclass
class ModelArgs:
    """Meta's ModelArgs, the fields count_model needs."""
    dim: int
    n_heads: int
    n_kv_heads: int
    n_layers: int
    vocab_size: int
    hidden_dim: int | None = None
    tied: bool = False

    def __post_init__(self):
        if self.hidden_dim is None:
            self.hidden_dim = swiglu_width(self.dim)

    @property
    def head_dim(self):
        return self.dim // self.n_heads


'''
        + CDEF
        + """    a = ModelArgs(d_model, n_heads, n_kv_heads, n_layers, vocab_size, d_ff, tied)
    d, d_head, d_ff = a.dim, a.head_dim, a.hidden_dim
"""
        + CTAIL
    },
    # (f) and (k): a dict holding the default, the weights' shapes counted in a loop
    "weight_shapes_loop": {
        "model_params": "import math\n\n"
        + CHEAD
        + """DEFAULTS = {"d_ff": swiglu_width}


"""
        + CDEF
        + """    d_ff = DEFAULTS["d_ff"](d_model) if d_ff is None else d_ff
    d_head = d_model // n_heads
    kv = n_kv_heads * d_head
    shapes = {"attention": [(d_model, d_model), (d_model, kv), (d_model, kv), (d_model, d_model)],
              "mlp": [(d_model, d_ff), (d_model, d_ff), (d_ff, d_model)],
              "norm": [(d_model,), (d_model,)]}
    counts = {}
    for name, weights in shapes.items():
        counts[name] = 0
        for shape in weights:
            counts[name] += math.prod(shape)
    counts["block"] = counts["attention"] + counts["mlp"] + counts["norm"]
    counts["blocks"] = n_layers * counts["block"]
    counts["embedding"] = vocab_size * d_model
    counts["output"] = 0 if tied else vocab_size * d_model
    counts["final_norm"] = d_model
    counts["total"] = counts["blocks"] + counts["embedding"] + counts["output"] + counts["final_norm"]
    return counts
"""
    },
    # (d)
    "class_staticmethod": {
        "model_params": CHEAD
        + """class Llama:
    ffn_width = staticmethod(swiglu_width)


"""
        + CDEF
        + """    d, d_head = d_model, d_model // n_heads
    d_ff = Llama.ffn_width(d) if d_ff is None else d_ff
"""
        + CTAIL
    },
    # (g)
    "lambda_default": {
        "model_params": CHEAD
        + "default_width = lambda d: swiglu_width(d)  # noqa: E731\n\n\n"
        + CDEF
        + """    d, d_head = d_model, d_model // n_heads
    d_ff = default_width(d) if d_ff is None else d_ff
"""
        + CTAIL
    },
    "star_import": {
        "model_params": "from swiglu import *  # noqa: F403\n\n\n"
        + CDEF
        + """    d, d_head = d_model, d_model // n_heads
    d_ff = swiglu_width(d) if d_ff is None else d_ff  # noqa: F405
"""
        + CTAIL
    },
    # (l) Llama's dataclass of arguments, kept beside the width rule in swiglu.py (annotations
    # postponed)
    "helper_dataclass_from_swiglu": {
        "swiglu": ref(MODERN, "swiglu").replace(
            "import numpy as np\n",
            "from __future__ import annotations\n\n"
            "from dataclasses import dataclass\n\nimport numpy as np\n",
        )
        + FF_ARGS,
        "model_params": "from swiglu import FeedForwardArgs\n\n\n"
        + CDEF
        + """    d, d_head = d_model, d_model // n_heads
    d_ff = FeedForwardArgs(d, d_ff).hidden_dim
"""
        + CTAIL,
    },
    # numpy arithmetic, cast back to ints at the end; the width under another name
    "numpy_counts": {
        "model_params": "import numpy as np\nfrom swiglu import swiglu_width as hidden_dim\n\n\n"
        + CDEF
        + """    d, d_head = np.int64(d_model), d_model // n_heads
    d_ff = hidden_dim(d_model) if d_ff is None else d_ff
"""
        + CTAIL.replace(
            "    return counts\n", "    return {k: int(v) for k, v in counts.items()}\n"
        )
    },
}

SHAPES: dict[str, Shape] = {
    **{f"block-{n}": Shape(THE_BLOCK, f, ("block",)) for n, f in BLOCK_SHAPES.items()},
    **{f"modern-{n}": Shape(MODERN, f, ("modern_block",)) for n, f in MODERN_SHAPES.items()},
    **{f"count-{n}": Shape(MODERN, f, ("model_params",)) for n, f in COUNT_SHAPES.items()},
}

# ================================================================================================
# component faults


def block_fault(name: str, shape: str) -> Variant:
    """A fault of mutants.FAULTS (the-block's components) held by a correct block of SHAPES."""
    return Variant(f"block-{shape}", BLOCK_FAULTS[name].problem, BLOCK_FAULTS[name].edits)


RMS_MS = "ms = (x * x).mean(axis=-1, keepdims=True)"
RMS_RETURN = "return x / np.sqrt(ms + eps) * gain"
SILU_RETURN = "return x / (1 + np.exp(-x))"
WIDTH_RETURN = "return round(8 * d / 3 / 256) * 256 if d >= 256 else 8 * d // 3"
SWIGLU_RETURN = "return (silu(u @ W_1) * (u @ W_3)) @ W_2"
REPEAT = "k, v = (t.repeat(n_heads // n_kv_heads, axis=0) for t in (k, v))"
GQA_MASK = "scores = np.where(np.tri(n, dtype=bool), scores, -np.inf)"
GQA_Q = "q = (u @ W_q).reshape(n, n_heads, d_head)"
STUB = "raise NotImplementedError"
TORCH = [
    ("import numpy as np\n", "import numpy as np\nimport torch\n")
]  # not allowed in this course

FAULTS: dict[str, Variant] = {
    # the-block: layernorm
    "layernorm.ddof1": block_fault("layernorm.ddof1", "ln_row_by_row"),
    "ln_no_beta": block_fault("ln_no_beta", "ln_apply_along_axis"),
    "ln_stub": block_fault("ln_stub", "default_arguments"),
    "ln_syntax_error": block_fault("ln_syntax_error", "class_staticmethods"),
    "ln_missing": block_fault("ln_missing", "module_aliases"),
    "layernorm.eps": block_fault("layernorm.eps", "module_partials"),
    "ln_raises_at_import": block_fault("ln_raises_at_import", "star_imports"),
    "ln_exits": block_fault("ln_exits", "lambdas"),
    "layernorm.axis": block_fault("layernorm.axis", "batch_of_one"),
    "layernorm.no_mean_via_class": block_fault("layernorm.no_mean", "helper_layernorm_class"),
    # gelu
    "gelu.erf": block_fault("gelu.erf", "gelu_row_by_row"),
    "gelu_stub": block_fault("gelu_stub", "gelu_vectorize"),
    "gelu.relu": block_fault("gelu.relu", "gelu_token_by_token"),
    "gelu_syntax_error": block_fault("gelu_syntax_error", "dict_of_functions"),
    "gelu.constant": block_fault("gelu.constant", "einsum"),
    "gelu_quarter": block_fault("gelu_quarter", "wrapper_decorator"),
    "gelu_imports_torch": Variant("block-closure_factory", "gelu", {"gelu": TORCH}),
    "gelu_no_half_via_ffn": block_fault("gelu_no_half", "helper_ffn_from_gelu"),
    "gelu.erf_via_default_act": block_fault(
        "gelu.erf", "helper_feed_forward_default_act_from_gelu"
    ),
    "gelu_stub_with_prints": block_fault("gelu_stub", "debug_prints"),
    # softmax and attention
    "softmax.no_max": block_fault("softmax.no_max", "heads_as_single_head_sum"),
    "softmax_stub": block_fault("softmax_stub", "class_with_methods"),
    "softmax.axis": block_fault("softmax.axis", "helper_split_heads_from_attention"),
    "attention.no_mask": block_fault("attention.no_mask", "batch_of_one"),
    "att_no_w_o": block_fault("att_no_w_o", "closure_factory"),
    "att_pytorch_layout": block_fault("att_pytorch_layout", "picogpt_keywords"),
    "att_reversed_heads": block_fault("att_reversed_heads", "instance_attributes"),
    "attention.head_split": block_fault("attention.head_split", "loops_row_by_row"),
    "att_stub": block_fault("att_stub", "wrapper_decorator"),
    "att_syntax_error": block_fault("att_syntax_error", "importlib_registry"),
    "attention.mask_zero": block_fault("attention.mask_zero", "helper_linear_from_attention"),
    "att_modifies_input": block_fault("att_modifies_input", "module_aliases"),
    "attention.no_scale": block_fault("attention.no_scale", "star_imports"),
    "att_mask_minus_1000": block_fault("att_mask_minus_1000", "helper_module_of_its_own"),
    "gelu.sigmoid": block_fault("gelu.sigmoid", "mlp_partial_object"),
    "layernorm.no_affine": block_fault("layernorm.no_affine", "block_callable_instance"),
    # the-modern-block: rmsnorm
    "rmsnorm_mean_subtracted": Variant(
        "modern-rmsnorm_row_by_row",
        "rmsnorm",
        {
            "rmsnorm": [
                ("    " + RMS_MS, "    x = x - x.mean(axis=-1, keepdims=True)\n    " + RMS_MS)
            ]
        },
    ),
    "rmsnorm_axis_0": Variant(
        "modern-default_arguments", "rmsnorm", {"rmsnorm": [(RMS_MS, RMS_MS.replace("-1", "0"))]}
    ),
    "rmsnorm_ignores_gain": Variant(
        "modern-llama_transformer_block",
        "rmsnorm",
        {"rmsnorm": [("if gain is None else gain", "")]},
    ),
    "rmsnorm_eps_outside": Variant(
        "modern-rmsnorm_apply_along_axis",
        "rmsnorm",
        {"rmsnorm": [("np.sqrt(ms + eps)", "(np.sqrt(ms) + eps)")]},
    ),
    "rmsnorm_stub": Variant("modern-module_partials", "rmsnorm", {"rmsnorm": [(RMS_RETURN, STUB)]}),
    "rmsnorm_syntax_error": Variant(
        "modern-dict_of_functions",
        "rmsnorm",
        {
            "rmsnorm": [
                ("def rmsnorm(x, gain=None, eps=1e-6):", "def rmsnorm(x, gain=None, eps=1e-6)")
            ]
        },
    ),
    "rmsnorm_missing": Variant("modern-module_aliases", "rmsnorm", {"rmsnorm": DELETE}),
    # swiglu: silu, swiglu, swiglu_width
    "silu_sigmoid": Variant(
        "modern-swiglu_token_by_token",
        "swiglu",
        {"swiglu": [(SILU_RETURN, "return 1 / (1 + np.exp(-x))")]},
    ),
    "silu_raises": Variant(
        "modern-silu_vectorize_inline",
        "swiglu",
        {"swiglu": [(SILU_RETURN, "raise ValueError('silu')")]},
    ),
    "silu_relu": Variant(
        "modern-einsum_with_silu", "swiglu", {"swiglu": [(SILU_RETURN, "return np.maximum(x, 0)")]}
    ),
    "silu_sigmoid_via_linear": Variant(
        "modern-helper_linear_from_swiglu",
        "swiglu",
        {"swiglu": [(SILU_RETURN, "return 1 / (1 + np.exp(-x))")]},
    ),
    "swiglu_swapped": Variant(
        "modern-class_staticmethods",
        "swiglu",
        {"swiglu": [(SWIGLU_RETURN, "return (silu(u @ W_3) * (u @ W_1)) @ W_2")]},
    ),
    "swiglu_gate_outside": Variant(
        "modern-closure_residuals",
        "swiglu",
        {"swiglu": [(SWIGLU_RETURN, "return silu((u @ W_1) * (u @ W_3)) @ W_2")]},
    ),
    "swiglu_stub": Variant("modern-keyword_calls", "swiglu", {"swiglu": [(SWIGLU_RETURN, STUB)]}),
    "swiglu_transposed": Variant(
        "modern-batch_of_one",
        "swiglu",
        {"swiglu": [(SWIGLU_RETURN, "return (silu(u @ W_1.T) * (u @ W_3.T)) @ W_2.T")]},
    ),
    "swiglu_syntax_error": Variant(
        "count-weight_shapes_loop", "swiglu", {"swiglu": [("def silu(x):", "def silu(x)")]}
    ),
    "width_meta_rounding": Variant(
        "count-width_default_argument",
        "swiglu",
        {"swiglu": [(WIDTH_RETURN, "return 256 * ((int(8 * d / 3) + 255) // 256)")]},
    ),
    "width_stub": Variant("count-module_attribute", "swiglu", {"swiglu": [(WIDTH_RETURN, STUB)]}),
    "width_float": Variant(
        "count-model_args_dataclass", "swiglu", {"swiglu": [(WIDTH_RETURN, "return 8 * d / 3")]}
    ),
    "width_truncates": Variant(
        "count-class_staticmethod",
        "swiglu",
        {
            "swiglu": [
                (
                    WIDTH_RETURN,
                    WIDTH_RETURN.replace("round(8 * d / 3 / 256)", "int(8 * d / 3 / 256)"),
                )
            ]
        },
    ),
    "width_4d": Variant(
        "count-lambda_default", "swiglu", {"swiglu": [(WIDTH_RETURN, "return 4 * d")]}
    ),
    "swiglu_imports_torch": Variant("count-numpy_counts", "swiglu", {"swiglu": TORCH}),
    # gqa
    "gqa_tile": Variant(
        "modern-kv_heads_repeated_into_weights",
        "gqa",
        {"gqa": [(REPEAT, "k, v = (np.tile(t, (n_heads // n_kv_heads, 1, 1)) for t in (k, v))")]},
    ),
    "gqa_no_repeat": Variant(
        "modern-loops_row_by_row", "gqa", {"gqa": [(REPEAT, "k, v = k[:1], v[:1]")]}
    ),
    "gqa_scale_d_model": Variant(
        "modern-star_imports", "gqa", {"gqa": [("/ math.sqrt(d_head)", "/ math.sqrt(d)")]}
    ),
    "gqa_no_mask": Variant(
        "modern-keyword_calls", "gqa", {"gqa": [("    if causal:\n", "    if False:\n")]}
    ),
    "gqa_heads_interleaved": Variant(
        "modern-rmsnorm_row_by_row",
        "gqa",
        {"gqa": [(GQA_Q, "q = (u @ W_q).reshape(n, d_head, n_heads).transpose(0, 2, 1)")]},
    ),
    "gqa_mask_minus_1": Variant(
        "modern-dict_of_functions",
        "gqa",
        {"gqa": [(GQA_MASK, GQA_MASK.replace("-np.inf", "-1.0"))]},
    ),
    "gqa_stub": Variant(
        "modern-batch_of_one", "gqa", {"gqa": [("    n, d = u.shape\n", "    " + STUB + "\n")]}
    ),
    "gqa_imports_torch": Variant("modern-einsum_with_silu", "gqa", {"gqa": TORCH}),
    "gqa_transposed_w_o": Variant(
        "modern-imports_inside_the_function",
        "gqa",
        {"gqa": [("reshape(n, d) @ W_o", "reshape(n, d) @ W_o.T")]},
    ),
    "width_syntax_error_star": Variant(
        "count-star_import", "swiglu", {"swiglu": [("def swiglu_width(d):", "def swiglu_width(d)")]}
    ),
}

# ================================================================================================
# wrong dependents

WRONG: dict[str, Variant] = {
    "block_post_ln": Variant(
        "block-class_with_methods",
        "block",
        {
            "block": [
                (
                    "            x = x + self.attn(self.ln_1(x))",
                    "            x = self.ln_1(x + self.attn(x))",
                ),
                (
                    "        x = x + self.mlp(self.ln_2(x))",
                    "        x = self.ln_2(x + self.mlp(x))",
                ),
            ]
        },
    ),
    "block_no_attention_residual": Variant(
        "block-default_arguments", "block", {"block": [("h = x + attn(", "h = attn(")]}
    ),
    "mlp_no_gelu": Variant(
        "block-gelu_row_by_row",
        "block",
        {"block": [("np.stack([gelu(row) for row in a])", "np.stack([row for row in a])")]},
    ),
    "block_ignores_use_attention": Variant(
        "block-dict_of_functions",
        "block",
        {"block": [("    if use_attention:\n", "    if True:\n")]},
    ),
    "block_no_gamma_beta": Variant(
        "block-ln_row_by_row",
        "block",
        {
            "block": [
                ("layernorm(row, g1, b1)", "layernorm(row)"),
                ("layernorm(row, g2, b2)", "layernorm(row)"),
            ]
        },
    ),
    "modern_no_residual": Variant(
        "modern-module_partials",
        "modern_block",
        {"modern_block": [("    return h + swiglu(", "    return swiglu(")]},
    ),
    "modern_gains_swapped": Variant(
        "modern-llama_transformer_block",
        "modern_block",
        {
            "modern_block": [
                ('gain=params.get("gain_1")', 'gain=params.get("GAIN_2")'),
                ('gain=params.get("gain_2")', 'gain=params.get("gain_1")'),
                ('gain=params.get("GAIN_2")', 'gain=params.get("gain_2")'),
            ]
        },
    ),
    "count_tied_twice": Variant(
        "count-width_default_argument",
        "model_params",
        {"model_params": [('"output": 0 if tied else vocab_size * d', '"output": vocab_size * d')]},
    ),
    "count_ignores_n_kv_heads": Variant(
        "count-model_args_dataclass",
        "model_params",
        {"model_params": [("2 * d * n_kv_heads * d_head", "2 * d * d")]},
    ),
}

# ================================================================================================
# grading


def course_copy(root: Path) -> Path:
    """The project's course.json and what it reads (exercises, solutions, suites) in ``root``, its
    overrides files a header alone (the instructor's rows are no business of this test); returns the
    copy's course.json."""
    data = json.loads((PROJECT / "course.json").read_text())
    folders = ["exercises", "solutions"] + [
        f"tests/{a}/{s}" for a in ASSIGNMENTS for s in ("public", "hidden")
    ]
    for folder in folders:
        shutil.copytree(
            PROJECT / folder, root / folder, ignore=shutil.ignore_patterns("__pycache__")
        )
    for assignment in data["assignments"]:
        if assignment.get("overrides"):
            (root / assignment["overrides"]).parent.mkdir(parents=True, exist_ok=True)
            (root / assignment["overrides"]).write_text(
                "student,kind,problem,points,due,reason,by\n"
            )
    shutil.copy(PROJECT / "course.json", root / "course.json")
    return root / "course.json"


def write(folder: Path, assignment: str, *layers: Files) -> Path:
    """The reference's modules of ``assignment`` in ``folder``, then each layer's files written or
    edited."""
    folder.mkdir(parents=True)
    for module in COURSE[assignment].modules:
        shutil.copyfile(
            PROJECT / "solutions" / assignment / f"{module}.py", folder / f"{module}.py"
        )
    for layer in layers:
        for module, change in layer.items():
            target = folder / f"{module}.py"
            if change is DELETE:
                target.unlink()
            elif isinstance(change, str):
                target.write_text(change)
            else:
                text = target.read_text()
                for old, new in change:
                    assert old in text, f"{folder.name}: {old!r} is not in {module}.py"
                    text = text.replace(old, new)
                target.write_text(text)
    return folder


def points(doc: dict) -> dict[str, float]:
    return {p["name"]: p["score"] for p in doc["problems"]}


def failures(doc: dict, problems=None) -> list:
    return [
        (t["problem"], t["name"], t["output"][:400])
        for t in doc["tests"]
        if t["status"] != "passed" and (problems is None or t["problem"] in problems)
    ]


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> dict[str, dict]:
    """Every submission of this module graded: one `grade autograde --jobs 2` run per assignment."""
    root = tmp_path_factory.mktemp("shapes")
    course = course_copy(root / "course")
    docs = {}
    for assignment in ASSIGNMENTS:
        subs = root / assignment
        write(subs / "reference", assignment)
        for name, shape in SHAPES.items():
            if shape.assignment == assignment:
                write(subs / name, assignment, shape.files)
        for kind, variants in (("fault", FAULTS), ("wrong", WRONG)):
            for name, variant in variants.items():
                shape = SHAPES[variant.shape]
                if shape.assignment == assignment:
                    write(subs / f"{kind}-{name}", assignment, shape.files, variant.edits)
        out = root / f"{assignment}-out"
        code, output = grade(
            "autograde",
            "--course",
            course,
            "-a",
            assignment,
            subs,
            "--out",
            out,
            "--jobs",
            2,
            "--quiet",
        )
        assert code == 0, output
        found = {p.stem: json.loads(p.read_text()) for p in out.glob("*.json")}
        reference = found.pop("reference")
        assert reference["score"] == reference["max_score"], failures(reference)
        docs[f"reference-{assignment}"] = reference
        docs.update(found)
    return docs


def check_folders(assignment: str) -> list[list[str]]:
    """The shapes of ``assignment`` grouped into as few submissions as `grade check` needs: shapes
    that write different modules (a modern block and a count function) share one."""
    folders: list[list[str]] = []
    for name, shape in SHAPES.items():
        if shape.assignment != assignment:
            continue
        free = [f for f in folders if not any(set(SHAPES[n].files) & set(shape.files) for n in f)]
        if free:
            free[0].append(name)
        else:
            folders.append([name])
    return folders


@pytest.fixture(scope="module")
def checked(tmp_path_factory) -> dict[str, tuple[dict, set]]:
    """Every correct shape checked as its student checks it: `grade check` with the public suites of
    a fresh release (no reference anywhere: its components are the student's own, here correct
    ones). shape -> the score file of its submission, and the problems of the other shapes in it
    (theirs to answer for)."""
    root = tmp_path_factory.mktemp("shapes-release")
    jobs = []
    for assignment in ASSIGNMENTS:
        release = root / assignment / "release"
        code, output = grade(
            "release",
            "--course",
            PROJECT / "course.json",
            "-a",
            assignment,
            "--out",
            release,
            "--nbgrader-dir",
            root / assignment / "nbgrader",
        )
        assert code == 0, output
        assert not (release / "solutions").exists() and not (release / "tests" / "hidden").exists()
        for i, names in enumerate(check_folders(assignment)):
            folder = write(
                root / "subs" / f"{assignment}-{i}", assignment, *(SHAPES[n].files for n in names)
            )
            jobs.append((names, release / "course.json", folder))

    def check(job):
        names, course, folder = job
        out = folder.with_suffix(".json")
        _, output = grade("check", "--course", course, "--path", folder, "--json", out)
        doc = json.loads(out.read_text()) if out.is_file() else {"error": output}
        return {n: (doc, {p for m in names if m != n for p in SHAPES[m].problems}) for n in names}

    with ThreadPoolExecutor(2) as pool:
        return {n: found for result in pool.map(check, jobs) for n, found in result.items()}


# ================================================================================================
# tests


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_a_correct_shape_gets_full_marks_in_autograde(graded, name):
    doc = graded[name]
    assert doc["status"] == "graded", doc.get("error")
    assert doc["score"] == doc["max_score"], failures(doc)


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_a_correct_shape_gets_full_public_marks_in_a_release(checked, name):
    doc, others = checked[name]
    assert doc.get("status") == "graded", doc.get("error")
    lost = {p["name"] for p in doc["problems"] if p["score"] < p["max_score"]} - others
    assert not lost, failures(doc, lost)


@pytest.mark.parametrize("name", sorted(FAULTS))
def test_a_component_fault_costs_only_its_own_problem(graded, name):
    variant = FAULTS[name]
    doc, reference = (
        graded[f"fault-{name}"],
        graded[f"reference-{SHAPES[variant.shape].assignment}"],
    )
    assert doc["status"] == "graded", doc.get("error")
    mine, theirs = points(doc), points(reference)
    assert mine[variant.problem] < theirs[variant.problem], f"no test of {variant.problem} fails"
    others = {p for p in theirs if p != variant.problem and mine[p] != theirs[p]}
    assert not others, failures(doc, others)


@pytest.mark.parametrize("name", sorted(WRONG))
def test_a_wrong_dependent_function_loses_its_own_points(graded, name):
    variant = WRONG[name]
    doc, reference = (
        graded[f"wrong-{name}"],
        graded[f"reference-{SHAPES[variant.shape].assignment}"],
    )
    mine, theirs = points(doc), points(reference)
    assert mine[variant.problem] < theirs[variant.problem], (
        f"{name}: no test of {variant.problem} fails"
    )
    others = {p for p in theirs if p != variant.problem and mine[p] != theirs[p]}
    assert not others, failures(doc, others)


def test_the_measurement_covers_both_assignments_and_every_dependent_problem():
    for assignment in ASSIGNMENTS:
        shapes = [s for s in SHAPES.values() if s.assignment == assignment]
        faults = [v for v in FAULTS.values() if SHAPES[v.shape].assignment == assignment]
        assert len(shapes) >= 15 and len(faults) >= 15, assignment
    assert len(SHAPES) >= 30 and len(FAULTS) >= 30
    assert {p for s in SHAPES.values() for p in s.problems} == {
        "block",
        "modern_block",
        "model_params",
    }
