# Barbara - parameter counts (copied over from my notebook)


def count_params(d_model, n_heads, n_kv_heads=None, d_ff=None, style="gpt2"):
    d = d_model
    if style == "llama":
        kv = n_kv_heads if n_kv_heads else n_heads
        ff = d_ff if d_ff else (round(8 * d / 3 / 256) * 256 if d >= 256 else 8 * d // 3)
        attention = 2 * d * d + 2 * d * kv * (d // n_heads)
        mlp = 3 * d * ff
        norm = 2 * d
    elif style == "gpt2":
        ff = d_ff if d_ff else 4 * d
        attention = 4 * d * d + 4 * d
        mlp = 2 * d * ff + ff + d
        norm = 4 * d
    else:
        raise ValueError("unknown style: " + repr(style))
    return {"attention": attention, "mlp": mlp, "norm": norm, "total": attention + mlp + norm}
