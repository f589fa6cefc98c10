"""Hidden tests for count_model(d_model, n_heads, n_kv_heads, n_layers, vocab_size, d_ff=None,
tied=False).

The course text's numbers are written out here: d = 4096, 32 heads, 8 K/V heads give attention
41,943,040, mlp 135,266,304, norm 8,192, block 177,217,536 and 32 blocks 5,670,961,152; Llama 3 8B
totals 8,030,261,248. Tests with the default d_ff use the reference's swiglu_width (another
problem's), or the count's own lines' width where it computes one: at d = 2048 and 200 the nearest
multiple, Meta's rounding up and a rule without its minimum give three answers. Aimed at: n_kv_heads
ignored, tied embeddings counted twice, the final norm forgotten; ints and total = sum of the parts
(properties).
"""

import pytest

from grader.feedback.compare import ATTEMPT, assert_equal, assert_types

COURSE_BLOCK = {
    "attention": 41_943_040,
    "mlp": 135_266_304,
    "norm": 8_192,
    "block": 177_217_536,
    "blocks": 5_670_961_152,
}


@pytest.mark.points(1.5)
def test_course_counts_d_4096_32_heads_8_kv_heads(student, mistakes):
    """The course's block at d = 4096 (32 heads, 8 K/V, default d_ff 11008), 32 of them:
    5,670,961,152."""
    got = student.count_model(4096, 32, 8, 32, 128256)
    assert_equal(
        got,
        COURSE_BLOCK,
        what="count_model(4096, 32, 8, 32, 128256)'s attention, mlp, norm, block and "
        "blocks (the course's 41.9 M, 135.3 M, 8,192, 177.2 M and 5.67 B)",
        diagnose=mistakes.count_model(4096, 32, 8, 32, 128256),
    )


@pytest.mark.points(1)
def test_llama3_8b_total_8_030_261_248(student, mistakes):
    """Llama 3 8B (vocab 128,256, d_ff 14,336, untied): total 8,030,261,248."""
    got = student.count_model(4096, 32, 8, 32, 128256, 14336)
    assert_equal(
        got,
        {"total": 8_030_261_248},
        what="count_model(4096, 32, 8, 32, 128256, d_ff=14336)['total'] (Llama 3 8B)",
        diagnose=mistakes.count_model(4096, 32, 8, 32, 128256, 14336),
    )


@pytest.mark.points(1)
def test_tied_embeddings_counted_once(student, reference, mistakes):
    """A tied model (d = 1536, 12 heads, 4 K/V, 28 layers, vocab 151,936) has output 0."""
    got = student.count_model(1536, 12, 4, 28, 151936, 8960, tied=True)
    assert_equal(
        got,
        reference.count_model(1536, 12, 4, 28, 151936, 8960, tied=True),
        what="count_model(1536, 12, 4, 28, 151936, d_ff=8960, tied=True) (output 0: the embedding "
        "is shared)",
        diagnose=mistakes.count_model(1536, 12, 4, 28, 151936, 8960, tied=True),
    )


@pytest.mark.points(0.5)
def test_multi_head_kv_counts(student, reference, mistakes):
    """n_kv_heads = n_heads: W_k and W_v are d × d, attention 4 d²."""
    got = student.count_model(768, 12, 12, 12, 50257, 2048)
    assert_equal(
        got,
        reference.count_model(768, 12, 12, 12, 50257, 2048),
        what="count_model(768, 12, 12, 12, 50257, d_ff=2048) (n_kv_heads = n_heads)",
        diagnose=mistakes.count_model(768, 12, 12, 12, 50257, 2048),
    )


@pytest.mark.points(1)
def test_default_d_ff_below_256(student, reference, mistakes):
    """d = 96 (below 256): the default d_ff is 8 * 96 // 3 = 256."""
    got = student.count_model(96, 4, 2, 3, 1000)
    assert_equal(
        got,
        reference.count_model(96, 4, 2, 3, 1000),
        what="count_model(96, 4, 2, 3, 1000) (default d_ff 8 d // 3 below 256)",
        diagnose=mistakes.count_model(96, 4, 2, 3, 1000),
    )


@pytest.mark.points(1.5)
def test_default_d_ff_where_the_rounding_rules_disagree(student, reference, mistakes):
    """The default d_ff where the plausible rules give three answers: d = 2048 (8d/3/256 = 21.33:
    the nearest multiple of 256 is 5376, Meta's rounding up 5632) and d = 200 (below 256: 8d // 3 =
    533; without that rule 512, rounded up 768). At d = 96 and 4096 they all agree."""
    for args in [(2048, 16, 8, 16, 32000), (200, 8, 2, 4, 1000)]:
        got = student.count_model(*args)
        assert_equal(
            got,
            reference.count_model(*args),
            what=f"count_model{args} (default d_ff: round(8·d/3/256)·256 for d >= 256, "
            "8·d // 3 below)",
            diagnose=mistakes.count_model(*args),
        )


def _near(got, expected, what):
    """The student's counts, each checked to be a number within 30 % of the specified one (a
    constant dict would hold every property and prove nothing)."""
    counts = {key: got[key] for key in expected if key in got} if type(got) is dict else {}
    near = {
        key: isinstance(value, (int, float))
        and not isinstance(value, bool)
        and abs(value - expected[key]) <= ATTEMPT * max(expected[key], 1)
        for key, value in counts.items()
    }
    assert_equal(
        near,
        dict.fromkeys(expected, True),
        what=what + f": each count a number within {ATTEMPT:.0%} of the specified one",
    )
    return counts


@pytest.mark.property
@pytest.mark.points(1)
def test_model_counts_are_python_ints(student, reference):
    """Every count is a Python int (not a float, not a numpy integer)."""
    got, expected = (
        student.count_model(512, 8, 2, 4, 32000, 1536),
        reference.count_model(512, 8, 2, 4, 32000, 1536),
    )
    _near(got, expected, "count_model(512, 8, 2, 4, 32000, d_ff=1536)")
    assert_types(
        got,
        dict.fromkeys(expected, 0),
        what="the types of count_model(512, 8, 2, 4, 32000, d_ff=1536)'s counts",
    )


@pytest.mark.property
@pytest.mark.points(1)
def test_model_total_is_the_sum_of_the_parts(student, reference):
    """total = blocks + embedding + output + final_norm, blocks = n_layers × block, block =
    attention + mlp + norm, on your own counts."""
    what = (
        "count_model(512, 8, 2, 6, 32000, d_ff=1536)'s parts against its sums, on your own counts"
    )
    c = _near(
        student.count_model(512, 8, 2, 6, 32000, 1536),
        reference.count_model(512, 8, 2, 6, 32000, 1536),
        what,
    )
    assert_equal(
        [c["block"], c["blocks"], c["total"]],
        [
            c["attention"] + c["mlp"] + c["norm"],
            6 * c["block"],
            c["blocks"] + c["embedding"] + c["output"] + c["final_norm"],
        ],
        what=what,
    )


@pytest.mark.property
@pytest.mark.points(1)
def test_tying_saves_exactly_the_output_layer(student, reference):
    """Untied minus tied is vocab_size × d_model, on your own totals: tying shares one table,
    nothing else changes."""
    what = (
        "count_model(512, 8, 2, 4, 32000, d_ff=1536)'s total untied minus tied, on your own counts"
    )
    untied = _near(
        student.count_model(512, 8, 2, 4, 32000, 1536),
        reference.count_model(512, 8, 2, 4, 32000, 1536),
        what,
    )
    tied = _near(
        student.count_model(512, 8, 2, 4, 32000, 1536, tied=True),
        reference.count_model(512, 8, 2, 4, 32000, 1536, tied=True),
        what,
    )
    assert_equal(untied["total"] - tied["total"], 32000 * 512, what=what)
