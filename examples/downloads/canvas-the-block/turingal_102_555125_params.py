# Alan -- parameter counting


def count_params(d_model, n_heads, n_kv_heads=None, d_ff=None, style="gpt2"):
    d = d_model
    if style == "gpt2":
        if d_ff is None:
            d_ff = 4 * d
        attn = 4 * d * d + 4 * d  # 4 matrices + 4 biases
        mlp = d * d_ff + d_ff + d_ff * d + d  # W_1 + b_1 + W_2 + b_2
        norm = 2 * 2 * d  # 2 layernorms x (gamma, beta)
    elif style == "llama":
        if n_kv_heads is None:
            n_kv_heads = n_heads
        if d_ff is None:
            d_ff = round(8 * d / 3 / 256) * 256 if d >= 256 else 8 * d // 3
        head = d // n_heads
        attn = 2 * d * d + 2 * d * n_kv_heads * head  # Q and O full size, K and V grouped
        mlp = 3 * d * d_ff  # SwiGLU has three matrices
        norm = 2 * d
    else:
        raise ValueError("style must be 'gpt2' or 'llama', got %r" % (style,))
    return {"attention": attn, "mlp": mlp, "norm": norm, "total": attn + mlp + norm}
