"""Red team 18c: submissions that gain points without the work (the-block, through `grade
autograde`)."""

from __future__ import annotations

import json
import shutil

from conftest import PROJECT, THE_BLOCK, course_copy, grade

ALWAYS_RAISES = (
    'def count_params(d_model, n_heads, n_kv_heads=None, d_ff=None, style="gpt2"):\n'
    '    raise ValueError(f"unknown style {style!r}")\n'
)


def test_a_count_params_that_always_raises_value_error_earns_nothing(tmp_path):
    """A count_params whose whole body is `raise ValueError` scored 1 of params' 15 points (the
    stub's raise NotImplementedError 0): the hidden property test of an unknown style is the one
    property test of the assignment with no attempt at the function before its points (every other
    checks the output is within ATTEMPT of the specified one, or the counts are, first)."""
    subs = tmp_path / "subs"
    for name in ("stub", "raises"):
        folder = subs / name
        folder.mkdir(parents=True)
        for module in ("layernorm", "gelu", "attention", "block"):
            shutil.copy(PROJECT / "solutions" / THE_BLOCK / f"{module}.py", folder)
    shutil.copy(PROJECT / "exercises" / THE_BLOCK / "params.py", subs / "stub")
    (subs / "raises" / "params.py").write_text(ALWAYS_RAISES)
    code, output = grade(
        "autograde",
        "--course",
        course_copy(),
        "-a",
        THE_BLOCK,
        subs,
        "--out",
        tmp_path / "out",
        "--jobs",
        1,
        "--force",
    )
    assert code == 0, output
    scores = {p.stem: json.loads(p.read_text()) for p in (tmp_path / "out").glob("*.json")}
    params = {
        name: next(p["score"] for p in doc["problems"] if p["name"] == "params")
        for name, doc in scores.items()
    }
    assert params == {"stub": 0, "raises": 0}


MLP_SCALED = ("return gelu(u @ W_1) @ W_2", "return gelu(u @ W_1 * 1.7) @ W_2")
GELU_UNDOES_IT = (
    "\nimport sys as _sys\n_right = gelu\n\n\ndef gelu(x):\n"
    "    if _sys._getframe(1).f_code.co_name == 'mlp':\n        x = x / 1.7\n    return _right(x)\n"
)


def test_a_component_broken_on_purpose_never_raises_the_total(tmp_path):
    """An mlp that scales u @ W_1 by 1.7 beside a gelu that undoes it when called from mlp (and is
    right when tested alone): the mlp runs with the reference's gelu when graded, so the pair earns
    what the honest slip earns (through the old stand-ins' public fallback it earned 1 point more).
    Within one problem the student's own functions work together (an attention scaling its scores
    beside a softmax undoing it is a right attention), so the pair must span two problems."""
    subs = tmp_path / "subs"
    variants = {
        "mlp_honest": {"block": MLP_SCALED},
        "mlp_sabotage": {"block": MLP_SCALED, "gelu": GELU_UNDOES_IT},
    }
    for name, edits in variants.items():
        folder = subs / name
        folder.mkdir(parents=True)
        for module in ("layernorm", "gelu", "attention", "block", "params"):
            shutil.copy(PROJECT / "solutions" / THE_BLOCK / f"{module}.py", folder)
        for module, edit in edits.items():
            path = folder / f"{module}.py"
            text = path.read_text()
            if isinstance(edit, tuple):
                assert edit[0] in text
                text = text.replace(*edit)
            else:
                text += edit
            path.write_text(text)
    code, output = grade(
        "autograde",
        "--course",
        course_copy(),
        "-a",
        THE_BLOCK,
        subs,
        "--out",
        tmp_path / "out",
        "--jobs",
        1,
        "--force",
    )
    assert code == 0, output
    total = {p.stem: json.loads(p.read_text())["score"] for p in (tmp_path / "out").glob("*.json")}
    assert total["mlp_sabotage"] <= total["mlp_honest"] < 100


def test_a_gqa_that_always_raises_value_error_earns_nothing_in_grade_check(tmp_path):
    """The same pattern in the modern block's public suite:
    `test_gqa_n_kv_heads_must_divide_n_heads` gave 0.5 to a gqa_attention whose whole body is `raise
    ValueError` (the divisibility rule now counts only when a valid call returns an array)."""
    folder = tmp_path / "raises"
    shutil.copytree(PROJECT / "solutions" / "the-modern-block", folder)
    (folder / "mistakes.py").unlink()
    source = (folder / "gqa.py").read_text()
    (folder / "gqa.py").write_text(
        source.replace("    n, d = u.shape\n", "    raise ValueError('never')\n", 1)
    )
    code, output = grade(
        "check", "-a", "the-modern-block", "--path", folder, "--json", tmp_path / "me.json", "gqa"
    )
    problems = {p["name"]: p for p in json.loads((tmp_path / "me.json").read_text())["problems"]}
    assert problems["gqa"]["score"] == 0, output
