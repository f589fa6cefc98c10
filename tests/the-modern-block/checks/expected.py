"""What the shared course checks (tests/checks/test_course.py) expect of the-modern-block: its data,
no code."""

REPEAT = "k, v = (t.repeat(n_heads // n_kv_heads, axis=0) for t in (k, v))"

# mistake id -> (module, [(old, new), ...]): each written the way a student writes it,
# independently of the catalogue's variants (so a variant that models its mistake wrongly shows up
# as a mutant with no diagnosis).
MUTANTS: dict[str, tuple[str, list[tuple[str, str]]]] = {
    "rmsnorm.mean_subtracted": (
        "rmsnorm",
        [("    ms = (x * x)", "    x = x - x.mean(axis=-1, keepdims=True)\n    ms = (x * x)")],
    ),
    "rmsnorm.no_eps": ("rmsnorm", [("np.sqrt(ms + eps)", "np.sqrt(ms)")]),
    "rmsnorm.axis": (
        "rmsnorm",
        [("(x * x).mean(axis=-1, keepdims=True)", "(x * x).mean(axis=0, keepdims=True)")],
    ),
    "silu.sigmoid": ("swiglu", [("return x / (1 + np.exp(-x))", "return 1 / (1 + np.exp(-x))")]),
    "swiglu.swapped": ("swiglu", [("(silu(u @ W_1) * (u @ W_3))", "(silu(u @ W_3) * (u @ W_1))")]),
    "swiglu.gate_outside": (
        "swiglu",
        [("(silu(u @ W_1) * (u @ W_3))", "silu((u @ W_1) * (u @ W_3))")],
    ),
    "swiglu.meta_rounding": (
        "swiglu",
        [
            (
                "return round(8 * d / 3 / 256) * 256 if d >= 256 else 8 * d // 3",
                "hidden = int(8 * d / 3)\n    return 256 * ((hidden + 255) // 256)",
            )
        ],
    ),
    "gqa.tile": (
        "gqa",
        [(REPEAT, "k, v = (np.tile(t, (n_heads // n_kv_heads, 1, 1)) for t in (k, v))")],
    ),
    "gqa.no_repeat": (
        "gqa",
        [(REPEAT, "k, v = k[:1], v[:1]  # one K/V head, broadcast over the query heads")],
    ),
    "gqa.scale_d_model": ("gqa", [("/ math.sqrt(d_head)", "/ math.sqrt(d)")]),
    "modern_block.no_residual": (
        "modern_block",
        [("    return h + swiglu(", "    return swiglu(")],
    ),
    "modern_block.ignores_use_attention": (
        "modern_block",
        [("    if use_attention:\n", "    if True:\n")],
    ),
    "modern_block.gains": (
        "modern_block",
        [
            ('rmsnorm(x, p.get("gain_1"))', 'rmsnorm(x, p.get("gain_2"))'),
            ('rmsnorm(h, p.get("gain_2"))', 'rmsnorm(h, p.get("gain_1"))'),
        ],
    ),
    "model.tied_twice": (
        "model_params",
        [('"output": 0 if tied else vocab_size * d', '"output": vocab_size * d')],
    ),
    "model.n_kv_heads": ("model_params", [("2 * d * n_kv_heads * d_head", "2 * d * d")]),
    "model.meta_rounding": (
        "model_params",
        [
            (
                "d_ff = swiglu_width(d) if d_ff is None else d_ff",
                "d_ff = (int(8 * d / 3) + 255) // 256 * 256 if d_ff is None else d_ff",
            )
        ],
    ),
}

# The list of usual mistakes (section 3), by catalogue id.
MUST_NAME = {
    "rmsnorm.mean_subtracted",
    "rmsnorm.no_eps",
    "rmsnorm.axis",
    "silu.sigmoid",
    "swiglu.swapped",
    "swiglu.gate_outside",
    "gqa.tile",
    "gqa.no_repeat",
    "gqa.scale_d_model",
    "swiglu.meta_rounding",
    "model.tied_twice",
}

F, Z, N = "full", "zero", "not_full"
EXAMPLES = {  # rmsnorm, swiglu, gqa, modern_block, model_params
    "ada_correct": (F, F, F, F, F),
    "emmy_mean_subtracted": (N, F, F, F, F),
    "claude_sigmoid_silu": (F, N, F, F, F),
    "hedy_tiled_kv": (F, F, N, F, F),
    "grace_partial": (F, F, Z, Z, Z),  # the last three: stubs
    # the first assignment's students, in this one too (one class: make demo)
    "alan_ddof1": (F, F, F, F, F),
    "edsger_post_ln": (F, F, F, F, F),
    "kathy_erf_gelu": (F, F, F, F, F),
    "barbara_import_error": (F, F, Z, F, F),
    "linus_no_mask": (F, F, N, F, F),
}

NAMED_TESTS = {  # the tests section 3 of issue 15 asks for by name
    "gqa": [
        "test_gqa_course_d8_walk",
        "test_gqa_multi_query_one_kv_head",
        "test_gqa_with_n_kv_heads_equal_to_n_heads_is_multi_head_attention",
        "test_gqa_changing_last_token_leaves_earlier_rows_unchanged",
    ],
    "rmsnorm": ["test_rmsnorm_row_times_10_changes_nothing"],
    "modern_block": [
        "test_modern_block_course_d8_walk_5_by_8",
        "test_modern_block_use_attention_off",
    ],
    "model_params": [
        "test_course_counts_d_4096_32_heads_8_kv_heads",
        "test_llama3_8b_total_8_030_261_248",
    ],
}

NAMED_IN_RELEASE = ["gqa.tile"]

LAST = "y = modern_block(x)"
TRACE = {  # --case (None: the example itself) -> what its trace shows
    None: ["query head 2's weights", LAST],
    "row_x10=3": ["query head 2's weights", LAST],
    "change_last": ["query head 2's weights", LAST],
    "no_attention": ["h = x (attention off)", LAST],
    "random": ["query head 2's weights", LAST],
}
