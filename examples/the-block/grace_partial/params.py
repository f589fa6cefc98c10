"""Parameter counts -- Grace. TODO"""


def count_params(d_model, n_heads, n_kv_heads=None, d_ff=None, style="gpt2"):
    raise NotImplementedError
