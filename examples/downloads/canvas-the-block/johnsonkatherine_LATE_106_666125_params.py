"""Kathy's parameter counter."""


def _llama_ff(d):
    # Llama rounds 8d/3 to a multiple of 256 (only for real widths)
    if d >= 256:
        return round(8 * d / 3 / 256) * 256
    return 8 * d // 3


def count_params(d_model, n_heads, n_kv_heads=None, d_ff=None, style="gpt2"):
    d = d_model
    if style == "gpt2":
        f = d_ff or 4 * d
        parts = (4 * (d * d + d), 2 * d * f + f + d, 4 * d)
    elif style == "llama":
        f = d_ff or _llama_ff(d)
        kv_width = (n_kv_heads or n_heads) * (d // n_heads)
        parts = (2 * d * d + 2 * d * kv_width, 3 * d * f, 2 * d)
    else:
        raise ValueError(f"don't know the style {style!r}")
    return dict(zip(("attention", "mlp", "norm", "total"), (*parts, sum(parts))))
