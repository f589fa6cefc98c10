"""Phases (grader.grading.phases): the block (and the mlp) graded on their own lines, in a worker
where the other problems' modules are the reference's. A fault inside a component costs points only
in its own problem, however the block holds the component; a fault in the block problem (the block's
wiring, or its mlp) costs the block its points whatever the components do; breaking a component on
purpose never raises the total."""

from __future__ import annotations

import ast
import json
import shutil

import pytest
from conftest import MAX_SCORE, PROJECT, THE_BLOCK, grade, write_tree
from mutants import ATT_RETURN, BLOCK_LN_1, BLOCK_LN_2, FAULTS, LN_RETURN, faulty

# One fault in a component each (catalogued or not, a constant, a transpose, a missing projection, a
# stub, a
# crash, a component that lies when it can tell it is being checked): the block is correct every
# time.
COMPONENT_FAULTS = {
    **{
        name: FAULTS[name].edits
        for name in (
            "gelu_no_half",
            "gelu_stub",
            "layernorm.ddof1",
            "ln_no_beta",
            "ln_eps_1e6",
            "ln_exits",
            "att_no_w_o",
            "att_reversed_heads",
            "att_pytorch_layout",
            "softmax_no_keepdims",
            "ln_syntax_error",
            "ln_missing",
        )
    },
    # an import that never ends: the worker is killed, and the next one does not run layernorm.py
    # again
    "ln_hangs_at_import": {
        "layernorm": [("import numpy as np\n", "import numpy as np\n\nwhile True:\n    pass\n")]
    },
    # a layernorm that returns zeros when the block calls it (and is right when tested alone)
    "ln_lies_in_block": {
        "layernorm": [
            (
                LN_RETURN,
                "import sys\n    if sys._getframe(1).f_code.co_name == 'block':\n"
                "        return np.zeros_like(x)\n    " + LN_RETURN,
            )
        ]
    },
    "two_faults": {**FAULTS["gelu.constant"].edits, **FAULTS["layernorm.ddof1"].edits},
}
# The block's own mistakes, with right components and with components that try to make up for them.
WIRING_FAULTS = {
    "block_post_ln": {
        "block": [
            (BLOCK_LN_1, "u = x"),
            (
                'h = x + attention(u, p["W_q"], p["W_k"], p["W_v"], p["W_o"], n_heads)',
                'h = layernorm(x + attention(u, p["W_q"], p["W_k"], p["W_v"], p["W_o"], n_heads), '
                'p.get("gamma_1"), p.get("beta_1"))',
            ),
            (BLOCK_LN_2, "u = h"),
            (
                'return h + mlp(u, p["W_1"], p["W_2"])',
                'return layernorm(h + mlp(h, p["W_1"], p["W_2"]), p.get("gamma_2"), '
                'p.get("beta_2"))',
            ),
        ]
    },
    "block_no_gamma_beta": {
        "block": [(BLOCK_LN_1, "u = layernorm(x)"), (BLOCK_LN_2, "u = layernorm(h)")]
    },
    # in the catalogue (block.second_norm_params): the second LayerNorm with the first one's gamma
    # and beta
    "block_gamma_1_twice": {
        "block": [(BLOCK_LN_2, 'u = layernorm(h, p.get("gamma_1"), p.get("beta_1"))')]
    },
    # not in the catalogue: the first LayerNorm with the second one's gamma and beta
    "block_gamma_2_first": {
        "block": [(BLOCK_LN_1, 'u = layernorm(x, p.get("gamma_2"), p.get("beta_2"))')]
    },
}
# The block's own spec rules: never modify x or params, never call attention when it is switched
# off; and mlp's
# own mistake with GELU after W_2 (random MLP weights expose it; the course's make u @ W_1 @ W_2 =
# 0).
WIRING_FAULTS.update(
    {
        "block_modifies_x": {"block": [("h = x + attention(u,", "h += attention(u,")]},
        "block_adds_params_keys": {
            "block": [
                (
                    "    p = params\n",
                    "    p = params\n    for i in (1, 2):\n"
                    "        p.setdefault(f'gamma_{i}', None)\n        p.setdefault(f'beta_{i}', "
                    "None)\n",
                )
            ]
        },
        "block_attention_thrown_away": {
            "block": [
                ("if use_attention:", "if True:"),
                (
                    'h = x + attention(u, p["W_q"], p["W_k"], p["W_v"], p["W_o"], n_heads)',
                    'a = attention(u, p["W_q"], p["W_k"], p["W_v"], p["W_o"], n_heads)\n'
                    "        h = x + a if use_attention else x",
                ),
            ]
        },
        "mlp_gelu_after_w_2": {
            "block": [("return gelu(u @ W_1) @ W_2", "return gelu(u @ W_1 @ W_2)")]
        },
        "mlp.no_gelu": FAULTS["mlp.no_gelu"].edits,
    }
)

# An attention calling a wrong softmax: only attention points are lost (softmax is the attention
# problem's own,
# and the block runs with the reference's). The attention's own mistakes: only attention points, and
# a numeric slip
# (a wrong scale, float32 arithmetic inside) keeps every property test's points.
SOFTMAX_FAULTS = {
    "softmax_stub": {
        "attention": [
            ("    e = np.exp(s - s.max(axis=axis, keepdims=True))", "    raise NotImplementedError")
        ]
    },
    "softmax_no_max": {"attention": [("np.exp(s - s.max(axis=axis, keepdims=True))", "np.exp(s)")]},
    "softmax_fixed_axis": {"attention": [("axis=axis", "axis=-1")]},
}
ATT_QKV = "q, k, v = u @ W_q, u @ W_k, u @ W_v"
ATT_MASK = "scores = np.where(causal_mask(q.shape[-2]), scores, -np.inf)"
ATT_SCORES = "scores = q @ k.swapaxes(-2, -1) / math.sqrt(q.shape[-1])"
# A near miss in the numbers (float32 arithmetic inside) keeps every property test's points; a wrong
# scale is a
# wrong formula, whose outputs move more than the property tests' 30 % (compare.ATTEMPT) in some of
# them.
SCALES = {
    "att_scale_d_head": {
        "attention": [(ATT_SCORES, "scores = q @ k.swapaxes(-2, -1) / q.shape[-1]")]
    },
    "att_scale_d_model": {
        "attention": [
            (ATT_QKV, "q, k, v = u @ W_q * math.sqrt(d_head / d_model), u @ W_k, u @ W_v")
        ]
    },
}
NUMERIC_SLIPS = {
    "att_float32_inside": {
        "attention": [
            (
                ATT_QKV,
                "dtype = u.dtype\n    u, W_q, W_k, W_v, W_o = (a.astype(np.float32) "
                "for a in (u, W_q, W_k, W_v, W_o))\n    " + ATT_QKV,
            ),
            (ATT_RETURN, "return (np.concatenate(out, axis=-1) @ W_o).astype(dtype)"),
        ]
    },
}
ATTENTION_FAULTS = {
    **SCALES,
    **NUMERIC_SLIPS,
    # wrong only from row 5 on: the row-by-row checks over 16 to 64 tokens see it
    "att_mask_from_row_5": {
        "attention": [
            (
                "return np.tri(n, dtype=bool)",
                "m = np.tri(n, dtype=bool)\n"
                "    m[5:] = np.tri(n, k=1, dtype=bool)[5:]\n    return m",
            )
        ]
    },
    "att_mask_minus_1000": {"attention": [(ATT_MASK, ATT_MASK.replace("-np.inf", "-1000.0"))]},
    "att_modifies_u": {"attention": [(ATT_QKV, ATT_QKV + "\n    u *= 0.5")]},
    "att_reversed_heads": COMPONENT_FAULTS["att_reversed_heads"],
}
# Right attentions written another way: a strong enough finite mask, all heads in one softmax call.
RIGHT_ATTENTIONS = {
    "att_mask_minus_1e9": {"attention": [(ATT_MASK, ATT_MASK.replace("-np.inf", "-1e9"))]},
    "att_mask_finfo_min": {
        "attention": [(ATT_MASK, ATT_MASK.replace("-np.inf", "np.finfo(scores.dtype).min"))]
    },
    "att_stacked_heads": {
        "attention": [
            (
                "    heads = [slice(h * d_head, (h + 1) * d_head) for h in range(n_heads)]\n"
                "    out = [attend(q[..., s], k[..., s], v[..., s], causal) for s in heads]  # "
                "n_heads x (n, d_head)\n"
                "    " + ATT_RETURN + "  # (n, d_model) @ (d_model, d_model) -> (n, d_model)\n",
                "    n = u.shape[0]\n"
                "    qh, kh, vh = (t.reshape(n, n_heads, d_head).transpose(1, 0, 2) for t in (q, "
                "k, v))\n"
                "    scores = qh @ kh.transpose(0, 2, 1) / math.sqrt(d_head)\n"
                "    if causal:\n        scores = np.where(np.tri(n, dtype=bool), scores, "
                "-np.inf)\n"
                "    return (softmax(scores, axis=-1) @ vh).transpose(1, 0, 2).reshape(n, d_model) "
                "@ W_o\n",
            )
        ]
    },
}


def property_tests() -> set[str]:
    """The names of the course's property tests (@pytest.mark.property) in the attention and block
    suites."""
    names = set()
    for suite in ("public", "hidden"):
        for problem in ("attention", "block"):
            tree = ast.parse(
                (PROJECT / "tests" / THE_BLOCK / suite / f"test_{problem}.py").read_text()
            )
            names |= {
                f.name
                for f in tree.body
                if isinstance(f, ast.FunctionDef)
                and any(ast.unparse(d) == "pytest.mark.property" for d in f.decorator_list)
            }
    return names


# A right block holding layernorm another way than `from layernorm import layernorm`.
HOLDS = {
    "module": [
        ("from layernorm import layernorm", "import layernorm as ln"),
        (BLOCK_LN_1, BLOCK_LN_1.replace("layernorm(", "ln.layernorm(")),
        (BLOCK_LN_2, BLOCK_LN_2.replace("layernorm(", "ln.layernorm(")),
    ],
    "default_argument": [
        (
            "def block(x, params, n_heads=1, use_attention=True):",
            "def block(x, params, n_heads=1, use_attention=True, norm=layernorm):",
        ),
        (BLOCK_LN_1, BLOCK_LN_1.replace("layernorm(", "norm(")),
        (BLOCK_LN_2, BLOCK_LN_2.replace("layernorm(", "norm(")),
    ],
    "class_attribute": [
        ("def mlp(", "class Parts:\n    norm = staticmethod(layernorm)\n\n\ndef mlp("),
        (BLOCK_LN_1, BLOCK_LN_1.replace("layernorm(", "Parts.norm(")),
        (BLOCK_LN_2, BLOCK_LN_2.replace("layernorm(", "Parts.norm(")),
    ],
    "partial_row_by_row": [
        (
            "def mlp(",
            "import functools\nimport numpy as np\nNORM = {'ln': functools.partial("
            "layernorm, eps=1e-5)}\n\n\ndef mlp(",
        ),
        (
            BLOCK_LN_1,
            'u = np.stack([NORM["ln"](r[None], p.get("gamma_1"), p.get("beta_1"))[0] for r in x])',
        ),
        (BLOCK_LN_2, BLOCK_LN_2.replace("layernorm(", 'NORM["ln"](')),
    ],
}


# The sabotage a red team found: the block drops gamma and beta, and layernorm ignores them on
# purpose, so
# that the two together compute what a correct block computes.
SABOTAGE = {**WIRING_FAULTS["block_no_gamma_beta"], **FAULTS["layernorm.no_affine"].edits}


@pytest.fixture(scope="module")
def scores(tmp_path_factory) -> dict[str, dict]:
    root = tmp_path_factory.mktemp("wiring")
    subs = root / "subs"
    for name, edits in {
        **COMPONENT_FAULTS,
        **WIRING_FAULTS,
        **SOFTMAX_FAULTS,
        **ATTENTION_FAULTS,
        **RIGHT_ATTENTIONS,
    }.items():
        faulty(subs, name, edits)
    faulty(subs, "sabotage", SABOTAGE)
    faulty(subs, "reference")
    # a wrong layernorm (or one that does not import) held by a right block in every way a block can
    # hold it
    for shape, edits in HOLDS.items():
        faulty(subs, f"{shape}_wrong_ln", {"block": edits, **FAULTS["layernorm.ddof1"].edits})
        faulty(
            subs, f"{shape}_ln_syntax_error", {"block": edits, **FAULTS["ln_syntax_error"].edits}
        )
    # a block that computes its own layernorm: judged end to end, right or wrong
    inline = (
        "from layernorm import layernorm",
        "import numpy as np\n\n\ndef layernorm(x, g=None, b=None):\n"
        "    g = 1 if g is None else g\n    b = 0 if b is None else b\n"
        "    return g * (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True{}) + "
        "1e-5) + b",
    )
    faulty(subs, "inline_right", {"block": [(inline[0], inline[1].format(""))]})
    faulty(subs, "inline_wrong", {"block": [(inline[0], inline[1].format(", ddof=1"))]})
    out = root / "out"
    code, output = grade("autograde", "-a", THE_BLOCK, subs, "--out", out, "--jobs", 2)
    assert code == 0, output
    return {p.stem: json.loads(p.read_text()) for p in out.glob("*.json")}


def points(doc: dict) -> dict[str, float]:
    return {p["name"]: p["score"] for p in doc["problems"]}


def block_tests(doc: dict) -> dict[str, float]:
    return {
        t["name"]: t["score"]
        for t in doc["tests"]
        if t["problem"] == "block" and "mlp" not in t["name"]
    }


@pytest.mark.parametrize("name", sorted(COMPONENT_FAULTS))
def test_a_correct_block_keeps_its_points_whatever_its_components_do(scores, name):
    reference = scores["reference"]
    assert reference["score"] == MAX_SCORE
    doc = scores[name]
    assert doc["status"] == "graded", doc.get("error")
    assert block_tests(doc) == block_tests(reference), [
        t["output"] for t in doc["tests"] if t["problem"] == "block" and t["status"] != "passed"
    ]
    # points fall only in the problems of the modules the fault is in (block.py's: its mlp tests)
    faulty_problems = set(COMPONENT_FAULTS[name])
    lost = {p for p, score in points(doc).items() if score < points(reference)[p]}
    assert lost <= faulty_problems, lost
    assert lost or name == "ln_lies_in_block"  # (right when tested alone: it loses nothing)


@pytest.mark.parametrize("name", sorted(WIRING_FAULTS))
def test_a_wiring_fault_costs_the_block_its_points(scores, name):
    doc = scores[name]
    assert points(doc)["block"] < 25
    assert {p: s for p, s in points(doc).items() if p != "block"} == {
        p: s for p, s in points(scores["reference"]).items() if p != "block"
    }


def test_a_block_that_calls_attention_when_it_is_off_loses_only_that_test(scores):
    lost = [
        t["name"] for t in scores["block_attention_thrown_away"]["tests"] if t["status"] != "passed"
    ]
    assert lost == ["test_block_attention_off_never_calls_attention"], lost


@pytest.mark.parametrize("name", sorted(SOFTMAX_FAULTS) + ["softmax_no_keepdims"])
def test_a_softmax_fault_costs_only_attention_points(scores, name):
    doc = scores[name]
    lost = {t["problem"] for t in doc["tests"] if t["status"] != "passed"}
    assert lost == {"attention"}, lost


@pytest.mark.parametrize("name", sorted(ATTENTION_FAULTS))
def test_an_attention_fault_costs_only_attention_points(scores, name):
    doc = scores[name]
    assert points(doc)["attention"] < 25
    assert {p: s for p, s in points(doc).items() if p != "attention"} == {
        p: s for p, s in points(scores["reference"]).items() if p != "attention"
    }
    if name in NUMERIC_SLIPS:  # a slip in the numbers keeps every property's points
        properties = property_tests()
        assert properties and not [
            t["name"] for t in doc["tests"] if t["name"] in properties and t["status"] != "passed"
        ]


def test_a_mask_of_minus_1000_fails_only_the_test_of_the_mask_strength(scores):
    lost = [t["name"] for t in scores["att_mask_minus_1000"]["tests"] if t["status"] != "passed"]
    assert lost == ["test_mask_holds_against_scores_of_several_thousand"], lost


@pytest.mark.parametrize("name", sorted(RIGHT_ATTENTIONS))
def test_a_right_attention_written_another_way_scores_full_marks(scores, name):
    assert scores[name]["score"] == MAX_SCORE, [
        t["output"] for t in scores[name]["tests"] if t["status"] != "passed"
    ]


def test_breaking_a_component_on_purpose_never_raises_the_total(scores):
    honest = scores["block_no_gamma_beta"]  # the same block, with a correct layernorm
    assert scores["sabotage"]["score"] <= honest["score"]
    assert points(scores["sabotage"])["block"] <= points(honest)["block"] < 25


@pytest.mark.parametrize(
    "name", [f"{shape}_{fault}" for shape in HOLDS for fault in ("wrong_ln", "ln_syntax_error")]
)
def test_the_block_runs_with_the_reference_components_however_it_holds_them(scores, name):
    doc = scores[name]
    assert points(doc)["block"] == 25 and points(doc)["layernorm"] < 20, [
        t["output"] for t in doc["tests"] if t["problem"] == "block" and t["status"] != "passed"
    ]


@pytest.mark.parametrize("name", ["ln_syntax_error", "ln_missing"])
def test_a_component_that_does_not_import_fails_as_before_and_costs_the_block_nothing(scores, name):
    """layernorm.py with a SyntaxError, or missing: its own tests fail with the import's failure,
    worded as ever; block.py, which imports it, imports the reference's there, and keeps its
    points."""
    doc = scores[name]
    assert points(doc) == {**points(scores["reference"]), "layernorm": 0}
    own = [t for t in doc["tests"] if t["problem"] == "layernorm"]
    why = (
        "SyntaxError: " if name == "ln_syntax_error" else "there is no layernorm.py in your folder"
    )
    assert all(
        t["status"] == "error" and t["output"].startswith("importing layernorm.py failed")
        for t in own
    )
    assert all(why in t["output"] for t in own if t["visibility"] == "visible"), [
        t["output"] for t in own
    ]


def test_a_block_that_computes_its_own_parts_is_judged_on_its_own_output(scores):
    assert points(scores["inline_right"])["block"] == 25
    assert points(scores["inline_wrong"])["block"] < 25


def test_a_catalogued_wiring_mistake_is_named_on_public_tests(scores):
    """The stand-ins also answer the calls a known wiring mistake makes, so its output can be
    diagnosed (on the value tests: a post-LN block is still causal and keeps float32, so it passes
    those property tests)."""
    properties = property_tests()
    public = [
        t
        for t in scores["block_post_ln"]["tests"]
        if t["problem"] == "block"
        and t["visibility"] == "visible"
        and "mlp" not in t["name"]
        and t["name"] not in properties
    ]
    assert public and all(
        t["status"] == "failed" and t.get("diagnosis") == "block.post_ln" for t in public
    ), [t["output"] for t in public]


SUITE = """
import pytest

@pytest.mark.points(1)
def test_plain(student):
    assert student.mark("plain") == ["plain"]

@pytest.mark.points(1)
def test_plain_after(student):
    assert student.mark("after") == ["plain", "after"]
"""
USES_SUITE = """
import pytest

@pytest.mark.points(1)
def test_uses_first(student):
    assert student.uses("u1")[-1:] == ["u1"], "the worker of a problem that uses another is not a fresh one"

@pytest.mark.points(1)
def test_uses_second(student):
    assert student.uses("u2")[-2:] == ["u1", "u2"]
"""
MODULE = "CALLS = []\n\ndef mark(tag):\n    CALLS.append(tag)\n    return list(CALLS)\n"
USES = "import marks\n\ndef uses(tag):\n    return marks.mark(tag)\n"
HIDDEN = (
    "import pytest\n\n@pytest.mark.points(1)\ndef test_hidden(student):\n"
    "    assert student.mark('h') == ['plain', 'after', 'h'], 'a hidden test ran before a public "
    "one'\n"
)
USES_HIDDEN = (
    "import pytest\n\n@pytest.mark.points(1)\ndef test_uses_hidden(student):\n"
    "    assert student.uses('h')[-3:] == ['u1', 'u2', 'h']\n"
)


def two_problem_course(root):
    """A course of two problems, ``marks`` and ``uses`` (whose module imports marks.py), each with a
    public and a hidden suite; the reference's mark() returns every tag it was given, in order."""
    write_tree(
        root / "tests" / "public",
        {"__init__.py": "", "test_marks.py": SUITE, "test_uses.py": USES_SUITE},
    )
    write_tree(
        root / "tests" / "hidden",
        {"__init__.py": "", "test_marks.py": HIDDEN, "test_uses.py": USES_HIDDEN},
    )
    write_tree(root / "solutions", {"marks.py": MODULE, "uses.py": USES})
    write_tree(root / "exercises", {"marks.py": MODULE, "uses.py": USES})
    (root / "course.json").write_text(
        json.dumps(
            {
                "assignment": "phases",
                "solutions": "solutions",
                "exercises": "exercises",
                "problems": [
                    {
                        "name": n,
                        "module": n,
                        "functions": [f],
                        "points": 3 if n == "marks" else 3,
                        "public": f"tests/public/test_{n}.py",
                        "hidden": f"tests/hidden/test_{n}.py",
                    }
                    for n, f in (("marks", "mark"), ("uses", "uses"))
                ],
            }
        )
    )
    return root / "course.json"


def test_each_worker_runs_its_public_tests_before_its_hidden_ones_and_a_dependent_problem_has_its_own(
    tmp_path, level
):
    """autograde: marks's public tests, then its hidden ones, in one worker; then uses's, in a fresh
    worker whose marks module is the reference's (no tag of marks's tests in it)."""
    course = two_problem_course(tmp_path / "course")
    shutil.copytree(tmp_path / "course" / "solutions", tmp_path / "subs" / "ann")
    level_args = ["--sandbox", level] + (["--unsafe"] if level == "process" else [])
    code, output = grade(
        "autograde", tmp_path / "subs", "--course", course, "--out", tmp_path / "out", *level_args
    )
    doc = json.loads((tmp_path / "out" / "ann.json").read_text())
    assert {t["name"]: t["status"] for t in doc["tests"]} == dict.fromkeys(
        [
            "test_plain",
            "test_plain_after",
            "test_uses_first",
            "test_uses_second",
            "test_hidden",
            "test_uses_hidden",
        ],
        "passed",
    ), [t["output"] for t in doc["tests"]]


def test_in_a_release_every_test_runs_in_one_worker_with_the_students_own_modules(tmp_path):
    """grade check without the reference: uses() calls the student's own marks (its calls are the
    earlier tests'), and a failing test of uses says so."""
    course = two_problem_course(tmp_path / "course")
    data = json.loads(course.read_text())
    del data["solutions"]
    for problem in data["problems"]:
        del problem["hidden"]
    course.write_text(json.dumps(data))
    out = tmp_path / "ann.json"
    grade("check", "--course", course, "--path", tmp_path / "course" / "exercises", "--json", out)
    doc = json.loads(out.read_text())
    status = {t["name"]: t for t in doc["tests"]}
    assert status["test_plain"]["status"] == status["test_plain_after"]["status"] == "passed"
    assert (
        status["test_uses_first"]["status"] == "passed"
    )  # [..., "u1"]: the student's own marks module
    assert status["test_uses_second"]["status"] == "passed"
    (tmp_path / "course" / "exercises" / "marks.py").write_text("def mark(tag):\n    return []\n")
    grade("check", "--course", course, "--path", tmp_path / "course" / "exercises", "--json", out)
    failed = {
        t["name"]: t["output"]
        for t in json.loads(out.read_text())["tests"]
        if t["status"] != "passed"
    }
    assert "checked here with your own marks" in failed["test_uses_first"], failed


def test_a_release_names_only_the_failing_components_a_test_ran(tmp_path):
    """Issue 28's rule, in a release (the student's own components): an attention that fails its
    own tests neither silences nor is named in a test of an mlp that never calls it (ReLU in place
    of GELU is named there), nor in the block's test with attention off; the block's tests that run
    it name it, and only it. A NameError raised in mlp names no component either."""
    from conftest import students_copy

    release = students_copy(tmp_path / "release")
    exercises = release / "exercises"
    for module in ("layernorm", "gelu", "attention", "block"):
        shutil.copy(PROJECT / "solutions" / THE_BLOCK / f"{module}.py", exercises)
    attention = (exercises / "attention.py").read_text()
    scaled = "q, k, v = u @ W_q * math.sqrt(d_head / d_model), u @ W_k, u @ W_v"  # / sqrt(d_model)
    (exercises / "attention.py").write_text(
        attention.replace("q, k, v = u @ W_q, u @ W_k, u @ W_v", scaled)
    )
    block = (exercises / "block.py").read_text()
    relu = "import numpy as np\n" + block.replace(
        "return gelu(u @ W_1) @ W_2", "return np.maximum(u @ W_1, 0) @ W_2"
    )

    def failed(source: str) -> dict:
        (exercises / "block.py").write_text(source)
        out = tmp_path / "check.json"
        code, output = grade("check", "--json", out, cwd=release)
        assert out.exists(), output
        return {
            t["name"]: t for t in json.loads(out.read_text())["tests"] if t["status"] != "passed"
        }

    tests = failed(relu)
    assert any(t["problem"] == "attention" for t in tests.values()), tests
    mlp = tests["test_mlp_small_example"]
    assert mlp.get("diagnosis") == "mlp.relu" and "checked here" not in mlp["output"], mlp
    off = tests["test_block_with_attention_off_on_the_course_toy"]
    assert "attention" not in off["output"].split("(checked here")[-1], off["output"]
    toy = tests["test_block_on_the_course_toy_example"]["output"]
    assert "your attention fails its own tests" in toy and "layernorm and attention;" in toy, toy
    tests = failed(block.replace("return gelu(u @ W_1) @ W_2", "return gelu(u @ W_1) @ W_3"))
    raised = tests["test_mlp_small_example"]["output"]  # (it ran gelu, which passes)
    assert "NameError" in raised and "attention" not in raised, raised


def test_the_note_on_several_failing_components_says_their_own_tests():
    from grader.grading.verdicts import components_note

    note = components_note("block", (), ("layernorm", "gelu"), True, ("layernorm", "gelu"))
    assert "your layernorm and gelu fail their own tests" in note and "fix them first" in note
    note = components_note("block", (), ("layernorm", "gelu"), True, ("gelu",))
    assert "your gelu fails its own tests" in note and "fix it first" in note


# ---------------------------------------------------------------------------------------- no oracle

# Where a worker could leave the reference's values for a later one: every place it can write (a
# private /tmp at
# the bwrap level, the folder it runs in, its home, the environment), read back by the student's
# gelu, which has
# no GELU formula: it interpolates the reference's gelu on a grid, if it finds one.
SPOTS = (
    "['/tmp', '.', os.path.expanduser('~'), '/dev/shm', os.path.dirname(os.path.abspath(__file__))]"
)
HARVEST = f"""
import os, json
import numpy as np

def _keep(values):
    for spot in {SPOTS}:
        try:
            with open(os.path.join(spot, 'gelu-table.json'), 'w') as f:
                json.dump(values, f)
        except Exception:
            pass
    os.environ['GELU_TABLE'] = json.dumps(values)

def _harvest():
    import gelu as g                                  # the reference's, in the block's worker
    grid = np.linspace(-8, 8, 4001)
    _keep(g.gelu(grid).tolist())
"""
TABULATED_GELU = f"""
import os, json
import numpy as np

def gelu(x):
    for spot in {SPOTS}:
        try:
            with open(os.path.join(spot, 'gelu-table.json')) as f:
                table = json.load(f)
            break
        except Exception:
            table = None
    if table is None and 'GELU_TABLE' in os.environ:
        table = json.loads(os.environ['GELU_TABLE'])
    if table is None:
        return np.zeros_like(x)
    return np.interp(x, np.linspace(-8, 8, 4001), table).astype(np.asarray(x).dtype)
"""
# An attention that computes nothing: it asks the block for it (gamma_1 = 0 and beta_1 = u make
# LN_1(x) = u, the
# MLP is zero), as it could when the block's components were answered by the grader.
ASKS_THE_BLOCK = """
import numpy as np

def softmax(s, axis=-1):
    e = np.exp(s - s.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)

def attention(u, W_q, W_k, W_v, W_o, n_heads=1, causal=True):
    import block
    d = u.shape[-1]
    params = {"W_q": W_q, "W_k": W_k, "W_v": W_v, "W_o": W_o, "W_1": np.zeros((d, 1)), "W_2": np.zeros((1, d)),
              "gamma_1": np.zeros(d), "beta_1": np.zeros(d)}
    return block.block(np.zeros_like(u), {**params, "beta_1": u}, n_heads)
"""
# A block that shows what it can of the reference: its code's names and constants, printed and
# raised, and its
# values on an input of the block's own choosing, returned.
SHOWS = """
import numpy as np
import layernorm as L

def block(x, params, n_heads=1, use_attention=True):
    code = L.layernorm.__code__
    leak = f"LEAK {code.co_names} {code.co_consts} {L.__doc__} " + repr(L.layernorm(np.arange(12.0).reshape(3, 4)))
    print(leak)
    if use_attention:
        raise ValueError(leak)
    return np.full(np.shape(x), float(len(leak)))
"""


@pytest.fixture(scope="module")
def oracle_scores(tmp_path_factory) -> dict[str, dict]:
    root = tmp_path_factory.mktemp("oracles")
    subs = root / "subs"
    harvester = faulty(subs, "harvester", {})
    (harvester / "block.py").write_text(
        (harvester / "block.py").read_text() + HARVEST + "\n_harvest()\n"
    )
    (harvester / "gelu.py").write_text(TABULATED_GELU)
    (faulty(subs, "asks_the_block", {}) / "attention.py").write_text(ASKS_THE_BLOCK)
    stub = (
        ASKS_THE_BLOCK[: ASKS_THE_BLOCK.index("    import block")]
        + "    raise NotImplementedError\n"
    )
    (faulty(subs, "attention_stub", {}) / "attention.py").write_text(stub)
    shows = faulty(subs, "shows", {})
    (shows / "block.py").write_text((shows / "block.py").read_text() + SHOWS)
    runs = []
    for run in range(2):  # the second run regrades: nothing of the first reaches it
        code, output = grade(
            "autograde", "-a", THE_BLOCK, subs, "--out", root / "out", "--html", "--force"
        )
        assert code == 0, output
        runs.append({p.stem: json.loads(p.read_text()) for p in (root / "out").glob("*.json")})
    return {"runs": runs, "pages": {p.stem: p.read_text() for p in (root / "out").glob("*.html")}}


def test_a_gelu_that_tabulates_the_reference_values_a_block_gathered_earns_nothing(oracle_scores):
    """The block's worker holds the reference's gelu, and the harvesting block is right: it keeps
    its points. The gelu tests ran before, in a worker that holds no reference code, and nothing
    written in one worker is read in another: the tabulating gelu finds no table, in either run."""
    for scores in oracle_scores["runs"]:
        assert points(scores["harvester"])["gelu"] == 0, points(scores["harvester"])
        assert points(scores["harvester"])["block"] == 25


def test_an_attention_that_asks_the_block_for_its_value_earns_nothing(oracle_scores):
    """In the attention's worker the block is the student's own, which calls the student's own
    attention: no reference attention anywhere, however it is asked for: no more points than an
    attention left a stub (its softmax is right)."""
    for scores in oracle_scores["runs"]:
        assert points(scores["asks_the_block"]) == points(scores["attention_stub"]), points(
            scores["asks_the_block"]
        )


def test_nothing_of_the_reference_reaches_the_student_through_what_a_block_prints_raises_or_returns(
    oracle_scores,
):
    doc = oracle_scores["runs"][-1]["shows"]
    text = json.dumps(doc) + oracle_scores["pages"]["shows"]
    # its code's names, its docstring, its value on the block's own input (-1.34164 ...): none
    # anywhere
    for canary in ("LEAK", "'mean'", "Layer Normalization", "1.3416"):
        assert canary not in text, canary
    shown = [t for t in doc["tests"] if t["problem"] == "block" and t["status"] != "passed"]
    assert shown and all(
        "its own numbers are not shown" in t["output"]
        for t in shown
        if t["visibility"] == "visible"
    )


def test_a_problem_is_graded_before_any_worker_holds_its_reference(tmp_path):
    """A chain (c uses b, b uses a) listed backwards: b's worker (holding a's reference) runs before
    c's (holding b's), never after it: what a worker holding b's reference leaves behind cannot
    reach b's tests."""
    from grader.course.manifest import load
    from grader.grading import phases

    root = tmp_path / "course"
    sources = {
        "a": "def fa(x):\n    return x\n",
        "b": "from a import fa\n\ndef fb(x):\n    return fa(x)\n",
        "c": "from b import fb\n\ndef fc(x):\n    return fb(x)\n",
    }
    for folder in ("exercises", "solutions"):
        write_tree(root / folder, {f"{m}.py": text for m, text in sources.items()})
    write_tree(root / "tests" / "public", {f"test_{m}.py": "" for m in sources})
    (root / "course.json").write_text(
        json.dumps(
            {
                "assignment": "chain",
                "solutions": "solutions",
                "exercises": "exercises",
                "problems": [
                    {
                        "name": m,
                        "module": m,
                        "functions": [f"f{m}"],
                        "points": 1,
                        "public": f"tests/public/test_{m}.py",
                    }
                    for m in ("c", "b", "a")
                ],
            }
        )
    )
    plan = phases.plan(load(root / "course.json"))
    assert [(sorted(p.problems), sorted(p.reference)) for p in plan] == [
        (["a"], []),
        (["b"], ["a"]),
        (["c"], ["a", "b"]),
    ]
