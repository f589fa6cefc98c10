"""The course's worked example (the-block.txt, "The running example through the block") step by
step, for `grade trace`: x, LayerNorm(x), the attention weights, a, h = x + a, LayerNorm(h), the
MLP's hidden layer, m, y.

Each step is a call on earlier steps' values: ``compute(f, v)`` gives it from the functions ``f``
(yours, in the grader's sandboxed worker, or the reference's) and ``v``, the earlier values by key.
`grade trace` computes each step twice: from the reference's earlier values (so a step that differs
judges its own function alone, and two faults in two functions show at two steps), and from your own
(where your block ends up). The reference's values for every case are stored in trace.json by `grade
release` (no solution code ships).

The cases are the lab's: the example itself, one row scaled by 10 (LayerNorm gives that row the same
normalised copy, so only the residual stream changes), the last token changed (causal: rows 1 to 4
stay as they were at every step), and attention switched off (h = x); each also with random weights
(``random``: two heads, W_o, gamma and beta set, d_ff = 16), which check what the toy's W_o = I and
default gamma and beta cannot.
"""

import numpy as np

from grader.feedback.trace import Unreadable
from public.toy import PARAMS, X

# The cases `grade trace --case KEY=VALUE` offers (steps()'s keywords; their defaults are the
# example itself).
CASES = {
    "row_x10": "a token number 1 to 5: its embedding times 10 first (only the residual stream "
    "changes)",
    "change_last": "true: the last token replaced by another word (rows 1 to 4 stay as they were)",
    "no_attention": "true: the attention branch switched off (h = x)",
    "random": "true: random weights (a fixed seed), two heads, W_o, gamma and beta set, d_ff = 16",
}

# The last token after --case change_last: ␣the = [-0.5, -0.5, -0.5, 1.5] becomes another word.
CHANGED_LAST = np.array([1.0, -0.5, 0.5, -1.0])

# Random weights for --case random (one decimal each, a fixed seed): nothing is the identity, two
# heads.
_rng = np.random.default_rng(14)
_D, _D_FF = X.shape[1], 16
RANDOM = {
    **{name: _rng.uniform(-1, 1, (_D, _D)).round(1) for name in ("W_q", "W_k", "W_v", "W_o")},
    "W_1": _rng.uniform(-1, 1, (_D, _D_FF)).round(1),
    "W_2": _rng.uniform(-1, 1, (_D_FF, _D)).round(1),
    **{f"gamma_{i}": 1 + _rng.uniform(-0.5, 0.5, _D).round(1) for i in (1, 2)},
    **{f"beta_{i}": _rng.uniform(-0.5, 0.5, _D).round(1) for i in (1, 2)},
}
RANDOM_HEADS = 2

# Which course functions each function is meant to call: a step of mlp() or block() that differs
# while a function
# it calls differs too may only be carrying that fault.
CALLS = {"mlp": ("gelu",), "block": ("layernorm", "attention", "mlp")}


def cases():
    """Every case `grade trace` offers: row_x10 (None or a token number 1 to 5), change_last,
    no_attention, random."""
    for row_x10 in (None, *range(1, len(X) + 1)):
        for change_last in (False, True):
            for no_attention in (False, True):
                for random in (False, True):
                    yield {
                        "row_x10": row_x10,
                        "change_last": change_last,
                        "no_attention": no_attention,
                        "random": random,
                    }


def fault(what, because, see=None, tests=()):
    """One fault a case cannot see (cannot_check's ``faults``)."""
    return {"fault": what, "because": because, "see": see, "tests": list(tests)}


def cannot_check(random=False, no_attention=False, **case):
    """What a case cannot check, for `grade trace` to say, or None: ``because`` (its degenerate
    weights), ``what`` (the parts of the code they hide), ``see`` (a case that can: ``grade trace
    --case random``) and ``tests``, the public tests that check them; then ``faults``, each fault
    the case cannot see: what it is, ``because`` (why the case hides it) and ``see``, the case that
    shows it (None: no case of this example; ``tests`` then names the public tests that do, or none:
    only the hidden tests do)."""
    faults = []
    if not random:
        faults += [
            fault(
                "W_q and W_k swapped, in attention or as block() passes them (scores k @ q.T)",
                "W_q = W_k = I: q and k are the same",
                "random",
            ),
            fault(
                "scores divided by sqrt(d_model), or heads split, merged or scaled wrongly",
                "one head: d_head = d_model",
                "random",
            ),
            fault("a forgotten or transposed W_o", "W_o = I", "random"),
            fault(
                "gamma and beta ignored, swapped or given to the wrong LayerNorm",
                "gamma = 1 and beta = 0",
                "random",
            ),
        ]
    if not no_attention:
        faults.append(fault("use_attention=False ignored", "attention is on here", "no_attention"))
    faults += [
        fault("a softmax without the max subtracted", "its scores stay small: exp never overflows"),
        fault(
            "a LayerNorm whose axis follows the input's shape",
            "x is 5 × 4, never square",
            tests=["test_a_square_input_is_normalised_row_by_row"],
        ),
        fault("a GELU that overflows for large |x|", "its values stay small"),
        fault(
            "a mistake in count_params()",
            "the example counts no parameters",
            tests=[
                "test_gpt2_small_block_768_12",
                "test_llama_default_d_ff_at_2048_rounds_to_the_nearest",
            ],
        ),
    ]
    if random:
        return {"faults": faults}
    return {
        "because": "W_o = I, gamma = 1, beta = 0 and one head",
        "see": "random",
        "what": "W_o, gamma and beta, or how the heads are split and merged",
        "tests": [
            "test_gamma_scales_and_beta_shifts",
            "test_two_heads_scaled_by_sqrt_d_head",
            "test_block_two_heads_with_gamma_and_beta",
        ],
        "faults": faults,
    }


def example(row_x10=None, change_last=False):
    """The toy's x (5 tokens × 4) for a case: last token changed, then row `row_x10` (1 to 5) times
    10."""
    x = np.array(X)
    if change_last:
        x[-1] = CHANGED_LAST
    if row_x10 is not None:
        x[row_x10 - 1] *= 10.0
    return x


def attention_weights(attention, u, W_q, W_k):  # (n, d), (d, c), (d, c) -> (n, n)
    """The weights (n, n) that a one-head `attention` with query and key weights W_q, W_k (d × c:
    one head of width c) puts on u, row i for token i, read off one call's output.

    u is widened with an n×n identity block that the queries and keys ignore and the values copy, so
    the output's last n columns are the weights; W_q is scaled by sqrt((d + n) / c) so that q k^T /
    sqrt(d_head) stays the same.
    """
    n, d = u.shape
    c, width = np.shape(W_q)[1], d + n
    wide_q, wide_k, wide_v = (
        np.zeros((width, width)),
        np.zeros((width, width)),
        np.zeros((width, width)),
    )
    wide_q[:d, :c] = np.asarray(W_q) * np.sqrt(width / c)
    wide_k[:d, :c] = W_k
    wide_v[d:, d:] = np.eye(n)
    out = attention(np.hstack([u, np.eye(n)]), wide_q, wide_k, wide_v, np.eye(width))
    return weights_read_off(np.asarray(out, dtype=np.float64)[:, d:])


def weights_read_off(read):  # (n, n) -> (n, n)
    """The read-back columns, when they are attention weights: each row entries in [0, 1] summing to
    1 (a mask may hide the future or not: the weights show it). Else they are what the attention's
    value path (v = u @ W_v, then @ W_o) made of the identity it was given, not its weights:
    :class:`Unreadable` says so and why, and the step is not judged (step a = ... judges attention
    as a whole)."""
    sums = read.sum(axis=1) if read.ndim == 2 else np.array([np.nan])
    outside = (read < -1e-9).any() or (read > 1 + 1e-9).any()
    if (
        read.ndim != 2
        or not np.isfinite(read).all()
        or outside
        or not np.allclose(sums, 1.0, rtol=0, atol=1e-6)
    ):
        seen = ", ".join(f"{v:.3g}" for v in sums[:5]) + (", ..." if sums.size > 5 else "")
        raise Unreadable(
            f"these are not attention weights (the rows of what came back sum to "
            f"{seen}, not 1, or hold values outside [0, 1]): your attention() does "
            "not pass the values through W_v and W_o as given (v = u @ W_v, output @ "
            "W_o), so its weights cannot be read off it here; the step after them "
            f"judges attention() as a whole"
        )
    return read


def steps(row_x10=None, change_last=False, no_attention=False, random=False):
    """Yield (key, step, the function responsible for it or "", compute) for one case; ``compute(f,
    v)`` gives the step's value from the functions f (f.layernorm, f.attention, f.gelu, f.mlp,
    f.block) and v, the earlier steps' values by key."""
    p = RANDOM if random else PARAMS
    # the toy passes no gamma, beta or n_heads: the defaults are what it checks
    heads = {"n_heads": RANDOM_HEADS} if random else {}
    ln_1 = {"gamma": p["gamma_1"], "beta": p["beta_1"]} if random else {}
    ln_2 = {"gamma": p["gamma_2"], "beta": p["beta_2"]} if random else {}
    yield "x", "x", "", lambda f, v: example(row_x10, change_last)
    if no_attention:
        yield "h", "h = x (attention off)", "", lambda f, v: v["x"]
    else:
        yield "u", "LayerNorm(x)", "layernorm", lambda f, v: f.layernorm(v["x"], **ln_1)
        n_heads = heads.get("n_heads", 1)
        d_head = _D // n_heads
        for head in range(n_heads):
            s = slice(head * d_head, (head + 1) * d_head)
            which = f"head {head + 1}'s " if n_heads > 1 else ""
            yield (
                f"weights{head + 1}",
                f"{which}attention weights (row i: token i on tokens 1..5)",
                "attention",
                lambda f, v, s=s: attention_weights(
                    f.attention, v["u"], p["W_q"][:, s], p["W_k"][:, s]
                ),
            )
        yield (
            "a",
            "a = attention(LayerNorm(x))",
            "attention",
            lambda f, v: f.attention(v["u"], p["W_q"], p["W_k"], p["W_v"], p["W_o"], **heads),
        )
        yield "h", "h = x + a", "", lambda f, v: v["x"] + v["a"]
    yield "u2", "LayerNorm(h)", "layernorm", lambda f, v: f.layernorm(v["h"], **ln_2)
    yield (
        "hidden",
        "MLP hidden layer: gelu(LayerNorm(h) @ W_1)",
        "gelu",
        lambda f, v: f.gelu(v["u2"] @ p["W_1"]),
    )
    yield "m", "m = mlp(LayerNorm(h))", "mlp", lambda f, v: f.mlp(v["u2"], p["W_1"], p["W_2"])
    yield (
        "y",
        "y = block(x)",
        "block",
        lambda f, v: f.block(v["x"], p, use_attention=not no_attention, **heads),
    )
