"""Red team 18c: submissions that gain points without the work (the-block, through `grade autograde`)."""
from __future__ import annotations

import json
import shutil

from conftest import PROJECT, THE_BLOCK, grade

ALWAYS_RAISES = 'def count_params(d_model, n_heads, n_kv_heads=None, d_ff=None, style="gpt2"):\n' \
                '    raise ValueError(f"unknown style {style!r}")\n'


def test_a_count_params_that_always_raises_value_error_earns_nothing(tmp_path):
    """A count_params whose whole body is `raise ValueError` scored 1 of params' 15 points (the stub's raise
    NotImplementedError 0): the hidden property test of an unknown style is the one property test of the
    assignment with no attempt at the function before its points (every other checks the output is within
    ATTEMPT of the specified one, or the counts are, first)."""
    subs = tmp_path / "subs"
    for name in ("stub", "raises"):
        folder = subs / name
        folder.mkdir(parents=True)
        for module in ("layernorm", "gelu", "attention", "block"):
            shutil.copy(PROJECT / "solutions" / THE_BLOCK / f"{module}.py", folder)
    shutil.copy(PROJECT / "exercises" / THE_BLOCK / "params.py", subs / "stub")
    (subs / "raises" / "params.py").write_text(ALWAYS_RAISES)
    code, output = grade("autograde", "-a", THE_BLOCK, subs, "--out", tmp_path / "out", "--jobs", 1, "--force")
    assert code == 0, output
    scores = {p.stem: json.loads(p.read_text()) for p in (tmp_path / "out").glob("*.json")}
    params = {name: next(p["score"] for p in doc["problems"] if p["name"] == "params") for name, doc in scores.items()}
    assert params == {"stub": 0, "raises": 0}
