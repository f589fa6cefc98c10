"""Parameter counts (Ada): list every tensor's shape and multiply out, so nothing gets forgotten."""
import math


def count_params(d_model, n_heads, n_kv_heads=None, d_ff=None, style="gpt2"):
    d = d_model
    if style == "gpt2":
        f = 4 * d if d_ff is None else d_ff
        shapes = {
            "attention": [(d, d), (d,)] * 4,  # W_q, W_k, W_v, W_o, each with a bias
            "mlp": [(d, f), (f,), (f, d), (d,)],
            "norm": [(d,)] * 4,  # gamma and beta, two LayerNorms
        }
    elif style == "llama":
        kv = n_heads if n_kv_heads is None else n_kv_heads
        dh = d // n_heads
        if d_ff is None:
            f = round(8 * d / 3 / 256) * 256 if d >= 256 else 8 * d // 3
        else:
            f = d_ff
        shapes = {
            "attention": [(d, d), (d, kv * dh), (d, kv * dh), (d, d)],  # GQA: K and V are narrower
            "mlp": [(d, f), (d, f), (f, d)],  # gate, up, down
            "norm": [(d,), (d,)],  # RMSNorm gains only
        }
    else:
        raise ValueError(f"unknown style {style!r}, expected 'gpt2' or 'llama'")
    counts = {name: sum(math.prod(s) for s in group) for name, group in shapes.items()}
    counts["total"] = sum(counts.values())
    return counts
