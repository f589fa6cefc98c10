"""Public tests for count_params(d_model, n_heads, n_kv_heads=None, d_ff=None, style="gpt2"): the
parameters of one block as a dict of Python ints {"attention", "mlp", "norm", "total"}.

"gpt2": biases everywhere, two LayerNorms with gamma and beta, d_ff defaults to 4 * d_model.
"llama": no biases, two RMSNorm gains, SwiGLU (3 matrices), grouped-query K/V; d_ff defaults to
round(8 * d / 3 / 256) * 256 for d >= 256 (Python's round), else 8 * d // 3.
The expected counts are the course's (GPT-2 small; the Llama 3 8B block; the course script at d =
4096). The count tests compare the values (7.0 counts as 7); two small tests of their own check the
dict's keys and that the counts are Python ints.
"""

from collections import Counter
from itertools import combinations

import pytest

from grader.feedback.compare import Diagnosis, assert_equal, assert_keys, assert_types, either

GPT2_SMALL = {"attention": 2_362_368, "mlp": 4_722_432, "norm": 3_072, "total": 7_087_872}


def parts(d, d_ff, d_kv, style):
    """Each count's weights: (name, size, kind). d_kv = n_kv_heads · d_head (d without grouped-query
    attention)."""
    matrix, kv, vector = (
        (d * d, "d×d matrix"),
        (d * d_kv, "d×(n_kv_heads·d_head) matrix"),
        (d, "vector of d"),
    )
    up, bias_ff = (d * d_ff, "d×d_ff matrix"), (d_ff, "vector of d_ff")
    if style == "gpt2":
        return {
            "attention": [
                ("W_q", *matrix),
                ("W_k", *matrix),
                ("W_v", *matrix),
                ("W_o", *matrix),
                ("b_q", *vector),
                ("b_k", *vector),
                ("b_v", *vector),
                ("b_o", *vector),
            ],
            "mlp": [("W_1", *up), ("b_1", *bias_ff), ("W_2", *up), ("b_2", *vector)],
            "norm": [
                ("gamma_1", *vector),
                ("beta_1", *vector),
                ("gamma_2", *vector),
                ("beta_2", *vector),
            ],
        }
    return {
        "attention": [("W_q", *matrix), ("W_k", *kv), ("W_v", *kv), ("W_o", *matrix)],
        "mlp": [("W_gate", *up), ("W_up", *up), ("W_down", *up)],
        "norm": [("g_1", *vector), ("g_2", *vector)],
    }


def _whole(value):
    """A count a hint can subtract: an int, or a float of a whole value (no bool, NaN or inf)."""
    return type(value) is int or (type(value) is float and value.is_integer())


def counts_off(d, d_ff, d_kv, style="gpt2"):
    """A hint for counts that no known mistake explains: a part whose count is short by exactly some
    of its own weights, e.g. attention short by d² + d: one d×d matrix and one vector of d (W_o and
    b_o, or W_q and b_q...). Said only when every way of making up the difference from the part's
    weights takes the same kinds."""

    def explain(part, delta):
        weights = parts(d, d_ff, d_kv, style)[part]
        ways = [
            subset
            for r in range(1, len(weights) + 1)
            for subset in combinations(weights, r)
            if sum(size for _, size, _ in subset) == -delta
        ]
        if delta > 0 or len({tuple(sorted(kind for _, _, kind in subset)) for subset in ways}) != 1:
            return None
        said = []
        for kind, n in Counter(kind for _, _, kind in ways[0]).items():
            names = [name for name, _, k in weights if k == kind]
            plural = kind.replace("matrix", "matrices").replace("vector", "vectors")
            which = (
                names[0]
                if len(names) == 1
                else (f"all {n}: " if n == len(names) else f"{n} of ") + ", ".join(names)
            )
            said.append(f"{n} {plural if n > 1 else kind} ({which})")
        return f"{part} is short by {-delta:,}: {' and '.join(said)}"

    def diagnose(got, expected, same):
        right = expected[0]
        # counts only: an array, a string, NaN or a fraction says nothing of the weights missing
        names = ("attention", "mlp", "norm")
        if type(got) is not dict or not all(_whole(got.get(part)) for part in names):
            return None
        deltas = {part: int(got[part]) - right[part] for part in names}
        said = [explain(part, delta) for part, delta in deltas.items() if delta]
        if not said or None in said:
            return None
        return Diagnosis("hint.counts_off", "; ".join(said))

    return diagnose


@pytest.mark.points(2)
def test_gpt2_small_block_768_12(student, mistakes):
    """A GPT-2 small block (d_model 768, 12 heads) has 7,087,872 parameters = 12 d^2 + 13 d."""
    got = student.count_params(768, 12)
    assert_equal(
        got,
        GPT2_SMALL,
        what="count_params(768, 12) for a GPT-2 block (attention 4d² + 4d, mlp 2·d·d_ff + d_ff + d "
        "with "
        "d_ff = 4d, norm 4d)",
        diagnose=either(mistakes.count_params(768, 12), counts_off(768, 3072, 768)),
    )


@pytest.mark.points(1.25)
def test_llama3_8b_block_with_d_ff_14336(student, mistakes):
    """A Llama 3 8B block (4096, 32 heads, 8 K/V heads, d_ff 14336) has 218,112,000 parameters."""
    got = student.count_params(4096, 32, 8, 14336, style="llama")
    assert_equal(
        got,
        {"attention": 41_943_040, "mlp": 176_160_768, "norm": 8_192, "total": 218_112_000},
        what='count_params(4096, 32, 8, 14336, style="llama") (attention 2d² + '
        "2·d·n_kv_heads·d_head, "
        "mlp 3·d·d_ff, norm 2d)",
        diagnose=either(
            mistakes.count_params(4096, 32, 8, 14336, style="llama"),
            counts_off(4096, 14336, 1024, "llama"),
        ),
    )


@pytest.mark.points(0.5)
def test_llama_default_d_ff_at_4096(student, mistakes):
    """The course script's block (4096, 32 heads, 8 K/V heads, default d_ff = 11008) has 177,217,536
    parameters."""
    got = student.count_params(4096, 32, 8, style="llama")
    assert_equal(
        got,
        {"attention": 41_943_040, "mlp": 135_266_304, "norm": 8_192, "total": 177_217_536},
        what='count_params(4096, 32, 8, style="llama") with the default d_ff = '
        "round(8·4096/3/256)·256 "
        "= 11008",
        diagnose=either(
            mistakes.count_params(4096, 32, 8, style="llama"),
            counts_off(4096, 11008, 1024, "llama"),
        ),
    )


@pytest.mark.points(0.25)
def test_llama_default_d_ff_at_2048_rounds_to_the_nearest(student, mistakes):
    """At d = 2048, 8d/3/256 is 21.33: round gives 21 (d_ff = 5376) where rounding up (ceil) would
    give 22."""
    got = student.count_params(2048, 16, 8, style="llama")
    assert_equal(
        got,
        {"attention": 12_582_912, "mlp": 33_030_144, "norm": 4_096, "total": 45_617_152},
        what='count_params(2048, 16, 8, style="llama") with the default d_ff = '
        "round(8·2048/3/256)·256 "
        "= 21·256 = 5376 (round to the nearest multiple of 256, not up)",
        diagnose=mistakes.count_params(2048, 16, 8, style="llama"),
    )


@pytest.mark.property
@pytest.mark.points(0.5)
def test_the_four_keys_and_nothing_else(student):
    """The dict has exactly the keys "attention", "mlp", "norm" and "total"."""
    assert_keys(
        student.count_params(768, 12),
        GPT2_SMALL,
        what="the keys of count_params(768, 12) (exactly attention, mlp, norm, total)",
    )


@pytest.mark.property
@pytest.mark.points(0.5)
def test_counts_are_python_ints(student):
    """Each count is a Python int: not a float such as 7087872.0, not a numpy integer (int(...)
    makes one)."""
    assert_types(
        student.count_params(768, 12),
        GPT2_SMALL,
        what="the counts of count_params(768, 12) (Python ints)",
    )
