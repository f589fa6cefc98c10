"""Parameter count of one transformer block, GPT-2 style or Llama style (the course's block
page)."""


def swiglu_width(d_model):  # int -> int
    """Llama's default hidden width for SwiGLU: 8d/3 rounded to a multiple of 256 (d >= 256), else
    8d // 3.

    Shazeer 2020, "GLU Variants Improve Transformer" (2/3 of 4d keeps the parameter count of a 4d
    MLP).
    """
    return round(8 * d_model / 3 / 256) * 256 if d_model >= 256 else 8 * d_model // 3


def gpt2_counts(d_model, n_heads, n_kv_heads, d_ff):  # ints -> (attention, mlp, norm)
    """GPT-2 (Radford et al. 2019): biases everywhere, two LayerNorms with gamma and beta, d_ff
    default 4d.

    attention: W_q, W_k, W_v, W_o and their biases, 4d^2 + 4d. mlp: 2*d*d_ff + d_ff + d. norm: 4d.
    """
    d_ff = 4 * d_model if d_ff is None else d_ff
    return 4 * d_model**2 + 4 * d_model, 2 * d_model * d_ff + d_ff + d_model, 4 * d_model


def llama_counts(d_model, n_heads, n_kv_heads, d_ff):  # ints -> (attention, mlp, norm)
    """Llama (Touvron et al. 2023; Grattafiori et al. 2024): no biases, RMSNorm gains, SwiGLU,
    grouped-query K/V (Ainslie et al. 2023), n_kv_heads default n_heads, d_ff default
    swiglu_width(d_model).

    attention: W_q and W_o d^2 each, W_k and W_v d * n_kv_heads * d_head each. mlp: 3 * d * d_ff.
    norm: 2d.
    """
    n_kv_heads = n_heads if n_kv_heads is None else n_kv_heads
    d_ff = swiglu_width(d_model) if d_ff is None else d_ff
    d_head = d_model // n_heads
    return 2 * d_model**2 + 2 * d_model * n_kv_heads * d_head, 3 * d_model * d_ff, 2 * d_model


STYLES = {"gpt2": gpt2_counts, "llama": llama_counts}


def count_params(d_model, n_heads, n_kv_heads=None, d_ff=None, style="gpt2"):  # -> dict of ints
    """Parameters of one block: {"attention", "mlp", "norm", "total"}, as Python ints.

    style "gpt2" or "llama"; n_kv_heads defaults to n_heads (used by "llama" only), d_ff to the
    style's default. Checks: gpt2 (768, 12) -> 7,087,872; llama (4096, 32, 8, 14336) -> 218,112,000;
    llama (4096, 32, 8) -> 177,217,536.
    """
    if style not in STYLES:
        raise ValueError(f"unknown style {style!r}: expected one of {', '.join(map(repr, STYLES))}")
    attention, mlp, norm = (int(c) for c in STYLES[style](d_model, n_heads, n_kv_heads, d_ff))
    return {"attention": attention, "mlp": mlp, "norm": norm, "total": attention + mlp + norm}
