def count_params(d_model, n_heads, n_kv_heads=None, d_ff=None, style="gpt2"):
    # linus: numbers from the block page
    d, H = d_model, n_heads
    K = H if n_kv_heads is None else n_kv_heads
    if style == "gpt2":
        f = 4 * d if d_ff is None else d_ff
        out = {"attention": 4 * d**2 + 4 * d, "mlp": 2 * d * f + f + d, "norm": 4 * d}
    elif style == "llama":
        f = d_ff if d_ff is not None else (round(8 * d / 3 / 256) * 256 if d >= 256 else 8 * d // 3)
        out = {"attention": 2 * d**2 + 2 * d * K * (d // H), "mlp": 3 * d * f, "norm": 2 * d}
    else:
        raise ValueError(f"unknown style: {style}")
    out["total"] = out["attention"] + out["mlp"] + out["norm"]
    return out
