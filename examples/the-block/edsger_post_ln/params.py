"""Parameters of one block. E. D."""


def _llama_hidden(d_model):
    """SwiGLU width: two thirds of 4d, rounded to a multiple of 256 for real model sizes."""
    if d_model < 256:
        return 8 * d_model // 3
    return 256 * round(8 * d_model / 3 / 256)


def count_params(d_model, n_heads, n_kv_heads=None, d_ff=None, style="gpt2"):
    """{"attention", "mlp", "norm", "total"} for one block, GPT-2 or Llama conventions."""
    if style not in ("gpt2", "llama"):
        raise ValueError(f"unknown style {style!r}")
    d = d_model
    if style == "gpt2":
        hidden = 4 * d if d_ff is None else d_ff
        attention = 4 * d * d + 4 * d
        mlp = (d * hidden + hidden) + (hidden * d + d)
        norm = 2 * (d + d)
    else:
        hidden = _llama_hidden(d) if d_ff is None else d_ff
        kv_heads = n_heads if n_kv_heads is None else n_kv_heads
        kv_dim = kv_heads * (d // n_heads)
        attention = d * d + d * kv_dim + d * kv_dim + d * d
        mlp = 3 * d * hidden
        norm = 2 * d
    return {"attention": attention, "mlp": mlp, "norm": norm, "total": attention + mlp + norm}
