"""Hidden tests for count_params(d_model, n_heads, n_kv_heads=None, d_ff=None, style="gpt2").

Expected counts come from the reference solution. Aimed at: GPT-2's default d_ff (4d), the biases of
the linear layers, LayerNorm's beta, an explicit d_ff, Llama's n_kv_heads (default n_heads, and
grouped-query K/V), Llama's default d_ff below 256 and its rounding with Python's round. The count
tests compare values (7.0 counts as 7); the spec's other rules are tests of their own
(`@pytest.mark.property`): an unknown style raises ValueError, the counts are Python ints, the total
is the sum of the parts, a GPT-2 count does not depend on n_heads, and n_kv_heads = n_heads is
Llama's default (checked on the student's own counts).
"""

import pytest

from grader.feedback.compare import ATTEMPT, assert_equal, assert_raises, assert_types


@pytest.mark.points(1)
def test_gpt2_default_d_ff_is_4_d_model(student, reference, mistakes):
    """GPT-2 medium's block (1024, 16 heads) uses d_ff = 4 * 1024 by default."""
    got = student.count_params(1024, 16)
    assert_equal(
        got,
        reference.count_params(1024, 16),
        what="count_params(1024, 16) for a GPT-2 block (default d_ff = 4 * d_model)",
        diagnose=mistakes.count_params(1024, 16),
    )


@pytest.mark.points(0.5)
def test_gpt2_ignores_n_kv_heads(student, reference, mistakes):
    """n_kv_heads is Llama's: a GPT-2 block's W_k and W_v are d × d whatever it says (GPT-2 small
    with 4 given)."""
    got = student.count_params(768, 12, 4)
    assert_equal(
        got,
        reference.count_params(768, 12, 4),
        what="count_params(768, 12, 4) for a GPT-2 block (n_kv_heads is ignored: attention "
        "4d² + 4d)",
        diagnose=mistakes.count_params(768, 12, 4),
    )


@pytest.mark.points(1)
def test_gpt2_explicit_d_ff(student, reference, mistakes):
    """A GPT-2 block with an explicit d_ff = 1000 uses it for both MLP matrices and the first
    bias."""
    got = student.count_params(256, 4, d_ff=1000)
    assert_equal(
        got,
        reference.count_params(256, 4, d_ff=1000),
        what="count_params(256, 4, d_ff=1000) for a GPT-2 block (mlp 2·d·d_ff + d_ff + d)",
        diagnose=mistakes.count_params(256, 4, d_ff=1000),
    )


@pytest.mark.points(1)
def test_gpt2_counts_biases_and_layernorm_beta(student, reference, mistakes):
    """GPT-2 counts a bias for each of W_q, W_k, W_v, W_o and both MLP layers, and gamma and beta of
    both LayerNorms."""
    got = student.count_params(100, 5)
    assert_equal(
        got,
        reference.count_params(100, 5),
        what="count_params(100, 5) for a GPT-2 block (attention 4d² + 4d with biases, norm 4d: "
        "gamma and beta for two LayerNorms)",
        diagnose=mistakes.count_params(100, 5),
    )


@pytest.mark.points(1)
def test_llama_kv_heads_default_to_n_heads(student, reference, mistakes):
    """A Llama block without n_kv_heads has as many K/V heads as query heads (full multi-head
    attention)."""
    got = student.count_params(2048, 16, style="llama")
    assert_equal(
        got,
        reference.count_params(2048, 16, style="llama"),
        what='count_params(2048, 16, style="llama") (n_kv_heads defaults to n_heads; default d_ff)',
        diagnose=mistakes.count_params(2048, 16, style="llama"),
    )


@pytest.mark.points(1)
def test_llama_grouped_query_kv_heads(student, reference, mistakes):
    """A Llama block with 16 query heads and 4 K/V heads: W_k and W_v are d x (4 * d_head)."""
    got = student.count_params(1024, 16, 4, 2816, style="llama")
    assert_equal(
        got,
        reference.count_params(1024, 16, 4, 2816, style="llama"),
        what='count_params(1024, 16, 4, 2816, style="llama") (W_k and W_v have n_kv_heads·d_head '
        "columns)",
        diagnose=mistakes.count_params(1024, 16, 4, 2816, style="llama"),
    )


@pytest.mark.points(1)
def test_llama_small_d_default_d_ff(student, reference, mistakes):
    """Below d = 256 Llama's default d_ff is 8 * d // 3 (533 for d = 200)."""
    got = student.count_params(200, 8, 2, style="llama")
    assert_equal(
        got,
        reference.count_params(200, 8, 2, style="llama"),
        what='count_params(200, 8, 2, style="llama") (d < 256: default d_ff = 8·d // 3)',
        diagnose=mistakes.count_params(200, 8, 2, style="llama"),
    )


@pytest.mark.points(0.5)
def test_llama_default_d_ff_uses_python_round(student, reference, mistakes):
    """For d = 2352, 8d/3/256 is exactly 24.5 and Python's round gives 24, so d_ff = 6144."""
    got = student.count_params(2352, 12, 4, style="llama")
    assert_equal(
        got,
        reference.count_params(2352, 12, 4, style="llama"),
        what='count_params(2352, 12, 4, style="llama") (default d_ff = round(8·d/3/256)·256 with '
        "Python's round, which rounds 24.5 to 24)",
        diagnose=mistakes.count_params(2352, 12, 4, style="llama"),
    )


# The spec's other rules, one test each.


@pytest.mark.property
@pytest.mark.points(1)
def test_an_unknown_style_raises_value_error(student):
    """count_params(..., style="gpt3") raises ValueError: only "gpt2" and "llama" are known (and a
    known style raises nothing: a count_params that raises ValueError whatever it is given earns
    nothing here)."""
    known = student.count_params(768, 12)
    assert_equal(
        type(known) is dict,
        True,
        what="count_params(768, 12) before an unknown style (a known style "
        "gives a dict of counts, so that raising for an unknown one counts)",
    )
    assert_raises(
        lambda: student.count_params(768, 12, style="gpt3"),
        ValueError,
        what='count_params(768, 12, style="gpt3") (an unknown style raises ValueError)',
    )


@pytest.mark.property
@pytest.mark.points(0.5)
def test_llama_counts_are_python_ints(student, reference):
    """A Llama count is a dict of Python ints too (int(...) of a float or a numpy integer)."""
    got, expected = (
        student.count_params(1024, 16, 4, style="llama"),
        reference.count_params(1024, 16, 4, style="llama"),
    )
    what = 'the counts of count_params(1024, 16, 4, style="llama") (Python ints)'
    _counts(got, expected, what)
    assert_types(got, expected, what=what)


KEYS = ("attention", "mlp", "norm", "total")


def _counts(got, expected: dict, what: str) -> dict:
    """The student's own four counts, to compare others with, each checked to be a number within 30
    % of the expected count (counts that ignore their input, a constant dict say, would hold every
    property and prove nothing; a forgotten bias or a wrong default d_ff is well inside). Other keys
    are the public test's."""
    counts = {key: got[key] for key in KEYS if key in got} if type(got) is dict else {}
    near = {
        key: isinstance(value, (int, float))
        and not isinstance(value, bool)
        and abs(value - expected[key]) <= ATTEMPT * expected[key]
        for key, value in counts.items()
    }
    assert_equal(
        near,
        dict.fromkeys(KEYS, True),
        what=what + f": each count a number within {ATTEMPT:.0%} of the specified one",
    )
    return counts


@pytest.mark.property
@pytest.mark.points(0.5)
def test_total_is_the_sum_of_the_parts(student, reference):
    """total = attention + mlp + norm, for a GPT-2 and a Llama block."""
    for args, kwargs in [((512, 8), {}), ((512, 8, 2), {"style": "llama"})]:
        what = "total against attention + mlp + norm, on your own counts"
        got = _counts(
            student.count_params(*args, **kwargs), reference.count_params(*args, **kwargs), what
        )
        assert_equal(got["total"], got["attention"] + got["mlp"] + got["norm"], what=what)


@pytest.mark.property
@pytest.mark.points(0.5)
def test_gpt2_counts_do_not_depend_on_n_heads(student, reference):
    """Splitting d_model into more heads changes no matrix of a GPT-2 block: 4 heads or 16, the same
    count."""
    what = (
        "count_params(512, 4) against count_params(512, 16), on your own counts (the heads only "
        "split W_q, W_k, W_v)"
    )
    assert_equal(
        student.count_params(512, 16),
        _counts(student.count_params(512, 4), reference.count_params(512, 4), what),
        what=what,
    )


@pytest.mark.property
@pytest.mark.points(0.5)
def test_llama_n_kv_heads_equal_to_n_heads_is_the_default(student, reference):
    """n_kv_heads = n_heads given explicitly counts what leaving it out counts."""
    what = (
        'count_params(640, 10, 10, style="llama") against count_params(640, 10, style="llama"), on '
        "your own counts"
    )
    assert_equal(
        student.count_params(640, 10, 10, style="llama"),
        _counts(
            student.count_params(640, 10, style="llama"),
            reference.count_params(640, 10, style="llama"),
            what,
        ),
        what=what,
    )
