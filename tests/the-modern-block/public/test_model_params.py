"""Public tests for count_model(d_model, n_heads, n_kv_heads, n_layers, vocab_size, d_ff=None,
tied=False): Python ints {"attention", "mlp", "norm", "block", "blocks", "embedding", "output",
"final_norm", "total"}, no biases.

The tests with the default d_ff grade count_model's own lines: when graded, it runs with the
course's own swiglu_width (a rounding mistake there costs points in swiglu only); here, in grade
check, with yours.
"""

import pytest

from grader.feedback.compare import assert_equal, assert_keys

KEYS = ("attention", "mlp", "norm", "block", "blocks", "embedding", "output", "final_norm", "total")


@pytest.mark.points(1.5)
def test_course_block_at_d_4096_32_heads_8_kv_heads(student, mistakes):
    """The course's count: d = 4096, 32 query heads, 8 K/V heads, default d_ff 11008: attention
    41,943,040, mlp 135,266,304, norm 8,192, block 177,217,536, 32 blocks 5,670,961,152."""
    got = student.count_model(4096, 32, 8, 32, 128256)
    assert_equal(
        got,
        {
            "attention": 41_943_040,
            "mlp": 135_266_304,
            "norm": 8_192,
            "block": 177_217_536,
            "blocks": 5_670_961_152,
            "embedding": 525_336_576,
            "output": 525_336_576,
            "final_norm": 4_096,
            "total": 6_721_638_400,
        },
        what="count_model(4096, 32, 8, 32, 128256) "
        "(the course's block at real width, default d_ff)",
        diagnose=mistakes.count_model(4096, 32, 8, 32, 128256),
    )


@pytest.mark.points(1.5)
def test_llama3_8b_total(student, mistakes):
    """Llama 3 8B: d = 4096, 32 heads, 8 K/V heads, 32 layers, vocab 128,256, d_ff 14,336, untied:
    8,030,261,248."""
    got = student.count_model(4096, 32, 8, 32, 128256, 14336)
    assert_equal(
        got,
        {
            "attention": 41_943_040,
            "mlp": 176_160_768,
            "norm": 8_192,
            "block": 218_112_000,
            "blocks": 6_979_584_000,
            "embedding": 525_336_576,
            "output": 525_336_576,
            "final_norm": 4_096,
            "total": 8_030_261_248,
        },
        what="count_model(4096, 32, 8, 32, 128256, d_ff=14336) (Llama 3 8B, untied: total "
        "8,030,261,248)",
        diagnose=mistakes.count_model(4096, 32, 8, 32, 128256, 14336),
    )


@pytest.mark.points(0.5)
def test_default_d_ff_at_2048_rounds_to_the_nearest(student, mistakes):
    """d = 2048, 16 heads, 8 K/V heads: 8·2048/3/256 = 21.33, so the default d_ff is 21·256 = 5376
    (rounding up, as Meta's code does, gives 5632; at d = 4096 the two agree)."""
    got = student.count_model(2048, 16, 8, 16, 32000)
    assert_equal(
        got,
        {
            "attention": 12_582_912,
            "mlp": 33_030_144,
            "norm": 4_096,
            "block": 45_617_152,
            "blocks": 729_874_432,
            "embedding": 65_536_000,
            "output": 65_536_000,
            "final_norm": 2_048,
            "total": 860_948_480,
        },
        what="count_model(2048, 16, 8, 16, 32000) (default d_ff = round(8·2048/3/256)·256 = 5376)",
        diagnose=mistakes.count_model(2048, 16, 8, 16, 32000),
    )


@pytest.mark.points(1)
def test_tied_output_is_not_counted_again(student, mistakes):
    """tied=True shares the embedding table with the output layer: output is 0, and the total counts
    the table once."""
    got = student.count_model(2048, 32, 8, 16, 128256, 8192, tied=True)
    assert_equal(
        got,
        {
            "attention": 10_485_760,
            "mlp": 50_331_648,
            "norm": 4_096,
            "block": 60_821_504,
            "blocks": 973_144_064,
            "embedding": 262_668_288,
            "output": 0,
            "final_norm": 2_048,
            "total": 1_235_814_400,
        },
        what="count_model(2048, 32, 8, 16, 128256, d_ff=8192, tied=True) (Llama 3.2 1B: output 0)",
        diagnose=mistakes.count_model(2048, 32, 8, 16, 128256, 8192, tied=True),
    )


@pytest.mark.property
@pytest.mark.points(1)
def test_the_nine_keys_and_nothing_else(student):
    """The result is a dict with exactly the nine keys."""
    assert_keys(
        student.count_model(64, 4, 2, 2, 100, 128),
        dict.fromkeys(KEYS, 0),
        what="count_model(64, 4, 2, 2, 100, d_ff=128)'s keys",
    )
