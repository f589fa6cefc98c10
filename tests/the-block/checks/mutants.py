"""Students' mistakes written into copies of the reference: one submission per known mistake of the
course (MUTANTS), and the single faults the fairness measurement grades (FAULTS: those and others,
not catalogued).

Each entry is a textual change to a solution module, written the way a student would write the
mistake and independently of the catalogue's variants (solutions/mistakes.py), so that a variant
that models its mistake wrongly shows up as a mutant with no diagnosis.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field, replace
from pathlib import Path

from grader.course.manifest import load

PROJECT = Path(__file__).resolve().parents[3]
SOLUTIONS = PROJECT / "solutions" / "the-block"
MODULES = load(
    PROJECT / "course.json", "the-block"
).modules  # a copy of the reference holds them all

ERF = "0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))"
POST_LN = """    p = params
    h = x
    if use_attention:
        h = layernorm(x + attention(x, p["W_q"], p["W_k"], p["W_v"], p["W_o"], n_heads), p.get("gamma_1"), p.get("beta_1"))
    return layernorm(h + mlp(h, p["W_1"], p["W_2"]), p.get("gamma_2"), p.get("beta_2"))
"""
SPLIT_BY_RESHAPE = """    qh, kh, vh = (t.reshape(n_heads, -1, d_head) for t in (q, k, v))
    out = [attend(qh[h], kh[h], vh[h], causal) for h in range(n_heads)]
    return np.stack(out).reshape(-1, d_model) @ W_o
"""
LN_RETURN = "return gamma * (x - mean) / np.sqrt(var + eps) + beta"
GELU_RETURN = "0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))"
GPT2_RETURN = (
    "return 4 * d_model**2 + 4 * d_model, 2 * d_model * d_ff + d_ff + d_model, 4 * d_model"
)

# mistake id -> (module, [(old, new), ...])
MUTANTS: dict[str, tuple[str, list[tuple[str, str]]]] = {
    "layernorm.ddof1": (
        "layernorm",
        [("x.var(axis=-1, keepdims=True)", "x.var(axis=-1, keepdims=True, ddof=1)")],
    ),
    "layernorm.eps_outside": ("layernorm", [("np.sqrt(var + eps)", "(np.sqrt(var) + eps)")]),
    "layernorm.no_eps": ("layernorm", [("np.sqrt(var + eps)", "np.sqrt(var)")]),
    "layernorm.axis": (
        "layernorm",
        [("x.mean(axis=-1", "x.mean(axis=0"), ("x.var(axis=-1", "x.var(axis=0")],
    ),
    "layernorm.no_affine": ("layernorm", [(LN_RETURN, "return (x - mean) / np.sqrt(var + eps)")]),
    "layernorm.no_mean": (
        "layernorm",
        [(LN_RETURN, "return gamma * x / np.sqrt(var + eps) + beta")],
    ),
    "gelu.erf": ("gelu", [(GELU_RETURN, ERF)]),
    "gelu.sigmoid": ("gelu", [(GELU_RETURN, "x / (1 + np.exp(-1.702 * x))")]),
    "gelu.constant": ("gelu", [("0.044715", "0.47")]),
    "gelu.rounded": ("gelu", [("math.sqrt(2 / math.pi)", "0.798"), ("0.044715", "0.0447")]),
    "gelu.relu": ("gelu", [(GELU_RETURN, "np.maximum(x, 0)")]),
    "softmax.no_max": ("attention", [("np.exp(s - s.max(axis=axis, keepdims=True))", "np.exp(s)")]),
    "softmax.axis": ("attention", [("axis=axis", "axis=-1")]),
    "attention.mask_diagonal": (
        "attention",
        [("np.tri(n, dtype=bool)", "np.tri(n, k=-1, dtype=bool)")],
    ),
    "attention.mask_leak": ("attention", [("np.tri(n, dtype=bool)", "np.tri(n, k=1, dtype=bool)")]),
    "attention.no_mask": ("attention", [("    if causal:\n", "    if False:\n")]),
    "attention.mask_zero": ("attention", [("scores, -np.inf)", "scores, 0.0)")]),
    "attention.scale_d_model": (
        "attention",
        [("q, k, v = u @ W_q,", "q, k, v = u @ W_q * math.sqrt(d_head / d_model),")],
    ),
    "attention.no_scale": ("attention", [(" / math.sqrt(q.shape[-1])", "")]),
    "attention.head_split": (
        "attention",
        [
            (
                "    heads = [slice(h * d_head, (h + 1) * d_head) for h in range(n_heads)]\n"
                "    out = [attend(q[..., s], k[..., s], v[..., s], causal) for s in heads]  # "
                "n_heads x (n, d_head)\n"
                "    return np.concatenate(out, axis=-1) @ W_o  # (n, d_model) @ (d_model, "
                "d_model) -> (n, d_model)\n",
                SPLIT_BY_RESHAPE,
            )
        ],
    ),
    "block.post_ln": (
        "block",
        [
            (
                """    p = params
    h = x
    if use_attention:
        u = layernorm(x, p.get("gamma_1"), p.get("beta_1"))  # (n, d_model) -> (n, d_model)
        h = x + attention(u, p["W_q"], p["W_k"], p["W_v"], p["W_o"], n_heads)  # (n, d_model)
    u = layernorm(h, p.get("gamma_2"), p.get("beta_2"))  # (n, d_model) -> (n, d_model)
    return h + mlp(u, p["W_1"], p["W_2"])  # (n, d_model) -> (n, d_model)
""",
                POST_LN,
            )
        ],
    ),
    "block.no_residual_attention": ("block", [("h = x + attention(", "h = attention(")]),
    "block.no_residual_mlp": ("block", [("return h + mlp(", "return mlp(")]),
    "block.residual_from_normalised": ("block", [("h = x + attention(", "h = u + attention(")]),
    "block.ignores_use_attention": ("block", [("if use_attention:", "if True:")]),
    "block.no_gamma_beta": (
        "block",
        [
            ('layernorm(x, p.get("gamma_1"), p.get("beta_1"))', "layernorm(x)"),
            ('layernorm(h, p.get("gamma_2"), p.get("beta_2"))', "layernorm(h)"),
        ],
    ),
    "block.no_n_heads": ("block", [('p["W_o"], n_heads)', 'p["W_o"])')]),
    "mlp.no_gelu": ("block", [("return gelu(u @ W_1) @ W_2", "return u @ W_1 @ W_2")]),
    "mlp.relu": (
        "block",
        [("return gelu(u @ W_1) @ W_2", "h = u @ W_1\n    return (h * (h > 0)) @ W_2")],
    ),
    "params.no_bias": (
        "params",
        [(GPT2_RETURN, "return 4 * d_model**2, 2 * d_model * d_ff, 4 * d_model")],
    ),
    "params.no_beta": (
        "params",
        [(GPT2_RETURN, GPT2_RETURN[: -len("4 * d_model")] + "2 * d_model")],
    ),
    "params.n_kv_heads": (
        "params",
        [("n_kv_heads = n_heads if n_kv_heads is None else n_kv_heads", "n_kv_heads = n_heads")],
    ),
    "params.gpt2_d_ff": (
        "params",
        [
            (
                "d_ff = 4 * d_model if d_ff is None else d_ff",
                "d_ff = swiglu_width(d_model) if d_ff is None else d_ff",
            )
        ],
    ),
    # truncation (int() rounds down): rounding half up cannot be told from Meta's ceil on any input
    # (where it
    # differs from round, at x.5 with x even, so does ceil), so no call may name it alone
    "params.rounding": ("params", [("round(8 * d_model / 3 / 256)", "int(8 * d_model / 3 / 256)")]),
    # the new mistakes, each written differently from its uncatalogued twin in FAULTS below
    "layernorm.no_beta": (
        "layernorm",
        [
            (
                "beta = np.zeros(x.shape[-1], dtype=x.dtype) if beta is None else beta",
                "beta = np.zeros(x.shape[-1], dtype=x.dtype)",
            )
        ],
    ),
    "layernorm.rms": (
        "layernorm",
        [
            (
                LN_RETURN,
                "return gamma * x / np.sqrt(np.mean(x**2, axis=-1, keepdims=True) + eps) + beta",
            )
        ],
    ),
    "layernorm.eps_after": ("layernorm", [("np.sqrt(var + eps)", "np.sqrt(var) + eps")]),
    "layernorm.eps": ("layernorm", [("eps=1e-5", "eps=1e-3")]),  # Keras's default
    "gelu.no_half": (
        "gelu",
        [(GELU_RETURN, GELU_RETURN.replace("0.5 * x * (1 + np.tanh", "(x + x * np.tanh"))],
    ),
    "gelu.square": ("gelu", [("0.044715 * x**3", "0.044715 * x * x")]),
    "softmax.no_keepdims": (
        "attention",
        [("e.sum(axis=axis, keepdims=True)", "np.sum(e, axis=axis)")],
    ),
    "attention.scale_d_head": ("attention", [(" / math.sqrt(q.shape[-1])", " / len(q[0])")]),
    "attention.head_interleaved": (
        "attention",
        [
            (
                "    heads = [slice(h * d_head, (h + 1) * d_head) for h in range(n_heads)]\n"
                "    out = [attend(q[..., s], k[..., s], v[..., s], causal) for s in heads]  # "
                "n_heads x (n, d_head)\n",
                "    qh, kh, vh = (t.reshape(-1, d_head, n_heads) for t in (q, k, v))\n"
                "    out = [attend(qh[..., h], kh[..., h], vh[..., h], causal) for h in "
                "range(n_heads)]\n",
            )
        ],
    ),
    "attention.heads_reversed": (
        "attention",
        [("for h in range(n_heads)]", "for h in range(n_heads)][::-1]")],
    ),
    "attention.transposed": (
        "attention",
        [
            ("q, k, v = u @ W_q, u @ W_k, u @ W_v", "q, k, v = (u @ W.T for W in (W_q, W_k, W_v))"),
            ("np.concatenate(out, axis=-1) @ W_o", "np.concatenate(out, axis=-1) @ W_o.T"),
        ],
    ),
    "attention.no_w_o": (
        "attention",
        [("return np.concatenate(out, axis=-1) @ W_o", "return np.hstack(out)")],
    ),
    "block.second_norm_params": (
        "block",
        [
            (
                'u = layernorm(h, p.get("gamma_2"), p.get("beta_2"))',
                'u = layernorm(h, p.get("gamma_1"), p.get("beta_1"))',
            )
        ],
    ),
    # Meta's llama code: hidden_dim = multiple_of * ((hidden_dim + multiple_of - 1) // multiple_of)
    "params.meta_rounding": (
        "params",
        [("round(8 * d_model / 3 / 256) * 256", "256 * ((int(8 * d_model / 3) + 256 - 1) // 256)")],
    ),
    "params.no_w_o": (
        "params",
        [
            (
                GPT2_RETURN,
                GPT2_RETURN.replace("4 * d_model**2 + 4 * d_model", "3 * d_model**2 + 3 * d_model"),
            )
        ],
    ),
    # red team r1, from a release: uncatalogued before, and the first was told "scores that are not
    # scaled"
    "attention.scale_n_heads": (
        "attention",
        [
            (" / math.sqrt(q.shape[-1])", ""),
            ("q, k, v = u @ W_q,", "q, k, v = u @ W_q / math.sqrt(n_heads),"),
        ],
    ),
    "attention.scores_transposed": (
        "attention",
        [("q @ k.swapaxes(-2, -1)", "k @ q.swapaxes(-2, -1)")],
    ),
    "gelu.no_x": ("gelu", [("0.5 * x * (1 + np.tanh", "0.5 * (1 + np.tanh")]),
}


Edits = dict  # module -> [(old, new), ...], or DELETE: the file left out
DELETE = None


def write_faults(
    folder: Path, edits: Edits, solutions: Path = SOLUTIONS, modules: list[str] = MODULES
) -> Path:
    """A copy of the reference ``modules`` in ``folder`` with ``edits`` made (each ``old`` must be
    there)."""
    folder.mkdir(parents=True)
    for module in modules:
        shutil.copyfile(solutions / f"{module}.py", folder / f"{module}.py")
    for module, changes in edits.items():
        target = folder / f"{module}.py"
        if changes is DELETE:
            target.unlink()
            continue
        text = target.read_text()
        for old, new in changes:
            assert old in text, f"{folder.name}: {old!r} is not in {module}.py"
            text = text.replace(old, new)
        target.write_text(text)
    return folder


def write_mutant(solutions: Path, folder: Path, mistake: str) -> Path:
    """A copy of the reference modules in ``folder`` with ``mistake`` written into one of them."""
    module, changes = MUTANTS[mistake]
    return write_faults(folder, {module: changes}, solutions)


def faulty(root: Path, name: str, edits: Edits | None = None) -> Path:
    """A copy of the reference solutions as student ``name`` in ``root``, with ``edits`` made."""
    return write_faults(root / name, edits or {})


# ------------------------------------------------------------------------------------ single faults


@dataclass(frozen=True)
class Fault:
    """One fault in a copy of the reference: the problem it belongs to (course.json), the edits, and
    whether it is a numeric slip (a wrong constant or precision that keeps every property the spec
    names).

    mistake: the catalogue's id of this fault, the only diagnosis it may get ("" for an uncatalogued
    fault). words: for an uncatalogued fault, what the messages of its failed public tests must say
    (each, ignoring case) for the student to know the aspect to change (tests/bench/feedback.py).
    """

    problem: str
    edits: Edits = field(default_factory=dict)
    slip: bool = False
    mistake: str = ""
    words: tuple[str, ...] = ()


SOFTMAX_RETURN = "return e / e.sum(axis=axis, keepdims=True)"
ATT_RETURN = "return np.concatenate(out, axis=-1) @ W_o"
ATT_QKV = "q, k, v = u @ W_q, u @ W_k, u @ W_v"
SCALE = " / math.sqrt(q.shape[-1])"
ATTEND_CALL = "attend(q[..., s], k[..., s], v[..., s], causal)"
STUB = "raise NotImplementedError"
MLP_RETURN = "return gelu(u @ W_1) @ W_2"
BLOCK_LN_1 = 'u = layernorm(x, p.get("gamma_1"), p.get("beta_1"))'
BLOCK_LN_2 = 'u = layernorm(h, p.get("gamma_2"), p.get("beta_2"))'
STYLE_CHECK = (
    "    if style not in STYLES:\n"
    "        raise ValueError(f\"unknown style {style!r}: expected one of {', '.join(map(repr, "
    'STYLES))}")\n'
)
COUNTS = "(int(c) for c in STYLES[style](d_model, n_heads, n_kv_heads, d_ff))"
TOTAL = '"total": attention + mlp + norm}'
# The catalogue's mistakes that are numeric slips: a constant or a formula off by a little, every
# property kept.
SLIPS = {
    "layernorm.ddof1",
    "layernorm.eps_outside",
    "gelu.erf",
    "gelu.constant",
    "gelu.rounded",
    "attention.scale_d_model",
    "attention.no_scale",
    "layernorm.eps",
    "layernorm.eps_after",
    "attention.scale_d_head",
    "attention.scale_n_heads",
}

FAULTS: dict[str, Fault] = {
    **{
        mistake: Fault(
            module, {module: changes}, mistake in SLIPS, mistake
        )  # (each module is its problem's)
        for mistake, (module, changes) in MUTANTS.items()
    },
    # LayerNorm
    "ln_no_beta": Fault(
        "layernorm", {"layernorm": [(LN_RETURN, "return gamma * (x - mean) / np.sqrt(var + eps)")]}
    ),
    "ln_eps_1e6": Fault("layernorm", {"layernorm": [("eps=1e-5", "eps=1e-6")]}, slip=True),
    "ln_eps_1e12": Fault("layernorm", {"layernorm": [("eps=1e-5", "eps=1e-12")]}, slip=True),
    "ln_float32": Fault(
        "layernorm",
        {
            "layernorm": [
                (
                    "    mean = x.mean(",
                    "    dtype, x = x.dtype, x.astype(np.float32)\n    mean = x.mean(",
                ),
                (
                    LN_RETURN,
                    "return (gamma * (x - mean) / np.sqrt(var + eps) + beta).astype(dtype)",
                ),
            ]
        },
        slip=True,
    ),
    "ln_stub": Fault("layernorm", {"layernorm": [(LN_RETURN, STUB)]}),
    "ln_exits": Fault("layernorm", {"layernorm": [(LN_RETURN, "import os; os._exit(3)")]}),
    "ln_syntax_error": Fault(
        "layernorm",
        {
            "layernorm": [
                (
                    "def layernorm(x, gamma=None, beta=None, eps=1e-5):",
                    "def layernorm(x, gamma=None, beta=None, eps=1e-5)",
                )
            ]
        },
    ),
    "ln_raises_at_import": Fault(
        "layernorm",
        {
            "layernorm": [
                ("import numpy as np\n", "import numpy as np\n\nprint(layernorm([1.0]))\n")
            ]
        },
    ),
    "ln_missing": Fault("layernorm", {"layernorm": DELETE}),
    # GELU
    "gelu_no_half": Fault("gelu", {"gelu": [(GELU_RETURN, GELU_RETURN.replace("0.5 * x", "x"))]}),
    "gelu_0.047": Fault("gelu", {"gelu": [("0.044715", "0.047")]}, slip=True),
    "gelu_float32": Fault(
        "gelu",
        {
            "gelu": [
                (
                    GELU_RETURN,
                    "(0.5 * x.astype(np.float32) * (1 + np.tanh(np.float32("
                    "math.sqrt(2 / math.pi)) * (x.astype(np.float32) + np.float32(0.044715) * "
                    "x.astype(np.float32)**3)))).astype(x.dtype)",
                )
            ]
        },
        slip=True,
    ),
    "gelu_stub": Fault("gelu", {"gelu": [("return " + GELU_RETURN, STUB)]}),
    "gelu_quarter": Fault(
        "gelu", {"gelu": [(GELU_RETURN, GELU_RETURN.replace("0.5 * x", "0.25 * x"))]}
    ),
    "gelu_syntax_error": Fault("gelu", {"gelu": [("def gelu(x):", "def gelu(x)")]}),
    # softmax and attention
    "softmax_no_keepdims": Fault(
        "attention", {"attention": [(SOFTMAX_RETURN, "return e / e.sum(axis=axis)")]}
    ),
    "softmax_stub": Fault("attention", {"attention": [(SOFTMAX_RETURN, STUB)]}),
    "att_softmax_axis0": Fault(
        "attention",
        {"attention": [("return softmax(scores) @ v", "return softmax(scores, axis=0) @ v")]},
    ),
    "att_no_w_o": Fault(
        "attention", {"attention": [(ATT_RETURN, "return np.concatenate(out, axis=-1)")]}
    ),
    "att_reversed_heads": Fault(
        "attention",
        {"attention": [(ATT_RETURN, "return np.concatenate(out[::-1], axis=-1) @ W_o")]},
    ),
    "att_pytorch_layout": Fault(
        "attention", {"attention": [(ATT_QKV, "q, k, v = u @ W_q.T, u @ W_k.T, u @ W_v.T")]}
    ),
    # a mask made for the course's five tokens: from row 5 on every token sees the whole sequence
    "att_mask_from_row_5": Fault(
        "attention",
        {
            "attention": [
                (
                    "return np.tri(n, dtype=bool)",
                    "return np.tri(n, dtype=bool) | (np.arange(n)[:, None] >= 5)",
                )
            ]
        },
    ),
    "att_scores_over_d_head": Fault(
        "attention", {"attention": [(SCALE, " / q.shape[-1]")]}, slip=True
    ),
    "att_scores_over_sqrt_d_model": Fault(
        "attention",
        {
            "attention": [
                (
                    "def attend(q, k, v, causal=True):",
                    "def attend(q, k, v, causal=True, scale=1.0):",
                ),
                (SCALE, " * scale"),
                (ATTEND_CALL, ATTEND_CALL[:-1] + ", 1 / math.sqrt(d_model))"),
            ]
        },
        slip=True,
    ),
    "att_mask_minus_1000": Fault(
        "attention", {"attention": [("scores, -np.inf)", "scores, -1000.0)")]}
    ),
    "att_float32": Fault(
        "attention",
        {
            "attention": [
                (
                    "    d_model = u.shape[-1]\n",
                    "    dtype = u.dtype\n    u, W_q, W_k, W_v, W_o = (a.astype(np.float32) for a "
                    "in (u, W_q, W_k, W_v, W_o))\n    d_model = u.shape[-1]\n",
                ),
                (ATT_RETURN, "return (np.concatenate(out, axis=-1) @ W_o).astype(dtype)"),
            ]
        },
        slip=True,
    ),
    # the heads' outputs written into u's memory (it has their shape) to save an array
    "att_modifies_input": Fault(
        "attention",
        {"attention": [(ATT_RETURN, "np.concatenate(out, axis=-1, out=u)\n    return u @ W_o")]},
    ),
    "att_stub": Fault(
        "attention", {"attention": [("    d_model = u.shape[-1]\n", "    " + STUB + "\n")]}
    ),
    "att_syntax_error": Fault(
        "attention", {"attention": [("def softmax(s, axis=-1):", "def softmax(s, axis=-1)")]}
    ),
    # block and mlp
    "block_modifies_x": Fault("block", {"block": [("h = x + attention(", "h += attention(")]}),
    "block_modifies_params": Fault(
        "block",
        {
            "block": [
                (
                    "    p = params\n",
                    "    p = params\n    p.update(gamma_1="
                    "p.get('gamma_1'), beta_1=p.get('beta_1'), gamma_2=p.get("
                    "'gamma_2'), beta_2=p.get('beta_2'))\n",
                )
            ]
        },
    ),
    "mlp_gelu_after_w_2": Fault("block", {"block": [(MLP_RETURN, "return gelu(u @ W_1 @ W_2)")]}),
    # the student's own (wrong: ReLU) mlp, called from a correct block
    "mlp_own_relu": Fault("block", {"block": [(MLP_RETURN, "return (u @ W_1).clip(0) @ W_2")]}),
    # mlp left a stub, and the block computes a correct one inline
    "mlp_stub_block_inlines": Fault(
        "block",
        {
            "block": [
                (MLP_RETURN, STUB),
                (
                    'return h + mlp(u, p["W_1"], p["W_2"])',
                    'return h + gelu(u @ p["W_1"]) @ p["W_2"]',
                ),
            ]
        },
    ),
    # parameter counts
    "params_no_value_error": Fault(
        "params",
        {"params": [(STYLE_CHECK, ""), ("STYLES[style](", "STYLES.get(style, gpt2_counts)(")]},
    ),
    "params_float_counts": Fault(
        "params", {"params": [(COUNTS, COUNTS.replace("int(c)", "float(c)"))]}
    ),
    "params_extra_key": Fault("params", {"params": [(TOTAL, TOTAL[:-1] + ', "style": style}')]}),
    "params_stub": Fault("params", {"params": [(STYLE_CHECK, "    " + STUB + "\n")]}),
    "params_no_b_o": Fault(
        "params", {"params": [("4 * d_model**2 + 4 * d_model", "4 * d_model**2 + 3 * d_model")]}
    ),
    "params_llama_w_k_only": Fault(
        "params",
        {"params": [("2 * d_model * n_kv_heads * d_head", "d_model * n_kv_heads * d_head")]},
    ),
    # every head reads the first head's values
    "att_v_of_head_0": Fault(
        "attention",
        {"attention": [(ATTEND_CALL, ATTEND_CALL.replace("v[..., s]", "v[..., :d_head]"))]},
    ),
    # red team r1: catalogued mistakes in other idioms, written from a release
    "gelu_sqrt_2_pi": Fault(
        "gelu",
        {"gelu": [("math.sqrt(2 / math.pi)", "math.sqrt(2 * math.pi)")]},
        slip=True,
        mistake="gelu.constant",
    ),
    "att_scale_sqrt_n_heads_in_attend": Fault(
        "attention",
        {
            "attention": [
                (
                    "def attend(q, k, v, causal=True):",
                    "def attend(q, k, v, causal=True, n_heads=1):",
                ),
                (SCALE, " / np.sqrt(n_heads)"),
                (ATTEND_CALL, ATTEND_CALL[:-1] + ", n_heads)"),
            ]
        },
        slip=True,
        mistake="attention.scale_n_heads",
    ),
    # red team r1: uncatalogued slips of students, and what their failed tests must say (WORDS)
    "att_ignores_causal_false": Fault(
        "attention", {"attention": [("    if causal:\n", "    if True:\n")]}
    ),
    "params_llama_norm_4d": Fault(
        "params",
        {"params": [("3 * d_model * d_ff, 2 * d_model", "3 * d_model * d_ff, 4 * d_model")]},
    ),
    "mlp_np_not_imported": Fault(
        "block", {"block": [(MLP_RETURN, "return np.dot(gelu(u @ W_1), W_2)")]}
    ),
}

# Faults above that the catalogue now names (each written differently from its mutant in MUTANTS).
NAMED = {
    "ln_no_beta": "layernorm.no_beta",
    "ln_eps_1e6": "layernorm.eps",
    "ln_eps_1e12": "layernorm.eps",
    "gelu_no_half": "gelu.no_half",
    "softmax_no_keepdims": "softmax.no_keepdims",
    "att_softmax_axis0": "softmax.axis",
    "att_no_w_o": "attention.no_w_o",
    "att_reversed_heads": "attention.heads_reversed",
    "att_pytorch_layout": "attention.transposed",
    "att_scores_over_d_head": "attention.scale_d_head",
    "att_scores_over_sqrt_d_model": "attention.scale_d_model",
    "mlp_own_relu": "mlp.relu",
}
FAULTS.update({name: replace(FAULTS[name], mistake=mistake) for name, mistake in NAMED.items()})

# The uncatalogued faults: what their failed public tests must say for the student to know what to
# change.
WORDS = {
    "ln_float32": ("float32",),
    "ln_stub": ("not implemented",),
    "ln_exits": ("do not call sys.exit",),
    "ln_syntax_error": ("SyntaxError", "line"),
    "ln_raises_at_import": ("NameError", "line"),
    "ln_missing": ("there is no layernorm.py",),
    "gelu_0.047": ("0.044715",),
    "gelu_float32": ("float32",),
    "gelu_stub": ("not implemented",),
    "gelu_syntax_error": ("SyntaxError", "line"),
    "softmax_stub": ("not implemented",),
    "att_mask_from_row_5": ("no token may see a later one",),
    "att_mask_minus_1000": ("-inf",),
    "att_float32": ("float32",),
    "att_modifies_input": ("modified",),
    "att_stub": ("not implemented",),
    "att_syntax_error": ("SyntaxError", "line"),
    "block_modifies_x": ("modified",),
    "block_modifies_params": ("modified",),
    "mlp_gelu_after_w_2": ("what your code passes to gelu()",),
    "mlp_stub_block_inlines": ("not implemented",),
    "params_no_value_error": ("ValueError",),
    "params_float_counts": ("should be an int",),
    "params_extra_key": ("keys that are not expected",),
    "params_stub": ("not implemented",),
    "params_no_b_o": ("attention is short by 768: 1 vector of d",),
    "params_llama_w_k_only": ("attention is short by 4,194,304: 1 d×(n_kv_heads·d_head) matrix",),
    "att_v_of_head_0": ("right with 1 head, wrong with 2",),
    "gelu_quarter": ("the expected one times 0.5",),
    "att_ignores_causal_false": ("causal=False",),
    "params_llama_norm_4d": ("'norm'", "norm 2d"),
    "mlp_np_not_imported": ("NameError", "line"),
}
FAULTS.update({name: replace(FAULTS[name], words=words) for name, words in WORDS.items()})


def write_class(folder: Path) -> Path:
    """Every fault of FAULTS as a student of its own name in ``folder``, and the reference as
    "reference"."""
    for name, fault in FAULTS.items():
        faulty(folder, name, fault.edits)
    faulty(folder, "reference")
    return folder


def points_lost(doc: dict, reference: dict, problem: str) -> tuple[float, float]:
    """The points ``doc`` lost against the reference's score file in ``problem`` and in all the
    others."""
    theirs = {p["name"]: p["score"] for p in doc["problems"]}
    lost = {p["name"]: p["score"] - theirs[p["name"]] for p in reference["problems"]}
    return lost[problem], sum(v for name, v in lost.items() if name != problem)
