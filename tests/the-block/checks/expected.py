"""What the shared course checks (tests/checks/test_course.py) expect of the-block: its data, no
code. Its mistakes as students write them (MUTANTS) and its other single faults (FAULTS) live in
mutants.py, which the unit tests and tests/bench/ use too."""

from mutants import FAULTS, MUTANTS  # noqa: F401  (the shared checks read them here)

F, Z, N = "full", "zero", "not_full"
EXAMPLES = {  # layernorm, gelu, attention, block, params
    "ada_correct": (F, F, F, F, F),
    "alan_ddof1": (N, F, F, F, F),
    "barbara_import_error": (
        F,
        F,
        Z,
        F,
        F,
    ),  # block.py imports the broken attention.py: its wiring is judged
    "edsger_post_ln": (F, F, F, N, F),
    "grace_partial": (F, F, Z, Z, Z),
    "kathy_erf_gelu": (F, N, F, F, F),
    "linus_no_mask": (F, F, N, F, F),
    # the modern block's students, in this assignment too (one class: make demo)
    "claude_sigmoid_silu": (F, N, F, F, F),
    "emmy_mean_subtracted": (F, F, N, F, F),
    "hedy_tiled_kv": (F, F, N, F, F),
}

NAMED_TESTS = {  # tests the course text asks for by name
    "layernorm": [
        "test_course_layernorm_of_h5",
        "test_row_times_10_changes_nothing",
        "test_eps_0_1_on_random_rows",
        "test_layernorm_leaves_its_inputs_unchanged",
    ],
    "attention": [
        "test_course_h5_is_x5_plus_attention",
        "test_changing_last_token_leaves_earlier_rows_unchanged",
        "test_softmax_scores_shifted_by_100_in_float32",
        "test_softmax_scores_times_1000",
        "test_two_heads_distinct_weights",
    ],
    "block": [
        "test_mlp_course_m5_for_the",
        "test_block_course_y5_for_the",
        "test_block_attention_off_course_row",
    ],
    "gelu": ["test_tanh_form_not_erf_near_2_7"],
}

# The usual mistakes the issues asked the catalogue for (the first issue's list, then issue 14's).
MUST_NAME = {
    "layernorm.ddof1",
    "layernorm.eps_outside",
    "layernorm.no_eps",
    "layernorm.axis",
    "layernorm.no_affine",
    "gelu.erf",
    "gelu.sigmoid",
    "gelu.constant",
    "softmax.no_max",
    "softmax.axis",
    "attention.mask_diagonal",
    "attention.mask_leak",
    "attention.no_mask",
    "attention.mask_zero",
    "attention.scale_d_model",
    "attention.head_split",
    "block.post_ln",
    "block.no_residual_attention",
    "block.no_residual_mlp",
    "block.residual_from_normalised",
    "block.ignores_use_attention",
    "params.no_bias",
    "params.no_beta",
    "params.n_kv_heads",
    "layernorm.rms",
    "attention.transposed",
    "attention.no_w_o",
    "attention.heads_reversed",
    "attention.head_interleaved",
    "softmax.no_keepdims",
    "attention.scale_d_head",
    "gelu.no_half",
    "gelu.square",
    "layernorm.no_beta",
    "layernorm.eps_after",
    "block.second_norm_params",
    "params.meta_rounding",
    "layernorm.eps",
    "params.no_w_o",
}

# Two mistakes in one submission, in two modules or in two places of one: both named, nothing else.
PAIRS = [
    ("mlp.no_gelu", "gelu.relu"),
    ("block.post_ln", "layernorm.ddof1"),
    ("attention.no_mask", "gelu.relu"),
    ("attention.scale_d_model", "block.no_residual_mlp"),
    ("layernorm.no_affine", "params.no_bias"),
]

NAMED_IN_RELEASE = [
    "layernorm.ddof1",
    "gelu.erf",
    "attention.no_mask",
    "block.post_ln",
    "params.no_bias",
]

LAST = "y = block(x)"
TRACE = {  # --case (None: the example itself) -> what its trace shows
    None: ["attention weights", LAST],
    "row_x10=3": ["attention weights", LAST],
    "change_last": ["attention weights", LAST],
    "no_attention": ["h = x (attention off)", LAST],
    "random": ["head 2's attention weights", LAST],
}
