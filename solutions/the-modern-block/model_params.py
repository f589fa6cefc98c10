"""Parameter count of a whole Llama-style model: blocks, embedding, output layer (the course's
modern block)."""
from swiglu import swiglu_width


def count_model(d_model, n_heads, n_kv_heads, n_layers, vocab_size, d_ff=None, tied=False):
    """Parameters of a decoder-only model without biases, as Python ints.

    attention = 2 d^2 + 2 d n_kv_heads d_head (W_q, W_o; W_k, W_v), mlp = 3 d d_ff (W_1, W_3, W_2;
    d_ff default swiglu_width(d)), norm = 2 d (two RMSNorm gains); blocks = n_layers * block;
    embedding = vocab * d; output = vocab * d, or 0 when tied to the embedding; final_norm = d.
    Checks: (4096, 32, 8, 32, 128256, 14336) total 8,030,261,248 (Llama 3 8B).
    """
    d, d_head = d_model, d_model // n_heads
    d_ff = swiglu_width(d) if d_ff is None else d_ff
    attention = 2 * d * d + 2 * d * n_kv_heads * d_head
    mlp, norm = 3 * d * d_ff, 2 * d
    block = attention + mlp + norm
    counts = {"attention": attention, "mlp": mlp, "norm": norm, "block": block,
              "blocks": n_layers * block, "embedding": vocab_size * d,
              "output": 0 if tied else vocab_size * d, "final_norm": d}
    counts["total"] = (counts["blocks"] + counts["embedding"] + counts["output"]
                       + counts["final_norm"])
    return {k: int(v) for k, v in counts.items()}
