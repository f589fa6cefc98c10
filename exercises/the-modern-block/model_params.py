"""Exercise: count the parameters of a whole Llama-style model (the course's modern block at real
width).

You may import numpy and the Python standard library; nothing else is available when this is graded.
"""
from swiglu import swiglu_width


def count_model(d_model, n_heads, n_kv_heads, n_layers, vocab_size, d_ff=None, tied=False):
    """Parameters of a decoder-only model without biases, as a dict of Python ints with the keys
    "attention", "mlp", "norm", "block", "blocks", "embedding", "output", "final_norm", "total".

    d = d_model, d_head = d // n_heads, d_ff default swiglu_width(d) (use yours).
        attention  = 2 d^2 + 2 d n_kv_heads d_head     W_q, W_o; W_k, W_v (grouped-query)
        mlp        = 3 d d_ff                          W_1, W_3, W_2
        norm       = 2 d                               two RMSNorm gains a block
        block      = attention + mlp + norm;   blocks = n_layers * block
        embedding  = vocab_size * d;   output = vocab_size * d, or 0 when tied (the embedding is
        reused) final_norm = d;   total = blocks + embedding + output + final_norm

    What matters:
    - Python ints in the result (int(...)), and a tied output layer counted once, in the embedding.

    Checks (the course text): d = 4096, 32 heads, 8 K/V heads: attention 41,943,040, mlp
    135,266,304, norm 8,192, block 177,217,536, 32 blocks 5,670,961,152. Llama 3 8B (32 layers,
    vocab 128,256, d_ff 14,336, untied): total 8,030,261,248.
    """
    raise NotImplementedError
