"""Public tests for count_params(d_model, n_heads, n_kv_heads=None, d_ff=None, style="gpt2"): the parameters of
one block as a dict of Python ints {"attention", "mlp", "norm", "total"}.

"gpt2": biases everywhere, two LayerNorms with gamma and beta, d_ff defaults to 4 * d_model.
"llama": no biases, two RMSNorm gains, SwiGLU (3 matrices), grouped-query K/V; d_ff defaults to
round(8 * d / 3 / 256) * 256 for d >= 256 (Python's round), else 8 * d // 3.
The expected counts are the course's (GPT-2 small; the Llama 3 8B block; the course script at d = 4096).
The count tests compare the values (7.0 counts as 7); two small tests of their own check the dict's keys and
that the counts are Python ints.
"""
import pytest

from grader.compare import assert_equal, assert_keys, assert_types

GPT2_SMALL = {"attention": 2_362_368, "mlp": 4_722_432, "norm": 3_072, "total": 7_087_872}


@pytest.mark.points(2)
def test_gpt2_small_block_768_12(student, mistakes):
    """A GPT-2 small block (d_model 768, 12 heads) has 7,087,872 parameters = 12 d^2 + 13 d."""
    got = student.count_params(768, 12)
    assert_equal(got, GPT2_SMALL,
                 what="count_params(768, 12) for a GPT-2 block (attention 4d² + 4d, mlp 2·d·d_ff + d_ff + d with "
                      "d_ff = 4d, norm 4d)",
                 diagnose=mistakes.count_params(768, 12))


@pytest.mark.points(1.25)
def test_llama3_8b_block_with_d_ff_14336(student, mistakes):
    """A Llama 3 8B block (4096, 32 heads, 8 K/V heads, d_ff 14336) has 218,112,000 parameters."""
    got = student.count_params(4096, 32, 8, 14336, style="llama")
    assert_equal(got, {"attention": 41_943_040, "mlp": 176_160_768, "norm": 8_192, "total": 218_112_000},
                 what="count_params(4096, 32, 8, 14336, style=\"llama\") (attention 2d² + 2·d·n_kv_heads·d_head, "
                      "mlp 3·d·d_ff, norm 2d)",
                 diagnose=mistakes.count_params(4096, 32, 8, 14336, style="llama"))


@pytest.mark.points(0.5)
def test_llama_default_d_ff_at_4096(student, mistakes):
    """The course script's block (4096, 32 heads, 8 K/V heads, default d_ff = 11008) has 177,217,536 parameters."""
    got = student.count_params(4096, 32, 8, style="llama")
    assert_equal(got, {"attention": 41_943_040, "mlp": 135_266_304, "norm": 8_192, "total": 177_217_536},
                 what="count_params(4096, 32, 8, style=\"llama\") with the default d_ff = round(8·4096/3/256)·256 "
                      "= 11008",
                 diagnose=mistakes.count_params(4096, 32, 8, style="llama"))


@pytest.mark.points(0.25)
def test_llama_default_d_ff_at_2048_rounds_to_the_nearest(student, mistakes):
    """At d = 2048, 8d/3/256 is 21.33: round gives 21 (d_ff = 5376) where rounding up (ceil) would give 22."""
    got = student.count_params(2048, 16, 8, style="llama")
    assert_equal(got, {"attention": 12_582_912, "mlp": 33_030_144, "norm": 4_096, "total": 45_617_152},
                 what="count_params(2048, 16, 8, style=\"llama\") with the default d_ff = round(8·2048/3/256)·256 "
                      "= 21·256 = 5376 (round to the nearest multiple of 256, not up)",
                 diagnose=mistakes.count_params(2048, 16, 8, style="llama"))


@pytest.mark.property
@pytest.mark.points(0.5)
def test_the_four_keys_and_nothing_else(student):
    """The dict has exactly the keys "attention", "mlp", "norm" and "total"."""
    assert_keys(student.count_params(768, 12), GPT2_SMALL,
                what="the keys of count_params(768, 12) (exactly attention, mlp, norm, total)")


@pytest.mark.property
@pytest.mark.points(0.5)
def test_counts_are_python_ints(student):
    """Each count is a Python int: not a float such as 7087872.0, not a numpy integer (int(...) makes one)."""
    assert_types(student.count_params(768, 12), GPT2_SMALL, what="the counts of count_params(768, 12) (Python ints)")
