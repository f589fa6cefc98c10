"""Wiring tests: the block (and the mlp) graded on their own lines, with the student's other functions
replaced by the reference's (grader.standins). A fault inside a component costs points only in its own
problem; a fault in the wiring costs the block its points whatever the components do; breaking a
component on purpose never raises the total."""
from __future__ import annotations

import json
import shutil

import pytest
from conftest import grade, write_tree
from mutants import BLOCK_LN_1, BLOCK_LN_2, FAULTS, LN_RETURN, faulty

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
    # not in the catalogue: the second LayerNorm with the first one's gamma and beta
    "block_gamma_1_twice": {"block": [(BLOCK_LN_2, 'u = layernorm(h, p.get("gamma_1"), p.get("beta_1"))')]},
}
# The sabotage a red team found: the block drops gamma and beta, and layernorm ignores them on purpose, so
# that the two together compute what a correct block computes.
SABOTAGE = {**WIRING_FAULTS["block_no_gamma_beta"], **FAULTS["layernorm.no_affine"].edits}


@pytest.fixture(scope="module")
def scores(tmp_path_factory) -> dict[str, dict]:
    root = tmp_path_factory.mktemp("wiring")
    subs = root / "subs"
    for name, edits in {**COMPONENT_FAULTS, **WIRING_FAULTS}.items():
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
    code, output = grade("autograde", subs, "--out", out, "--jobs", 2)
    assert code == 0, output
    return {p.stem: json.loads(p.read_text()) for p in out.glob("*.json")}


def points(doc: dict) -> dict[str, float]:
    return {p["name"]: p["score"] for p in doc["problems"]}


def block_tests(doc: dict) -> dict[str, float]:
    return {t["name"]: t["score"] for t in doc["tests"] if t["problem"] == "block" and "mlp" not in t["name"]}


@pytest.mark.parametrize("name", sorted(COMPONENT_FAULTS))
def test_a_correct_block_keeps_its_points_whatever_its_components_do(scores, name):
    reference = scores["reference"]
    assert reference["score"] == 100
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
    why = "SyntaxError: " if name == "ln_syntax_error" else "layernorm is not available in this course"
    assert all(t["status"] == "error" and t["output"].startswith("importing layernorm.py failed") for t in own)
    assert all(why in t["output"] for t in own if t["visibility"] == "visible"), [t["output"] for t in own]


def test_a_block_that_computes_its_own_parts_is_judged_on_its_own_output(scores):
    assert points(scores["inline_right"])["block"] == 25
    assert points(scores["inline_wrong"])["block"] < 25


def test_a_call_the_specified_wiring_never_makes_is_named_on_public_tests(scores):
    """Public tests: the stand-ins answer only the calls the reference (or a catalogued wiring mistake) makes
    on the test's inputs; the gamma_1-twice block (not catalogued) is told which call is off."""
    doc = scores["block_gamma_1_twice"]
    public = [t for t in doc["tests"] if t["problem"] == "block" and t["visibility"] == "visible"
              and "mlp" not in t["name"] and t["status"] != "passed"]
    assert public and all("layernorm() was called on an input the specified wiring never gives it" in t["output"]
                          for t in public), [t["output"] for t in public]


def test_a_catalogued_wiring_mistake_is_named_on_public_tests(scores):
    """The stand-ins also answer the calls a known wiring mistake makes, so its output can be diagnosed."""
    public = [t for t in scores["block_post_ln"]["tests"] if t["problem"] == "block" and t["visibility"] == "visible"
              and "mlp" not in t["name"]]
    assert public and all(t["status"] == "failed" and t.get("diagnosis") == "block.post_ln" for t in public), \
        [t["output"] for t in public]


SUITE = '''
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
