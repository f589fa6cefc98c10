"""Wiring tests: the block (and the mlp) graded on their own lines, with the student's other functions
replaced by the reference's (grader.feedback.standins). A fault inside a component costs points only in its own
problem; a fault in the wiring costs the block its points whatever the components do; breaking a
component on purpose never raises the total."""
from __future__ import annotations

import ast
import json
import shutil

import numpy as np
import pytest
from conftest import MAX_SCORE, PROJECT, THE_BLOCK, grade, write_tree
from mutants import ATT_RETURN, BLOCK_LN_1, BLOCK_LN_2, FAULTS, LN_RETURN, faulty

# One fault in a component each (catalogued or not, a constant, a transpose, a missing projection, a stub, a
# crash, a component that lies when it can tell it is being checked): the block is correct every time.
COMPONENT_FAULTS = {
    **{name: FAULTS[name].edits for name in (
        "gelu_no_half", "gelu_stub", "layernorm.ddof1", "ln_no_beta", "ln_eps_1e6", "ln_exits", "att_no_w_o",
        "att_reversed_heads", "att_pytorch_layout", "softmax_no_keepdims", "mlp.no_gelu", "ln_syntax_error",
        "ln_missing")},
    # an import that never ends: the worker is killed, and the next one does not run layernorm.py again
    "ln_hangs_at_import": {"layernorm": [("import numpy as np\n", "import numpy as np\n\nwhile True:\n    pass\n")]},
    # a layernorm that returns zeros when the block calls it (and is right when tested alone)
    "ln_lies_in_block": {"layernorm": [(LN_RETURN, "import sys\n    if sys._getframe(1).f_code.co_name == 'block':\n"
                                                   "        return np.zeros_like(x)\n    " + LN_RETURN)]},
    "two_faults": {**FAULTS["gelu.constant"].edits, **FAULTS["layernorm.ddof1"].edits},
}
# The block's own mistakes, with right components and with components that try to make up for them.
WIRING_FAULTS = {
    "block_post_ln": {"block": [(BLOCK_LN_1, "u = x"),
                                ('h = x + attention(u, p["W_q"], p["W_k"], p["W_v"], p["W_o"], n_heads)',
                                 'h = layernorm(x + attention(u, p["W_q"], p["W_k"], p["W_v"], p["W_o"], n_heads), '
                                 'p.get("gamma_1"), p.get("beta_1"))'),
                                (BLOCK_LN_2, "u = h"),
                                ("return h + mlp(u, p[\"W_1\"], p[\"W_2\"])",
                                 "return layernorm(h + mlp(h, p[\"W_1\"], p[\"W_2\"]), p.get(\"gamma_2\"), "
                                 "p.get(\"beta_2\"))")]},
    "block_no_gamma_beta": {"block": [(BLOCK_LN_1, "u = layernorm(x)"), (BLOCK_LN_2, "u = layernorm(h)")]},
    # in the catalogue (block.second_norm_params): the second LayerNorm with the first one's gamma and beta
    "block_gamma_1_twice": {"block": [(BLOCK_LN_2, 'u = layernorm(h, p.get("gamma_1"), p.get("beta_1"))')]},
    # not in the catalogue: the first LayerNorm with the second one's gamma and beta
    "block_gamma_2_first": {"block": [(BLOCK_LN_1, 'u = layernorm(x, p.get("gamma_2"), p.get("beta_2"))')]},
}
# The block's own spec rules: never modify x or params, never call attention when it is switched off; and mlp's
# own mistake with GELU after W_2 (random MLP weights expose it; the course's make u @ W_1 @ W_2 = 0).
WIRING_FAULTS.update({
    "block_modifies_x": {"block": [("h = x + attention(u,", "h += attention(u,")]},
    "block_adds_params_keys": {"block": [("    p = params\n", "    p = params\n    for i in (1, 2):\n"
                                          "        p.setdefault(f'gamma_{i}', None)\n        p.setdefault(f'beta_{i}', None)\n")]},
    "block_attention_thrown_away": {"block": [("if use_attention:", "if True:"),
                                              ('h = x + attention(u, p["W_q"], p["W_k"], p["W_v"], p["W_o"], n_heads)',
                                               'a = attention(u, p["W_q"], p["W_k"], p["W_v"], p["W_o"], n_heads)\n'
                                               '        h = x + a if use_attention else x')]},
    "mlp_gelu_after_w_2": {"block": [("return gelu(u @ W_1) @ W_2", "return gelu(u @ W_1 @ W_2)")]},
})

# An attention calling a wrong softmax: only the softmax tests lose points (the attention tests stand the
# softmax in). The attention's own mistakes: only attention points, and a numeric slip (a wrong scale, float32
# arithmetic inside) keeps every property test's points.
SOFTMAX_FAULTS = {
    "softmax_stub": {"attention": [("    e = np.exp(s - s.max(axis=axis, keepdims=True))", "    raise NotImplementedError")]},
    "softmax_no_max": {"attention": [("np.exp(s - s.max(axis=axis, keepdims=True))", "np.exp(s)")]},
    "softmax_fixed_axis": {"attention": [("axis=axis", "axis=-1")]},
}
ATT_QKV = "q, k, v = u @ W_q, u @ W_k, u @ W_v"
ATT_MASK = "scores = np.where(causal_mask(q.shape[-2]), scores, -np.inf)"
ATT_SCORES = "scores = q @ k.swapaxes(-2, -1) / math.sqrt(q.shape[-1])"
# A near miss in the numbers (float32 arithmetic inside) keeps every property test's points; a wrong scale is a
# wrong formula, whose outputs move more than the property tests' 30 % (compare.ATTEMPT) in some of them.
SCALES = {
    "att_scale_d_head": {"attention": [(ATT_SCORES, "scores = q @ k.swapaxes(-2, -1) / q.shape[-1]")]},
    "att_scale_d_model": {"attention": [(ATT_QKV, "q, k, v = u @ W_q * math.sqrt(d_head / d_model), u @ W_k, u @ W_v")]},
}
NUMERIC_SLIPS = {
    "att_float32_inside": {"attention": [(ATT_QKV, "dtype = u.dtype\n    u, W_q, W_k, W_v, W_o = (a.astype(np.float32) "
                                                    "for a in (u, W_q, W_k, W_v, W_o))\n    " + ATT_QKV),
                                         (ATT_RETURN, "return (np.concatenate(out, axis=-1) @ W_o).astype(dtype)")]},
}
ATTENTION_FAULTS = {
    **SCALES,
    **NUMERIC_SLIPS,
    # wrong only from row 5 on: the row-by-row checks over 16 to 64 tokens see it
    "att_mask_from_row_5": {"attention": [("return np.tri(n, dtype=bool)", "m = np.tri(n, dtype=bool)\n"
                                           "    m[5:] = np.tri(n, k=1, dtype=bool)[5:]\n    return m")]},
    "att_mask_minus_1000": {"attention": [(ATT_MASK, ATT_MASK.replace("-np.inf", "-1000.0"))]},
    "att_modifies_u": {"attention": [(ATT_QKV, ATT_QKV + "\n    u *= 0.5")]},
    "att_reversed_heads": COMPONENT_FAULTS["att_reversed_heads"],
}
# Right attentions written another way: a strong enough finite mask, all heads in one softmax call.
RIGHT_ATTENTIONS = {
    "att_mask_minus_1e9": {"attention": [(ATT_MASK, ATT_MASK.replace("-np.inf", "-1e9"))]},
    "att_mask_finfo_min": {"attention": [(ATT_MASK, ATT_MASK.replace("-np.inf", "np.finfo(scores.dtype).min"))]},
    "att_stacked_heads": {"attention": [(
        "    heads = [slice(h * d_head, (h + 1) * d_head) for h in range(n_heads)]\n"
        "    out = [attend(q[..., s], k[..., s], v[..., s], causal) for s in heads]  # n_heads x (n, d_head)\n"
        "    " + ATT_RETURN + "  # (n, d_model) @ (d_model, d_model) -> (n, d_model)\n",
        "    n = u.shape[0]\n"
        "    qh, kh, vh = (t.reshape(n, n_heads, d_head).transpose(1, 0, 2) for t in (q, k, v))\n"
        "    scores = qh @ kh.transpose(0, 2, 1) / math.sqrt(d_head)\n"
        "    if causal:\n        scores = np.where(np.tri(n, dtype=bool), scores, -np.inf)\n"
        "    return (softmax(scores, axis=-1) @ vh).transpose(1, 0, 2).reshape(n, d_model) @ W_o\n")]},
}


def property_tests() -> set[str]:
    """The names of the course's property tests (@pytest.mark.property) in the attention and block suites."""
    names = set()
    for suite in ("public", "hidden"):
        for problem in ("attention", "block"):
            tree = ast.parse((PROJECT / "tests" / THE_BLOCK / suite / f"test_{problem}.py").read_text())
            names |= {f.name for f in tree.body if isinstance(f, ast.FunctionDef)
                      and any(ast.unparse(d) == "pytest.mark.property" for d in f.decorator_list)}
    return names


# The sabotage a red team found: the block drops gamma and beta, and layernorm ignores them on purpose, so
# that the two together compute what a correct block computes.
SABOTAGE = {**WIRING_FAULTS["block_no_gamma_beta"], **FAULTS["layernorm.no_affine"].edits}


@pytest.fixture(scope="module")
def scores(tmp_path_factory) -> dict[str, dict]:
    root = tmp_path_factory.mktemp("wiring")
    subs = root / "subs"
    for name, edits in {**COMPONENT_FAULTS, **WIRING_FAULTS, **SOFTMAX_FAULTS, **ATTENTION_FAULTS,
                        **RIGHT_ATTENTIONS}.items():
        faulty(subs, name, edits)
    faulty(subs, "sabotage", SABOTAGE)
    faulty(subs, "reference")
    # a block that imports its components as modules (ln.layernorm): the stand-ins are found by identity,
    # also those of a module that did not import (a placeholder stands in its place)
    module_style = [("from layernorm import layernorm", "import layernorm as ln"),
                    (BLOCK_LN_1, BLOCK_LN_1.replace("layernorm(", "ln.layernorm(")),
                    (BLOCK_LN_2, BLOCK_LN_2.replace("layernorm(", "ln.layernorm("))]
    faulty(subs, "module_style_wrong_ln", {"block": module_style, **FAULTS["layernorm.ddof1"].edits})
    faulty(subs, "module_style_ln_syntax_error", {"block": module_style, **FAULTS["ln_syntax_error"].edits})
    # a block that computes its own layernorm: judged end to end, right or wrong
    inline = ("from layernorm import layernorm", "import numpy as np\n\n\ndef layernorm(x, g=None, b=None):\n"
              "    g = 1 if g is None else g\n    b = 0 if b is None else b\n"
              "    return g * (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True{}) + 1e-5) + b")
    faulty(subs, "inline_right", {"block": [(inline[0], inline[1].format(""))]})
    faulty(subs, "inline_wrong", {"block": [(inline[0], inline[1].format(", ddof=1"))]})
    out = root / "out"
    code, output = grade("autograde", "-a", THE_BLOCK, subs, "--out", out, "--jobs", 2)
    assert code == 0, output
    return {p.stem: json.loads(p.read_text()) for p in out.glob("*.json")}


def points(doc: dict) -> dict[str, float]:
    return {p["name"]: p["score"] for p in doc["problems"]}


def block_tests(doc: dict) -> dict[str, float]:
    return {t["name"]: t["score"] for t in doc["tests"] if t["problem"] == "block" and "mlp" not in t["name"]}


@pytest.mark.parametrize("name", sorted(COMPONENT_FAULTS))
def test_a_correct_block_keeps_its_points_whatever_its_components_do(scores, name):
    reference = scores["reference"]
    assert reference["score"] == MAX_SCORE
    doc = scores[name]
    assert doc["status"] == "graded", doc.get("error")
    assert block_tests(doc) == block_tests(reference), [t["output"] for t in doc["tests"] if t["problem"] == "block"
                                                         and t["status"] != "passed"]
    # points fall only in the problems of the modules the fault is in (block.py's: its mlp tests)
    faulty_problems = set(COMPONENT_FAULTS[name])
    lost = {p for p, score in points(doc).items() if score < points(reference)[p]}
    assert lost <= faulty_problems, lost
    assert lost or name == "ln_lies_in_block"        # (right when tested alone: it loses nothing)


@pytest.mark.parametrize("name", sorted(WIRING_FAULTS))
def test_a_wiring_fault_costs_the_block_its_points(scores, name):
    doc = scores[name]
    assert points(doc)["block"] < 25
    assert {p: s for p, s in points(doc).items() if p != "block"} == \
        {p: s for p, s in points(scores["reference"]).items() if p != "block"}


def test_a_block_that_calls_attention_when_it_is_off_loses_only_that_test(scores):
    lost = [t["name"] for t in scores["block_attention_thrown_away"]["tests"] if t["status"] != "passed"]
    assert lost == ["test_block_attention_off_never_calls_attention"], lost


@pytest.mark.parametrize("name", sorted(SOFTMAX_FAULTS) + ["softmax_no_keepdims"])
def test_an_attention_keeps_its_points_whatever_its_softmax_does(scores, name):
    doc = scores[name]
    lost = {(t["problem"], t["name"]) for t in doc["tests"] if t["status"] != "passed"}
    assert lost and all(problem == "attention" and "softmax" in test for problem, test in lost), lost


@pytest.mark.parametrize("name", sorted(ATTENTION_FAULTS))
def test_an_attention_fault_costs_only_attention_points(scores, name):
    doc = scores[name]
    assert points(doc)["attention"] < 25
    assert {p: s for p, s in points(doc).items() if p != "attention"} == \
        {p: s for p, s in points(scores["reference"]).items() if p != "attention"}
    if name in NUMERIC_SLIPS:                        # a slip in the numbers keeps every property's points
        properties = property_tests()
        assert properties and not [t["name"] for t in doc["tests"] if t["name"] in properties
                                   and t["status"] != "passed"]


def test_a_mask_of_minus_1000_fails_only_the_test_of_the_mask_strength(scores):
    lost = [t["name"] for t in scores["att_mask_minus_1000"]["tests"] if t["status"] != "passed"]
    assert lost == ["test_mask_holds_against_scores_of_several_thousand"], lost


@pytest.mark.parametrize("name", sorted(RIGHT_ATTENTIONS))
def test_a_right_attention_written_another_way_scores_full_marks(scores, name):
    assert scores[name]["score"] == MAX_SCORE, [t["output"] for t in scores[name]["tests"] if t["status"] != "passed"]


def test_breaking_a_component_on_purpose_never_raises_the_total(scores):
    honest = scores["block_no_gamma_beta"]             # the same block, with a correct layernorm
    assert scores["sabotage"]["score"] <= honest["score"]
    assert points(scores["sabotage"])["block"] <= points(honest)["block"] < 25


@pytest.mark.parametrize("name", ["module_style_wrong_ln", "module_style_ln_syntax_error"])
def test_components_are_stood_in_for_wherever_the_block_finds_them(scores, name):
    doc = scores[name]
    assert points(doc)["block"] == 25 and points(doc)["layernorm"] < 20


@pytest.mark.parametrize("name", ["ln_syntax_error", "ln_missing"])
def test_a_component_that_does_not_import_fails_as_before_and_costs_the_block_nothing(scores, name):
    """layernorm.py with a SyntaxError, or missing: its own tests fail with the import's failure, worded as
    ever; block.py, which imports it, still imports, and keeps its points (its wiring tests stand it in)."""
    doc = scores[name]
    assert points(doc) == {**points(scores["reference"]), "layernorm": 0}
    own = [t for t in doc["tests"] if t["problem"] == "layernorm"]
    why = "SyntaxError: " if name == "ln_syntax_error" else "there is no layernorm.py in your folder"
    assert all(t["status"] == "error" and t["output"].startswith("importing layernorm.py failed") for t in own)
    assert all(why in t["output"] for t in own if t["visibility"] == "visible"), [t["output"] for t in own]


def test_a_block_that_computes_its_own_parts_is_judged_on_its_own_output(scores):
    assert points(scores["inline_right"])["block"] == 25
    assert points(scores["inline_wrong"])["block"] < 25


def test_a_call_the_specified_wiring_never_makes_is_named_on_public_tests(scores):
    """Public tests: the stand-ins answer only the calls the reference (or a catalogued wiring mistake) makes
    on the test's inputs; the gamma_2-first block (not catalogued) is told which call is off, the gamma_1-twice
    block (catalogued) gets its diagnosis."""
    def failed(name):
        return [t for t in scores[name]["tests"] if t["problem"] == "block" and t["visibility"] == "visible"
                and "mlp" not in t["name"] and t["status"] != "passed"]

    public = failed("block_gamma_2_first")
    assert public and all("layernorm() was called on an input the specified wiring never gives it" in t["output"]
                          for t in public), [t["output"] for t in public]
    public = failed("block_gamma_1_twice")
    assert public and all(t.get("diagnosis") == "block.second_norm_params" for t in public), public


def test_a_catalogued_wiring_mistake_is_named_on_public_tests(scores):
    """The stand-ins also answer the calls a known wiring mistake makes, so its output can be diagnosed (on the
    value tests: a post-LN block is still causal and keeps float32, so it passes those property tests)."""
    properties = property_tests()
    public = [t for t in scores["block_post_ln"]["tests"] if t["problem"] == "block" and t["visibility"] == "visible"
              and "mlp" not in t["name"] and t["name"] not in properties]
    assert public and all(t["status"] == "failed" and t.get("diagnosis") == "block.post_ln" for t in public), \
        [t["output"] for t in public]


SUITE = '''
import numpy as np
import pytest

@pytest.mark.points(1)
def test_plain(student):
    assert student.mark("plain") == ["plain"]

@pytest.mark.wiring
@pytest.mark.points(1)
def test_wired_first(student):
    assert student.wired("mark", "wired1") == ["plain", "after", "wired1"], "not after the phase's plain tests"

@pytest.mark.wiring
@pytest.mark.points(1)
def test_wired_second(student):
    assert student.wired("mark", "wired2") == ["plain", "after", "wired1", "wired2"]

@pytest.mark.points(1)
def test_plain_after(student):
    assert student.mark("after") == ["plain", "after"], "a wiring test ran before a plain one"
'''
MODULE = ("import os\n\nCALLS = []\n\ndef mark(tag):\n    print('mark', tag)\n    CALLS.append(tag)\n    return list(CALLS)\n\n"
          "def printed():\n    return os.fstat(2).st_size\n")
HIDDEN = ("import pytest\n\n@pytest.mark.points(1)\ndef test_hidden(student):\n"
          "    assert student.mark('h')[-2:] == ['wired2', 'h'], 'a hidden test ran before a public one'\n")


@pytest.mark.parametrize("command", ["check", "autograde"])
def test_wiring_tests_run_after_the_plain_tests_of_their_phase(tmp_path, level, command):
    """Public tests (plain, then wiring), then hidden ones: no public test's output after a hidden call."""
    root = tmp_path / "course"
    write_tree(root / "tests" / "public", {"__init__.py": "", "test_marks.py": SUITE})
    write_tree(root / "tests" / "hidden", {"__init__.py": "", "test_marks.py": HIDDEN})
    write_tree(root / "solutions", {"marks.py": MODULE})
    (root / "course.json").write_text(json.dumps({
        "assignment": "wiring", "solutions": "solutions",
        "problems": [{"name": "marks", "module": "marks", "functions": ["mark", "printed"], "points": 5,
                      "public": "tests/public/test_marks.py", "hidden": "tests/hidden/test_marks.py"}]}))
    if command == "check":
        out = tmp_path / "ann.json"
        code, output = grade("check", "--course", root / "course.json", "--path", root / "solutions", "--json", out)
        doc = json.loads(out.read_text())
    else:
        (tmp_path / "subs").mkdir()
        shutil.copytree(root / "solutions", tmp_path / "subs" / "ann")
        level_args = ["--sandbox", level] + (["--unsafe"] if level == "process" else [])
        code, output = grade("autograde", tmp_path / "subs", "--course", root / "course.json", "--out",
                             tmp_path / "out", *level_args)
        doc = json.loads((tmp_path / "out" / "ann.json").read_text())
    assert {t["name"]: t["status"] for t in doc["tests"]} == \
        {**{name: "passed" for name in ("test_plain", "test_wired_first", "test_wired_second", "test_plain_after")},
         **({"test_hidden": "passed"} if command == "autograde" else {})}, [t["output"] for t in doc["tests"]]


# ------------------------------------------------------------------------------------------------ sealed answers

def test_a_sealed_answer_opens_only_with_the_exact_arguments():
    from grader.sandbox.child import protocol as wire

    salt, signature = b"s" * 16, [["x", False, None], ["eps", True, 1e-5]]
    x = np.arange(6.0).reshape(2, 3)
    lookup, key = wire.sealed_keys(salt, "layernorm", signature, wire.bind(signature, [x], {}))
    # the same call written another way (a keyword, the default given) has the same lookup and key
    assert (lookup, key) == wire.sealed_keys(salt, "layernorm", signature, wire.bind(signature, [], {"x": x, "eps": 1e-5}))
    nudged = x.copy()
    nudged[1, 2] = np.nextafter(nudged[1, 2], 10)    # one ulp off: another lookup, another key
    for other in (wire.sealed_keys(salt, "layernorm", signature, wire.bind(signature, [nudged], {})),
                  wire.sealed_keys(salt, "layernorm", signature, wire.bind(signature, [x, 1e-6], {})),
                  wire.sealed_keys(salt, "gelu", signature, wire.bind(signature, [x], {})),
                  wire.sealed_keys(b"t" * 16, "layernorm", signature, wire.bind(signature, [x], {}))):
        assert other[0] != lookup and other[1] != key
    box = wire.sealed(key, b"the reference's value")
    assert box != b"the reference's value" and wire.sealed(key, box) == b"the reference's value"
    assert wire.sealed(wire.sealed_keys(salt, "layernorm", signature, wire.bind(signature, [nudged], {}))[1], box) \
        != b"the reference's value"


PUBLIC_BLOCK_TEST = "tests/the-block/public/test_block.py::test_block_two_heads_with_gamma_and_beta"


def _public_constant(suite: str, name: str):
    """A constant of the-block's public suite file ``suite`` (its assignment evaluated with numpy alone: no
    import of the test module)."""
    tree = ast.parse((PROJECT / "tests" / THE_BLOCK / "public" / f"{suite}.py").read_text())
    node = next(n.value for n in tree.body if isinstance(n, ast.Assign)
                and any(getattr(t, "id", None) == name for t in n.targets))
    return eval(compile(ast.Expression(node), suite, "eval"), {"np": np})


def _wired_block(course, folder, limits_, public=False):
    """The student's block in ``folder``, wired, on a hidden test's inputs (``public``: on the public test
    PUBLIC_BLOCK_TEST's): its value, the stand-ins it asked for, and those the grader answered itself (the
    others came sealed with the call)."""
    from grader.feedback.standins import Wiring
    from grader.grading.plugin import load_reference
    from grader.sandbox.client import Worker
    from grader.sandbox.proxy import Student

    reference = load_reference(course)
    wiring = Wiring.for_course(course, reference)
    answered = []
    stand_ins = wiring.stand_ins

    def counted(*args):
        replaced, answer, sealed = stand_ins(*args)
        return replaced, lambda name, a, k: answered.append(name) or answer(name, a, k), sealed

    wiring.stand_ins = counted
    rng = np.random.default_rng(7)
    x = rng.normal(size=(5, 8))
    params = {"W_q": rng.normal(size=(8, 8)), "W_k": rng.normal(size=(8, 8)), "W_v": rng.normal(size=(8, 8)),
              "W_o": rng.normal(size=(8, 8)), "W_1": rng.normal(size=(8, 32)), "W_2": rng.normal(size=(32, 8)),
              "gamma_1": rng.normal(size=8), "beta_1": rng.normal(size=8), "gamma_2": rng.normal(size=8),
              "beta_2": rng.normal(size=8)}
    if public:                                   # that public test's inputs (wiring.json has its calls)
        x = np.array([[-0.5, 0.8, -0.6, -0.8], [-0.3, -0.5, 0.3, -0.6], [-0.6, 0.8, 0.6, 0.1]])
        params = _public_constant("test_block", "WEIGHTS")
    with Worker(folder, limits_, modules=course.modules, functions=course.functions) as worker:
        student = Student(worker, course.functions, limits_, wiring=wiring)
        student.start_test(PUBLIC_BLOCK_TEST if public else "tests/the-block/hidden/test_block.py::test_sealed",
                           public=public)
        got = student.wired("block", x, params, 2)
        return got, student.stood_in(), answered, reference.block(x, params, 2)


def test_a_block_wired_like_the_reference_asks_the_grader_nothing(course, tmp_path):
    folder = faulty(tmp_path, "reference")
    got, stood_in, answered, expected = _wired_block(course, folder, course.limits, public=True)
    assert np.allclose(got, expected)
    assert sorted(stood_in) == ["attention", "layernorm", "layernorm", "mlp"] and answered == []


def test_a_hidden_test_sends_no_sealed_answers(course, tmp_path):
    # (an oracle otherwise: see test_a_hidden_tests_sealed_answers_do_not_tell_the_reference_wiring_from_another)
    folder = faulty(tmp_path, "reference")
    got, stood_in, answered, expected = _wired_block(course, folder, course.limits)
    assert np.allclose(got, expected)
    assert stood_in == answered == ["layernorm", "attention", "layernorm", "mlp"]


def test_a_call_the_reference_does_not_make_is_answered_by_the_grader(course, tmp_path):
    # the first LayerNorm with the second one's gamma and beta: that call has no sealed answer
    folder = faulty(tmp_path, "wrong", WIRING_FAULTS["block_gamma_2_first"])
    got, stood_in, answered, expected = _wired_block(course, folder, course.limits)
    # the grader saw the wrong call, and every call after it (their inputs follow from its value)
    assert answered == ["layernorm", "attention", "layernorm", "mlp"], answered
    assert not np.allclose(got, expected)                           # the block's value is the wrong wiring's
    assert stood_in == answered


# A block that does not know pre-LN from post-LN: post-LN, unless the sealed table that came with the call holds an
# answer for pre-LN's first call. It hashes the candidate itself (the table and its salt are in the stand-in's
# closure) and asks nothing: no call of the other wiring is ever made, so no stand-in sees it.
ORACLE_BLOCK = '''
def _table_knows(name, *args):
    for cell in getattr(layernorm, "__closure__", None) or ():
        ask = cell.cell_contents
        cells = dict(zip(ask.__code__.co_freevars, (c.cell_contents for c in ask.__closure__ or ())))
        table, wire = cells.get("sealed"), ask.__globals__.get("protocol")
        if table and wire:
            signature = table["signatures"][name]
            bound = wire.bind(signature, list(args), {})
            return wire.sealed_keys(table["salt"], name, signature, bound)[0] in table["index"]
    return False


def block(x, params, n_heads=1, use_attention=True):
    p = params
    if _table_knows("layernorm", x, p.get("gamma_1"), p.get("beta_1")):
        return _pre_ln(x, params, n_heads, use_attention)
    h = layernorm(x + attention(x, p["W_q"], p["W_k"], p["W_v"], p["W_o"], n_heads), p.get("gamma_1"), p.get("beta_1"))
    return layernorm(h + mlp(h, p["W_1"], p["W_2"]), p.get("gamma_2"), p.get("beta_2"))


def _pre_ln(x, params, n_heads=1, use_attention=True):'''


def test_a_hidden_tests_sealed_answers_do_not_tell_the_reference_wiring_from_another(course, tmp_path):
    # In a hidden test the grader answers any call (the reference runs on whatever the block passes), so no round
    # trip tells a block which of two wirings is the reference's. The values sealed with the call must not either:
    # the block gets its own wiring's value, as it did when every call was a round trip.
    folder = faulty(tmp_path, "oracle", {"block": [("def block(x, params, n_heads=1, use_attention=True):",
                                                    ORACLE_BLOCK)]})
    got, stood_in, answered, expected = _wired_block(course, folder, course.limits)
    assert not np.allclose(got, expected), "the block chose the reference's wiring from the sealed table"


def test_a_sealed_table_does_not_tell_the_reference_calls_from_its_variants():
    # the index is in the lookups' order: it tells nothing of the order of the calls sealed in it
    from grader.feedback.standins import Wiring

    wiring = Wiring({"gelu": "gelu", "mlp": "block"}, None, None)
    signature = [["x", False, None]]
    known = [{"function": "gelu", "bound": {"x": np.full(3, float(i))}, "value": np.full(3, float(i))} for i in range(8)]
    index = json.loads(wiring.sealed_answers(known, {"gelu": signature})["table"])["index"]
    assert [lookup for lookup, _, _ in index] == sorted(lookup for lookup, _, _ in index) and len(index) == 8


def test_a_wired_call_with_no_room_left_for_the_sealed_boxes_asks_the_grader(tmp_path, limits):
    # The boxes ride as one more array; a call whose arguments already hold MAX_ARRAYS of them goes without
    # (its stand-ins are asked for), never a grader fault for every student.
    from grader.sandbox.child import protocol as wire
    from grader.sandbox.client import StandIns, Worker

    folder = write_tree(tmp_path / "sub", {"mod.py": "def g(x):\n    raise NotImplementedError\n\n\n"
                                                     "def f(*arrays):\n    return g(arrays[0]) + len(arrays)\n"})
    sealed = {"table": json.dumps({"salt": "00" * 16, "signatures": {"g": [["x", False, None]]}, "index": []}),
              "boxes": np.zeros(4, np.uint8)}
    asked = []
    stand_ins = StandIns({"g": "mod"}, lambda name, a, k: asked.append(name) or a[0] * 2, sealed)
    with Worker(folder, limits, modules=["mod"], functions={"f": "mod", "g": "mod"}) as worker:
        reply = worker.call("mod", "f", [np.ones(2)] * wire.MAX_ARRAYS, {}, 5.0, stand_ins=stand_ins)
    assert asked == ["g"] and np.array_equal(reply.value, np.full(2, 2.0 + wire.MAX_ARRAYS))


def test_a_stand_in_whose_signature_cannot_travel_is_asked_for_not_sealed():
    # a reference default JSON cannot carry (a numpy scalar, a function): that function's calls are asked for
    from grader.feedback.standins import Wiring

    wiring = Wiring({"gelu": "gelu", "mlp": "block"}, None, None)
    known = [{"function": "gelu", "bound": {"x": np.ones(3), "c": 0.5}, "value": np.ones(3)}]
    table = json.loads(wiring.sealed_answers(known, {"gelu": [["x", False, None], ["c", True, np.float32(0.5)]]})
                       ["table"])
    assert table["signatures"] == {} and table["index"] == []
