"""The course's worked example (the-block.txt, "The running example through the block") step by step, for
`grade trace`: x, LayerNorm(x), the attention weights, a, h = x + a, LayerNorm(h), the MLP's hidden layer, m, y.

Each step is computed by the functions given (yours, in the grader's sandboxed worker) from their own previous
step, so the first step that differs from the reference names the function at fault: its input was right.
The reference's values for every case are stored in trace.json by `grade precompute` (no solution code ships).

The cases are the lab's: the example itself, one row scaled by 10 (LayerNorm gives that row the same normalised
copy, so only the residual stream changes), the last token changed (causal: rows 1 to 4 stay as they were at
every step), and attention switched off (h = x).
"""
import numpy as np

from public.toy import PARAMS, W_1, W_2, W_k, W_o, W_q, W_v, X

# The last token after --change-last: ␣the = [-0.5, -0.5, -0.5, 1.5] becomes another word.
CHANGED_LAST = np.array([1.0, -0.5, 0.5, -1.0])


def cases():
    """Every case `grade trace` offers: row_x10 (None or a token number 1 to 5), change_last, no_attention."""
    for row_x10 in (None, *range(1, len(X) + 1)):
        for change_last in (False, True):
            for no_attention in (False, True):
                yield {"row_x10": row_x10, "change_last": change_last, "no_attention": no_attention}


def example(row_x10=None, change_last=False):
    """The toy's x (5 tokens × 4) for a case: last token changed, then row `row_x10` (1 to 5) times 10."""
    x = np.array(X)
    if change_last:
        x[-1] = CHANGED_LAST
    if row_x10 is not None:
        x[row_x10 - 1] *= 10.0
    return x


def attention_weights(attention, u, W_q, W_k):  # (n, d) -> (n, n)
    """The weights (n, n) that a one-head `attention` puts on u, row i for token i, read off one call's output.

    u is widened with an n×n identity block that the queries and keys ignore and the values copy, so the output's
    last n columns are the weights; W_q is scaled by sqrt((d + n) / d) so that q k^T / sqrt(d_head) stays the same.
    """
    n, d = u.shape
    width = d + n
    wide_q, wide_k, wide_v = np.zeros((width, width)), np.zeros((width, width)), np.zeros((width, width))
    wide_q[:d, :d] = np.asarray(W_q) * np.sqrt(width / d)
    wide_k[:d, :d] = W_k
    wide_v[d:, d:] = np.eye(n)
    out = attention(np.hstack([u, np.eye(n)]), wide_q, wide_k, wide_v, np.eye(width))
    return np.asarray(out)[:, d:]


def steps(f, row_x10=None, change_last=False, no_attention=False):
    """Yield (step, the function responsible for it or "", its value) for one case, computed by `f`'s functions
    (f.layernorm, f.attention, f.gelu, f.mlp, f.block), each from the previous steps' values."""
    x = example(row_x10, change_last)
    yield "x", "", x
    if no_attention:
        h = x
        yield "h = x (attention off)", "", h
    else:
        u = f.layernorm(x)
        yield "LayerNorm(x)", "layernorm", u
        yield "attention weights (row i: token i on tokens 1..5)", "attention", \
            attention_weights(f.attention, u, W_q, W_k)
        a = f.attention(u, W_q, W_k, W_v, W_o)
        yield "a = attention(LayerNorm(x))", "attention", a
        h = x + a
        yield "h = x + a", "", h
    u = f.layernorm(h)
    yield "LayerNorm(h)", "layernorm", u
    yield "MLP hidden layer: gelu(LayerNorm(h) @ W_1)", "gelu", f.gelu(u @ W_1)
    yield "m = mlp(LayerNorm(h))", "mlp", f.mlp(u, W_1, W_2)
    yield "y = block(x)", "block", f.block(x, PARAMS, use_attention=not no_attention)
