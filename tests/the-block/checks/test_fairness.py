"""Fair grades: a function that merely has the properties a problem's tests check earns no hidden
property points. That every single fault of mutants.FAULTS costs points in its own problem only
is tests/checks/test_course.py's; `make fairness` prints that measurement, with what numeric
slips keep."""

from __future__ import annotations

import json

import pytest
from conftest import THE_BLOCK, course_copy, grade
from mutants import faulty

# Functions that merely have the properties, written in place of the reference's (a red team's,
# 2026-12-01):
# each is as invariant, causal or consistent as the function it fakes, and computes nothing of it.
FAKES = {  # name -> (module, the faked functions' source, the problem's tests they answer for)
    "ln_sign": (
        "layernorm",
        "import numpy as np\n\ndef layernorm(x, gamma=None, beta=None, eps=1e-5):\n"
        "    return np.sign(x - x.mean(axis=-1, keepdims=True))\n",
        "layernorm",
    ),
    "ln_centred": (
        "layernorm",
        "def layernorm(x, gamma=None, beta=None, eps=1e-5):\n"
        "    return x - x.mean(axis=-1, keepdims=True)\n",
        "layernorm",
    ),
    "gelu_half": ("gelu", "def gelu(x):\n    return 0.5 * x\n", "gelu"),
    "att_u_w_v": ("attention", None, "attention"),
    "blk_cumsum": (
        "block",
        "import numpy as np\n\ndef mlp(u, W_1, W_2):\n    return u @ W_1 @ W_2\n\n"
        "def block(x, params, n_heads=1, use_attention=True):\n"
        "    return np.cumsum(x, axis=0)\n",
        "block",
    ),
    "par_constant": (
        "params",
        "def count_params(d_model, n_heads, n_kv_heads=None, d_ff=None, style='gpt2'):\n"
        "    if style not in ('gpt2', 'llama'):\n        raise ValueError(style)\n"
        "    return {'attention': 1, 'mlp': 1, 'norm': 1, 'total': 3}\n",
        "params",
    ),
}
ATTENTION_AS_U_W_V = "    return u @ W_v @ W_o\n"


@pytest.fixture(scope="module")
def fakes(tmp_path_factory) -> dict[str, dict]:
    tmp = tmp_path_factory.mktemp("fakes")
    for name, (module, source, _) in FAKES.items():
        folder = faulty(tmp / "subs", name)
        if source is None:  # attention only: keep the reference's softmax
            text = (folder / "attention.py").read_text()
            head, _, _ = text.partition("def attention(")
            source = (
                head
                + "def attention(u, W_q, W_k, W_v, W_o, n_heads=1, causal=True):\n"
                + ATTENTION_AS_U_W_V
            )
        (folder / f"{module}.py").write_text(source)
    code, output = grade(
        "autograde",
        "--course",
        course_copy(),
        "-a",
        THE_BLOCK,
        tmp / "subs",
        "--out",
        tmp / "out",
        "--jobs",
        2,
    )
    assert code == 0, output
    return {p.stem: json.loads(p.read_text()) for p in (tmp / "out").glob("*.json")}


@pytest.mark.parametrize("name", sorted(FAKES))
def test_a_function_that_merely_has_the_properties_earns_no_hidden_property_points(fakes, name):
    """Property points go to an attempt at the function (compare.assert_attempt): a fake keeps at
    most the public property tests, which a student sees fail or pass with their own eyes."""
    problem = FAKES[name][2]
    earned = [
        t["name"]
        for t in fakes[name]["tests"]
        if t["problem"] == problem
        and t.get("property")
        and t["visibility"] != "visible"
        and t["status"] == "passed"
        and "softmax" not in t["name"]
        and not (problem == "params" and "value_error" in t["name"])
    ]  # (the fake does raise it)
    assert not earned, earned
