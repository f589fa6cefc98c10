"""`grade trace`: the course's worked example through a student's functions, step by step, beside the reference;
the first step that differs names the function at fault, in the sandboxed worker, with no solutions needed."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys

import numpy as np
import pytest
from conftest import PROJECT, write_tree
from mutants import write_mutant

sys.path.insert(0, str(PROJECT / "tests"))
from public import toy  # noqa: E402  (the course's worked numbers)

TRACE = json.loads((PROJECT / "tests" / "public" / "trace.json").read_text())["cases"]


def case(row_x10=None, change_last=False, no_attention=False) -> dict[str, np.ndarray]:
    key = json.dumps({"change_last": change_last, "no_attention": no_attention, "row_x10": row_x10}, sort_keys=True)
    return {step["name"]: np.array(step["value"]) for step in TRACE[key]}


def trace(*args, cwd=PROJECT):
    proc = subprocess.run([sys.executable, "-m", "grader", "trace", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, timeout=120)
    return proc.returncode, proc.stdout + proc.stderr


def test_the_reference_trace_reproduces_the_courses_worked_numbers():
    steps = case()
    np.testing.assert_allclose(steps["a = attention(LayerNorm(x))"][4], toy.A5, atol=1e-3, rtol=0)
    np.testing.assert_allclose(steps["h = x + a"][4], toy.H5, atol=1e-3, rtol=0)
    np.testing.assert_allclose(steps["LayerNorm(h)"][4], toy.LN_H5, atol=1e-3, rtol=0)
    np.testing.assert_allclose(steps["m = mlp(LayerNorm(h))"][4], toy.M5, atol=1e-3, rtol=0)
    np.testing.assert_allclose(steps["y = block(x)"][4], toy.Y5, atol=1e-3, rtol=0)
    np.testing.assert_allclose(case(no_attention=True)["y = block(x)"][4], toy.Y5_NO_ATTENTION, atol=1e-3, rtol=0)
    weights = steps["attention weights (row i: token i on tokens 1..5)"]
    np.testing.assert_allclose(weights.sum(axis=1), 1.0)
    assert np.all(np.triu(weights, k=1) == 0)                       # causal: nobody sees a later token


def test_the_labs_cases_show_what_the_course_says():
    plain, scaled, changed = case(), case(row_x10=3), case(change_last=True)
    np.testing.assert_allclose(scaled["x"][2], 10 * plain["x"][2])
    np.testing.assert_allclose(scaled["LayerNorm(x)"], plain["LayerNorm(x)"], atol=1e-4)   # the same normalised copy
    assert not np.allclose(scaled["h = x + a"][2], plain["h = x + a"][2])                  # the stream keeps its size
    for name in plain:                                                # only the last token's rows change
        np.testing.assert_array_equal(changed[name][:4], plain[name][:4])
        assert not np.array_equal(changed[name][4], plain[name][4]), name


def test_the_reference_matches_at_every_step():
    code, output = trace("--path", "solutions")
    assert code == 0, output
    assert "Every step matches the reference." in output
    assert "9. y = block(x) · block()  ✓" in output


@pytest.mark.parametrize("mistake, options, step, function, tokens", [
    ("layernorm.ddof1", [], "2, LayerNorm(x)", "layernorm", "tokens 1, 2, 3, 4, 5"),
    ("attention.no_mask", [], "3, attention weights", "attention", "tokens 1, 2, 3, 4)"),
    ("attention.mask_leak", ["--change-last"], "3, attention weights", "attention", "tokens 1, 2, 3, 4)"),
    ("gelu.erf", [], "7, MLP hidden layer", "gelu", "tokens 1, 2, 3, 4, 5"),
    ("mlp.no_gelu", [], "8, m = mlp", "mlp", "tokens 1, 2, 3, 4, 5"),
    ("block.post_ln", ["--row-x10", 2], "9, y = block(x)", "block", "tokens 1, 2, 3, 4, 5"),
    ("block.ignores_use_attention", ["--no-attention"], "6, y = block(x)", "block", "tokens 1, 2, 3, 4, 5"),
])
def test_the_first_difference_names_the_function_responsible(tmp_path, mistake, options, step, function, tokens):
    folder = write_mutant(PROJECT / "solutions", tmp_path / "me", mistake)
    code, output = trace("--path", folder, *options)
    assert code == 1
    summary = output[output.index("First difference"):].replace("\n", " ")
    assert summary.startswith(f"First difference: step {step}")
    assert tokens in summary
    assert f"so {function}() got the right input and gave a different output" in summary
    assert output.count("✗ first difference") == 1


def test_code_that_fails_stops_the_trace_with_the_reason(tmp_path):
    code, output = trace()                                           # the stubs in exercises/
    assert code == 1 and "Stopped at step 2, LayerNorm(x): layernorm() is not implemented yet" in output
    folder = shutil.copytree(PROJECT / "solutions", tmp_path / "exits")
    (folder / "gelu.py").write_text("import os\n\ndef gelu(x):\n    os._exit(3)\n")
    code, output = trace("--path", folder)
    assert code == 1
    assert "Stopped at step 7" in output and "do not call sys.exit or os._exit" in output   # the worker died, not us


def test_a_students_copy_without_solutions_can_trace(tmp_path):
    root = tmp_path / "release"
    shutil.copytree(PROJECT / "tests" / "public", root / "tests" / "public", ignore=shutil.ignore_patterns("__pycache__"))
    manifest = json.loads((PROJECT / "course.json").read_text())
    del manifest["solutions"]
    for problem in manifest["problems"]:
        del problem["hidden"]
    (root / "course.json").write_text(json.dumps(manifest))
    folder = write_mutant(PROJECT / "solutions", tmp_path / "me", "gelu.erf")
    code, output = trace("--path", folder, cwd=root)
    assert code == 1 and "First difference: step 7, MLP hidden layer" in output


def test_a_case_without_a_reference_is_a_one_line_error(tmp_path):
    code, output = trace("--path", "solutions", "--row-x10", 9)
    assert code == 2 and "no reference for this case" in output
    write_tree(tmp_path / "empty", {})
    code, output = trace("--path", tmp_path / "missing")
    assert code == 2 and "folder not found" in output
