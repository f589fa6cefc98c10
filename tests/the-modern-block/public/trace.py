"""The course's modern block (the-block.txt, the script after "All five rows") step by step, for
`grade trace`: x, RMSNorm(x), each query head's attention weights, a, h = x + a, RMSNorm(h), the
SwiGLU hidden layer, m, y.

5 tokens, d = 8, 2 query heads of 4 sharing 1 K/V head, SwiGLU of 21, the script's weights
(public/toy.py). Each step is a call on earlier steps' values: ``compute(f, v)`` gives it from the
functions ``f`` (yours, in the grader's sandboxed worker, or the reference's) and ``v``, the earlier
values by key; the reference's values for every case are stored in trace.json by `grade release` (no
solution code ships).

The cases are the lab's: the example itself, one row scaled by 10 (RMSNorm gives that row the same
normalised copy, so only the residual stream changes), the last token changed (causal: rows 1 to 4
stay as they were at every step), attention switched off (h = x); each also with random weights
(``random``: 4 query heads of 2 and 2 K/V heads, gain_1 and gain_2 set), which check what one K/V
head and the default gains cannot (repeat against tile, the gains).
"""

import numpy as np

from grader.feedback.trace import Unreadable
from public.toy import D_FF, HEADS, KV_HEADS, PARAMS, D, X

# The last token after --case change_last.
CHANGED_LAST = np.array([1.0, -0.5, 0.5, -1.0, 0.0, 1.5, -1.5, 0.5])

# Random weights for --case random (one decimal each, a fixed seed): 4 query heads of 2, 2 K/V
# heads, gains set.
_rng = np.random.default_rng(15)
RANDOM_HEADS, RANDOM_KV_HEADS = 4, 2
_KV = RANDOM_KV_HEADS * D // RANDOM_HEADS
RANDOM = {
    "W_q": _rng.uniform(-1, 1, (D, D)).round(1),
    "W_k": _rng.uniform(-1, 1, (D, _KV)).round(1),
    "W_v": _rng.uniform(-1, 1, (D, _KV)).round(1),
    "W_o": _rng.uniform(-1, 1, (D, D)).round(1),
    "W_1": _rng.uniform(-1, 1, (D, D_FF)).round(1),
    "W_3": _rng.uniform(-1, 1, (D, D_FF)).round(1),
    "W_2": _rng.uniform(-0.5, 0.5, (D_FF, D)).round(1),
    **{f"gain_{i}": 1 + _rng.uniform(-0.5, 0.5, D).round(1) for i in (1, 2)},
}

# Which course functions each function is meant to call.
CALLS = {"swiglu": ("silu",), "modern_block": ("rmsnorm", "gqa_attention", "swiglu")}


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


# The cases `grade trace --case KEY=VALUE` offers (steps()'s keywords; their defaults are the
# script's example).
CASES = {
    "row_x10": "a token number 1 to 5: its embedding times 10 first",
    "change_last": "true: the last token replaced by another one (rows 1 to 4 stay as they were)",
    "no_attention": "true: the attention branch switched off (h = x)",
    "random": "true: random weights (a fixed seed), 4 query heads, 2 K/V heads, gains set",
}


def fault(what, because, see=None, tests=()):
    """One fault a case cannot see (cannot_check's ``faults``)."""
    return {"fault": what, "because": because, "see": see, "tests": list(tests)}


def cannot_check(random=False, no_attention=False, **case):
    """What a case cannot check, for `grade trace` to say, or None; ``faults``: each fault the case
    cannot see, ``because`` why, ``see`` the case that shows it (None: no case of this example;
    ``tests`` then names the public tests that do, or none: only the hidden tests do)."""
    faults = []
    if not random:
        faults += [
            fault(
                "K/V heads shared out wrongly (tiled, or every query head on K/V head 0)",
                "one K/V head: every query head reads it",
                "random",
            ),
            fault(
                "scores divided by the square root of W_k's width, not d_head's",
                "one K/V head: W_k is d_head wide",
                "random",
            ),
            fault(
                "gain_1 and gain_2 ignored, swapped or given to the wrong RMSNorm",
                "the default gains, ones",
                "random",
            ),
        ]
    if not no_attention:
        faults.append(fault("use_attention=False ignored", "attention is on here", "no_attention"))
    faults += [
        fault(
            "eps missing or outside the square root in rmsnorm()",
            "its rows are far from zero",
            tests=[
                "test_rmsnorm_gain_and_rows_that_tell_the_mean_and_eps",
                "test_rmsnorm_eps_goes_inside_the_square_root",
            ],
        ),
        fault(
            "swiglu_width() rounded another way for d >= 256",
            "d = 8: 8 d // 3",
            tests=["test_swiglu_width_2048_rounds_to_the_nearest"],
        ),
        fault(
            "a mistake in count_model()",
            "the example counts no parameters",
            tests=[
                "test_course_block_at_d_4096_32_heads_8_kv_heads",
                "test_default_d_ff_at_2048_rounds_to_the_nearest",
                "test_tied_output_is_not_counted_again",
            ],
        ),
    ]
    if random:
        return {"faults": faults}
    return {
        "because": "one K/V head and the default gains",
        "see": "random",
        "what": "how K/V heads are shared out among the query heads (repeat, not tile), or "
        "gain_1 and gain_2",
        "tests": ["test_gqa_four_query_heads_two_kv_heads", "test_modern_block_with_gains"],
        "faults": faults,
    }


def example(row_x10=None, change_last=False):
    """The script's x (5 tokens × 8) for a case: last token changed, then row `row_x10` (1 to 5)
    times 10."""
    x = np.array(X)
    if change_last:
        x[-1] = CHANGED_LAST
    if row_x10 is not None:
        x[row_x10 - 1] *= 10.0
    return x


def attention_weights(gqa_attention, u, W_q, W_k):  # (n, d), (d, c), (d, c) -> (n, n)
    """The weights (n, n) of one query head with query and key weights W_q, W_k (d × c), read off
    one call of a one-head `gqa_attention`: u is widened with an n×n identity block that the queries
    and keys ignore and the values copy, so the output's last n columns are the weights; W_q is
    scaled by sqrt((d + n) / c) so that q k^T / sqrt(d_head) stays the same."""
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
    out = gqa_attention(np.hstack([u, np.eye(n)]), wide_q, wide_k, wide_v, np.eye(width), 1, 1)
    return weights_read_off(np.asarray(out, dtype=np.float64)[:, d:])


def weights_read_off(read):  # (n, n) -> (n, n)
    """The read-back columns, when they are attention weights: each row entries in [0, 1] summing to
    1 (a mask may hide the future or not: the weights show it). Else they are what the
    gqa_attention's value path (v = u @ W_v, then @ W_o) made of the identity it was given, not its
    weights: :class:`Unreadable` says so and why, and the step is not judged (step a = ... judges
    gqa_attention as a whole)."""
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
            f"{seen}, not 1, or hold values outside [0, 1]): your gqa_attention() "
            "does not pass the values through W_v and W_o as given (v = u @ W_v, output @ "
            "W_o), so its weights cannot be read off it here; the step after them "
            f"judges gqa_attention() as a whole"
        )
    return read


def steps(row_x10=None, change_last=False, no_attention=False, random=False):
    """Yield (key, step, the function responsible for it or "", compute) for one case; ``compute(f,
    v)`` gives the step's value from the functions f (f.rmsnorm, f.gqa_attention, f.silu, f.swiglu,
    f.modern_block) and v, the earlier steps' values by key."""
    p = RANDOM if random else PARAMS
    heads, kv_heads = (RANDOM_HEADS, RANDOM_KV_HEADS) if random else (HEADS, KV_HEADS)
    gain_1 = {"gain": p["gain_1"]} if random else {}
    gain_2 = {"gain": p["gain_2"]} if random else {}
    yield "x", "x", "", lambda f, v: example(row_x10, change_last)
    if no_attention:
        yield "h", "h = x (attention off)", "", lambda f, v: v["x"]
    else:
        yield "u", "RMSNorm(x)", "rmsnorm", lambda f, v: f.rmsnorm(v["x"], **gain_1)
        d_head, group = D // heads, heads // kv_heads
        for head in range(heads):
            q = slice(head * d_head, (head + 1) * d_head)
            kv = slice(head // group * d_head, (head // group + 1) * d_head)
            yield (
                f"weights{head + 1}",
                f"query head {head + 1}'s weights (K/V head {head // group + 1})",
                "gqa_attention",
                lambda f, v, q=q, kv=kv: attention_weights(
                    f.gqa_attention, v["u"], p["W_q"][:, q], p["W_k"][:, kv]
                ),
            )
        yield (
            "a",
            "a = gqa_attention(RMSNorm(x))",
            "gqa_attention",
            lambda f, v: f.gqa_attention(
                v["u"], p["W_q"], p["W_k"], p["W_v"], p["W_o"], heads, kv_heads
            ),
        )
        yield "h", "h = x + a", "", lambda f, v: v["x"] + v["a"]
    yield "u2", "RMSNorm(h)", "rmsnorm", lambda f, v: f.rmsnorm(v["h"], **gain_2)
    yield (
        "hidden",
        f"SwiGLU hidden layer (5 × {D_FF}): silu(u2 @ W_1) * (u2 @ W_3)",
        "silu",
        lambda f, v: f.silu(v["u2"] @ p["W_1"]) * (v["u2"] @ p["W_3"]),
    )
    yield (
        "m",
        "m = swiglu(RMSNorm(h))",
        "swiglu",
        lambda f, v: f.swiglu(v["u2"], p["W_1"], p["W_3"], p["W_2"]),
    )
    yield (
        "y",
        "y = modern_block(x)",
        "modern_block",
        lambda f, v: f.modern_block(v["x"], p, heads, kv_heads, use_attention=not no_attention),
    )
