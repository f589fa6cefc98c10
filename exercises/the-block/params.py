"""Exercise: count the parameters of one transformer block, GPT-2 style or Llama style.

You may import numpy and the Python standard library; nothing else is available when this is graded.
"""


def count_params(d_model, n_heads, n_kv_heads=None, d_ff=None, style="gpt2"):  # -> dict of ints
    """Parameters of one block, as {"attention": ..., "mlp": ..., "norm": ..., "total": ...} of
    Python ints.

    d = d_model, d_head = d_model // n_heads.

    style="gpt2" (Radford et al. 2019): every linear layer has a bias; two LayerNorms with gamma and
    beta; d_ff defaults to 4 * d; n_kv_heads is Llama's and is ignored (W_k and W_v are d x d).
        attention = 4 d^2 + 4 d                  W_q, W_k, W_v, W_o and four biases of d
        mlp       = 2 d d_ff + d_ff + d          W_1, W_2 and their biases
        norm      = 4 d                          gamma and beta, twice

    style="llama" (Touvron et al. 2023; Grattafiori et al. 2024): no biases; two RMSNorms with a
    gain only; SwiGLU MLP with three matrices (Shazeer 2020); grouped-query attention (Ainslie et
    al. 2023), where K and V have n_kv_heads heads (default n_heads) of size d_head.
        attention = 2 d^2 + 2 d n_kv_heads d_head
        mlp       = 3 d d_ff, d_ff default round(8 * d / 3 / 256) * 256 if d >= 256, else 8 * d // 3
        norm      = 2 d

    What matters:
    - the defaults: None means "use the style's rule", and d_ff=None differs between the styles;
    - Python's round (round half to even) for the Llama width, and Python ints in the result
      (int(...));
    - any other style raises ValueError naming it, e.g. "unknown style 'gpt3'".

    Checks: gpt2 (768, 12) total 7,087,872; llama (4096, 32, 8, 14336) total 218,112,000 (Llama 3
    8B); llama (4096, 32, 8) total 177,217,536.
    """
    raise NotImplementedError
