"""Students' mistakes written into copies of the reference: one submission per known mistake of the course.

Each entry is a textual change to a solution module, written the way a student would write the mistake and
independently of the catalogue's variants (solutions/mistakes.py), so that a variant that models its mistake
wrongly shows up as a mutant with no diagnosis.
"""
from __future__ import annotations

import shutil
from pathlib import Path

ERF = "0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))"
POST_LN = '''    p = params
    h = x
    if use_attention:
        h = layernorm(x + attention(x, p["W_q"], p["W_k"], p["W_v"], p["W_o"], n_heads), p.get("gamma_1"), p.get("beta_1"))
    return layernorm(h + mlp(h, p["W_1"], p["W_2"]), p.get("gamma_2"), p.get("beta_2"))
'''
SPLIT_BY_RESHAPE = '''    qh, kh, vh = (t.reshape(n_heads, -1, d_head) for t in (q, k, v))
    out = [attend(qh[h], kh[h], vh[h], causal) for h in range(n_heads)]
    return np.stack(out).reshape(-1, d_model) @ W_o
'''
LN_RETURN = "return gamma * (x - mean) / np.sqrt(var + eps) + beta"
GELU_RETURN = "0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))"
GPT2_RETURN = "return 4 * d_model**2 + 4 * d_model, 2 * d_model * d_ff + d_ff + d_model, 4 * d_model"

# mistake id -> (module, [(old, new), ...])
MUTANTS: dict[str, tuple[str, list[tuple[str, str]]]] = {
    "layernorm.ddof1": ("layernorm", [("x.var(axis=-1, keepdims=True)", "x.var(axis=-1, keepdims=True, ddof=1)")]),
    "layernorm.eps_outside": ("layernorm", [("np.sqrt(var + eps)", "(np.sqrt(var) + eps)")]),
    "layernorm.no_eps": ("layernorm", [("np.sqrt(var + eps)", "np.sqrt(var)")]),
    "layernorm.axis": ("layernorm", [("x.mean(axis=-1", "x.mean(axis=0"), ("x.var(axis=-1", "x.var(axis=0")]),
    "layernorm.no_affine": ("layernorm", [(LN_RETURN, "return (x - mean) / np.sqrt(var + eps)")]),
    "layernorm.no_mean": ("layernorm", [(LN_RETURN, "return gamma * x / np.sqrt(var + eps) + beta")]),
    "gelu.erf": ("gelu", [(GELU_RETURN, ERF)]),
    "gelu.sigmoid": ("gelu", [(GELU_RETURN, "x / (1 + np.exp(-1.702 * x))")]),
    "gelu.constant": ("gelu", [("0.044715", "0.47")]),
    "gelu.rounded": ("gelu", [("math.sqrt(2 / math.pi)", "0.798"), ("0.044715", "0.0447")]),
    "gelu.relu": ("gelu", [(GELU_RETURN, "np.maximum(x, 0)")]),
    "softmax.no_max": ("attention", [("np.exp(s - s.max(axis=axis, keepdims=True))", "np.exp(s)")]),
    "softmax.axis": ("attention", [("axis=axis", "axis=-1")]),
    "attention.mask_diagonal": ("attention", [("np.tri(n, dtype=bool)", "np.tri(n, k=-1, dtype=bool)")]),
    "attention.mask_leak": ("attention", [("np.tri(n, dtype=bool)", "np.tri(n, k=1, dtype=bool)")]),
    "attention.no_mask": ("attention", [("    if causal:\n", "    if False:\n")]),
    "attention.mask_zero": ("attention", [("scores, -np.inf)", "scores, 0.0)")]),
    "attention.scale_d_model": ("attention", [("q, k, v = u @ W_q,", "q, k, v = u @ W_q * math.sqrt(d_head / d_model),")]),
    "attention.no_scale": ("attention", [(" / math.sqrt(q.shape[-1])", "")]),
    "attention.head_split": ("attention", [(
        "    heads = [slice(h * d_head, (h + 1) * d_head) for h in range(n_heads)]\n"
        "    out = [attend(q[..., s], k[..., s], v[..., s], causal) for s in heads]  # n_heads x (n, d_head)\n"
        "    return np.concatenate(out, axis=-1) @ W_o  # (n, d_model) @ (d_model, d_model) -> (n, d_model)\n",
        SPLIT_BY_RESHAPE)]),
    "block.post_ln": ("block", [(
        '''    p = params
    h = x
    if use_attention:
        u = layernorm(x, p.get("gamma_1"), p.get("beta_1"))  # (n, d_model) -> (n, d_model)
        h = x + attention(u, p["W_q"], p["W_k"], p["W_v"], p["W_o"], n_heads)  # (n, d_model) -> (n, d_model)
    u = layernorm(h, p.get("gamma_2"), p.get("beta_2"))  # (n, d_model) -> (n, d_model)
    return h + mlp(u, p["W_1"], p["W_2"])  # (n, d_model) -> (n, d_model)
''', POST_LN)]),
    "block.no_residual_attention": ("block", [("h = x + attention(", "h = attention(")]),
    "block.no_residual_mlp": ("block", [("return h + mlp(", "return mlp(")]),
    "block.residual_from_normalised": ("block", [("h = x + attention(", "h = u + attention(")]),
    "block.ignores_use_attention": ("block", [("if use_attention:", "if True:")]),
    "block.no_gamma_beta": ("block", [('layernorm(x, p.get("gamma_1"), p.get("beta_1"))', "layernorm(x)"),
                                      ('layernorm(h, p.get("gamma_2"), p.get("beta_2"))', "layernorm(h)")]),
    "block.no_n_heads": ("block", [('p["W_o"], n_heads)', 'p["W_o"])')]),
    "mlp.no_gelu": ("block", [("return gelu(u @ W_1) @ W_2", "return u @ W_1 @ W_2")]),
    "params.no_bias": ("params", [(GPT2_RETURN, "return 4 * d_model**2, 2 * d_model * d_ff, 4 * d_model")]),
    "params.no_beta": ("params", [(GPT2_RETURN, GPT2_RETURN[:-len("4 * d_model")] + "2 * d_model")]),
    "params.n_kv_heads": ("params", [("n_kv_heads = n_heads if n_kv_heads is None else n_kv_heads",
                                      "n_kv_heads = n_heads")]),
    "params.gpt2_d_ff": ("params", [("d_ff = 4 * d_model if d_ff is None else d_ff",
                                     "d_ff = swiglu_width(d_model) if d_ff is None else d_ff")]),
    "params.rounding": ("params", [("round(8 * d_model / 3 / 256)", "int(8 * d_model / 3 / 256 + 0.5)")]),
}


def write_mutant(solutions: Path, folder: Path, mistake: str) -> Path:
    """A copy of the reference modules in ``folder`` with ``mistake`` written into one of them."""
    module, changes = MUTANTS[mistake]
    folder.mkdir(parents=True)
    for path in solutions.glob("*.py"):
        if path.name != "mistakes.py":
            shutil.copyfile(path, folder / path.name)
    target = folder / f"{module}.py"
    text = target.read_text()
    for old, new in changes:
        assert old in text, f"{mistake}: {old!r} is not in {module}.py"
        text = text.replace(old, new)
    target.write_text(text)
    return folder
