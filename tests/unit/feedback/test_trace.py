"""`grade trace`: the course's worked example through a student's functions, step by step, beside
the reference; the first step that differs names the function at fault, in the sandboxed worker,
with no solutions needed."""

from __future__ import annotations

import ast
import functools
import io
import json
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest
from conftest import PROJECT, THE_BLOCK, students_copy, write_tree
from mutants import MUTANTS, faulty, write_mutant

from grader.commands.feedback_data import trace_cases
from grader.course.manifest import load
from grader.course.modules import import_course_module

PUBLIC = PROJECT / "tests" / "the-block" / "public"
toy = import_course_module(PUBLIC / "toy.py")  # the course's worked numbers


@functools.cache
def reference() -> dict[str, list[dict]]:
    """The reference's steps in every case, as `grade trace` computes them beside the solutions."""
    return trace_cases(load(PROJECT / "course.json", THE_BLOCK))


def case(
    row_x10=None, change_last=False, no_attention=False, random=False
) -> dict[str, np.ndarray]:
    key = json.dumps(
        {
            "change_last": change_last,
            "no_attention": no_attention,
            "random": random,
            "row_x10": row_x10,
        },
        sort_keys=True,
    )
    return {step["name"]: np.array(step["value"]) for step in reference()[key]}


def trace(*args, cwd=PROJECT):
    """`grade trace ARGS` in ``cwd``: the-block's in this repository, the one assignment of a
    student's copy."""
    course = ["-a", THE_BLOCK] if cwd == PROJECT else []
    # timeout: a backstop against a hang, not a measurement (quiet: 1.3 s; 90x margin)
    proc = subprocess.run(
        [sys.executable, "-m", "grader", "trace", *course, *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
    )
    return proc.returncode, proc.stdout + proc.stderr


def test_the_reference_trace_reproduces_the_courses_worked_numbers():
    steps = case()
    np.testing.assert_allclose(steps["a = attention(LayerNorm(x))"][4], toy.A5, atol=1e-3, rtol=0)
    np.testing.assert_allclose(steps["h = x + a"][4], toy.H5, atol=1e-3, rtol=0)
    np.testing.assert_allclose(steps["LayerNorm(h)"][4], toy.LN_H5, atol=1e-3, rtol=0)
    np.testing.assert_allclose(steps["m = mlp(LayerNorm(h))"][4], toy.M5, atol=1e-3, rtol=0)
    np.testing.assert_allclose(steps["y = block(x)"][4], toy.Y5, atol=1e-3, rtol=0)
    np.testing.assert_allclose(
        case(no_attention=True)["y = block(x)"][4], toy.Y5_NO_ATTENTION, atol=1e-3, rtol=0
    )
    weights = steps["attention weights (row i: token i on tokens 1..5)"]
    np.testing.assert_allclose(weights.sum(axis=1), 1.0)
    assert np.all(np.triu(weights, k=1) == 0)  # causal: nobody sees a later token


def test_the_labs_cases_show_what_the_course_says():
    plain, scaled, changed = case(), case(row_x10=3), case(change_last=True)
    np.testing.assert_allclose(scaled["x"][2], 10 * plain["x"][2])
    np.testing.assert_allclose(
        scaled["LayerNorm(x)"], plain["LayerNorm(x)"], atol=1e-4
    )  # the same normalised copy
    assert not np.allclose(
        scaled["h = x + a"][2], plain["h = x + a"][2]
    )  # the stream keeps its size
    for name in plain:  # only the last token's rows change
        np.testing.assert_array_equal(changed[name][:4], plain[name][:4])
        assert not np.array_equal(changed[name][4], plain[name][4]), name


def test_the_reference_matches_at_every_step():
    code, output = trace("--path", "solutions/the-block")
    assert code == 0, output
    assert "Every step matches the reference." in output
    assert "9. y = block(x) · block()  ✓" in output
    code, output = trace("--path", "solutions/the-block", "--case", "random")
    assert code == 0, output
    assert (
        "Every step matches the reference." in output and "10. y = block(x) · block()  ✓" in output
    )
    assert "cannot check" not in output  # the random case hides nothing it knows of


def verdicts(output: str) -> dict[str, str]:
    """function -> its verdict line after "Function by function", wrapped lines joined."""
    text = " ".join(output[output.index("Function by function") :].split())
    found = re.findall(r"([✓✗]) (\w+)\(\)(.*?)(?= [✓✗] \w+\(\)| Your own chain|$)", text)
    return {name: f"{mark} {name}(){rest}" for mark, name, rest in found}


@pytest.mark.parametrize(
    "mistake, options, function, steps",
    [
        ("layernorm.ddof1", [], "layernorm", "steps 2 and 6"),
        ("attention.no_mask", [], "attention", "steps 3 and 4"),
        ("attention.mask_leak", ["--case", "change_last"], "attention", "steps 3 and 4"),
        ("gelu.erf", [], "gelu", "step 7"),
        ("mlp.no_gelu", [], "mlp", "step 8"),
        ("block.post_ln", ["--case", "row_x10=2"], "block", "step 9"),
        ("block.ignores_use_attention", ["--case", "no_attention"], "block", "step 6"),
    ],
)
def test_the_function_at_fault_is_named_at_its_own_steps(
    tmp_path, mistake, options, function, steps
):
    folder = write_mutant(PROJECT / "solutions" / "the-block", tmp_path / "me", mistake)
    code, output = trace("--path", folder, *options)
    assert code == 1
    found = verdicts(output)
    assert found[function] == (
        f"✗ {function}() differs at {steps}; its input was the reference's, so look at "
        f"{function}()."
    )
    for other, line in found.items():  # no other function blamed for its own code
        assert (
            other == function
            or line.startswith(f"✓ {other}()")
            or "which it is meant to call" in line
        ), line


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    """A student's copy of the-block (no solutions: the trace's reference values as the release
    stored them)."""
    return students_copy(tmp_path_factory.mktemp("trace-release") / "release")


@pytest.mark.parametrize("where", ["checkout", "release"])
def test_two_faults_in_two_functions_both_show_each_at_its_own_step(tmp_path, release, where):
    """Where the solutions are, block() runs with the course's layernorm, attention and gelu (as
    grading runs it): only its own mlp() can carry a fault into its step. A release has no
    reference: block() runs with the student's own, and its step says so rather than blame it."""
    folder = faulty(
        tmp_path,
        "me",
        {"layernorm": MUTANTS["layernorm.ddof1"][1], "block": MUTANTS["mlp.no_gelu"][1]},
    )
    code, output = trace("--path", folder, cwd=PROJECT if where == "checkout" else release)
    assert code == 1
    found = verdicts(output)
    assert found["layernorm"].startswith(
        "✗ layernorm() differs at steps 2 and 6; its input was the reference's"
    )
    assert found["mlp"].startswith(
        "✗ mlp() differs at step 8; its input was the reference's"
    )  # fed LayerNorm(h)
    assert found["attention"] == "✓ attention()" and found["gelu"] == "✓ gelu()"
    if where == "checkout":
        assert found["block"] == (
            "✗ block() differs at step 9; mlp(), which it is meant to call, "
            "does not match the reference either: fix it first, then trace "
            "again."
        )
        assert "9. y = block(x) · block()  ✗ tokens 1, 2, 3, 4, 5\n" in output
    else:
        assert found["block"] == (
            "✗ block() differs at step 9; layernorm() and mlp(), which it is "
            "meant to call, do not match the reference either: fix them "
            "first, then trace again."
        )
        step = " ".join(output[output.index("9. y = block(x)") :].split())
        assert step.startswith(
            "9. y = block(x) · block() ✗ tokens 1, 2, 3, 4, 5 (computed with "
            "your own layernorm(), a release having no reference to run it "
            "with; it differs at its own step, which may be all this step "
            "carries)"
        )
    assert "2. LayerNorm(x) · layernorm()  ✗ tokens 1, 2, 3, 4, 5" in output
    assert (
        "4. a = attention(LayerNorm(x)) · attention()  ✓ (your chain ✗: carried from an earlier "
        "step)" in output
    )
    assert "Your own chain first differs at step 2, LayerNorm(x)." in output


FORGOTTEN_W_O = {
    "attention": [
        ("return np.concatenate(out, axis=-1) @ W_o", "return np.concatenate(out, axis=-1)")
    ]
}
GAMMA_1_TWICE = {
    "block": [
        (
            'layernorm(h, p.get("gamma_2"), p.get("beta_2"))',
            'layernorm(h, p.get("gamma_1"), p.get("beta_1"))',
        )
    ]
}


@pytest.mark.parametrize(
    "edits, function, steps",
    [(FORGOTTEN_W_O, "attention", "step 5"), (GAMMA_1_TWICE, "block", "step 10")],
)
def test_the_toy_says_what_it_cannot_see_and_random_weights_see_it(
    tmp_path, edits, function, steps
):
    folder = faulty(tmp_path, "me", edits)
    code, output = trace("--path", folder)
    assert (
        code == 0 and "Every step matches the reference." in output
    )  # W_o = I, default gamma and beta
    note = " ".join(output[output.index("With W_o = I") :].split())
    assert note.startswith(
        "With W_o = I, gamma = 1, beta = 0 and one head, this example cannot check W_o, gamma "
        "and beta, or how the heads are split and merged: `grade trace --case random` can"
    )
    for test in load_trace_module().cannot_check()["tests"]:
        assert test in note
    code, output = trace("--path", folder, "--case", "random")
    assert code == 1
    assert verdicts(output)[function] == (
        f"✗ {function}() differs at {steps}; its input was the reference's, so "
        f"look at {function}()."
    )
    assert "cannot check" not in output


def load_trace_module():
    return import_course_module(PUBLIC / "trace.py")


@pytest.mark.parametrize("assignment", ["the-block", "the-modern-block"])
def test_the_public_tests_the_closing_note_points_to_exist(assignment):
    """Every public test a case's closing note sends the student to, in every case, is one of the
    suites'."""
    public = PROJECT / "tests" / assignment / "public"
    names = {
        node.name
        for path in public.glob("test_*.py")
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.FunctionDef)
    }
    module = import_course_module(public / "trace.py")
    named = set()
    for random in (False, True):
        for no_attention in (False, True):
            blind = module.cannot_check(random=random, no_attention=no_attention) or {}
            named |= {
                *blind.get("tests", ()),
                *(t for f in blind.get("faults", ()) for t in f.get("tests", ())),
            }
    assert named and named <= names, named - names


def test_a_near_miss_gets_the_digits_that_show_it(tmp_path):
    """eps = 1e-6 moves LayerNorm(x) by about 2e-5: beyond the tolerance, the same at 3 decimals."""
    folder = faulty(tmp_path, "me", {"layernorm": [("eps=1e-5", "eps=1e-6")]})
    code, output = trace("--path", folder)
    assert code == 1
    step = output[output.index("2. LayerNorm(x)") : output.index("3. attention weights")]
    assert "5 decimals: the difference is smaller than 0.001" in step
    yours = re.search(r"1  yours (.*) ✗", step).group(1).split()
    ref = re.search(r"ref (.*)", step).group(1).split()
    assert yours != ref  # the digits shown differ ...
    assert all(
        abs(float(a) - float(b)) < 1e-4 for a, b in zip(yours, ref)
    )  # ... by less than 0.001
    plain = output[output.index("1. x") : output.index("2. LayerNorm(x)")]
    assert "0.500" in plain and "0.50000" not in plain  # a step that matches keeps 3 decimals


def test_a_wide_step_fits_80_columns_and_shows_its_first_differing_column(tmp_path):
    """The MLP's hidden layer of --case random is 16 wide; a GELU that returns x above 3.5 differs
    only in column 9."""
    from rich.console import Console

    from grader.course import manifest as course_mod
    from grader.feedback import trace as trace_mod
    from grader.feedback import traceview

    gelu = "return 0.5 * x * (1 + np.tanh("
    folder = faulty(
        tmp_path,
        "me",
        {"gelu": [(gelu, "return np.where(x > 3.5, x, 0) + (x <= 3.5) * 0.5 * x * (1 + np.tanh(")]},
    )
    case = {"row_x10": None, "change_last": False, "no_attention": False, "random": True}
    course = course_mod.load(PROJECT / "course.json", "the-block")
    result = trace_mod.run(course, folder, case, reference())
    console = Console(width=80, record=True, file=io.StringIO())
    traceview.trace_table(result, console, "title")
    text = console.export_text()
    assert max(len(line) for line in text.splitlines()) <= 80
    hidden = text[text.index("8. MLP hidden layer") : text.index("9. m = mlp")]
    first, header = hidden.splitlines()[:2]
    assert first.endswith("✗ tokens 3, 5") and header.split()[:2] == [
        "token",
        "9",
    ]  # column 9 is shown
    assert re.search(
        r"columns 9 to \d+ of 16 shown \(column 9 is the first that\s+differs\)", hidden
    )


def test_code_that_fails_is_named_with_the_reason_and_the_other_steps_still_run(tmp_path):
    code, output = trace()  # the stubs in exercises/
    assert code == 1
    assert verdicts(output)["layernorm"].startswith(
        "✗ layernorm() failed at step 2: layernorm() is not implemented yet"
    )
    folder = shutil.copytree(PROJECT / "solutions" / "the-block", tmp_path / "exits")
    (folder / "gelu.py").write_text("import os\n\ndef gelu(x):\n    os._exit(3)\n")
    code, output = trace("--path", folder)
    assert code == 1
    found = verdicts(output)
    assert (
        found["gelu"].startswith("✗ gelu() failed at step 7:")
        and "do not call sys.exit or os._exit" in found["gelu"]
    )
    assert (
        found["layernorm"] == "✓ layernorm()" and found["attention"] == "✓ attention()"
    )  # a fresh worker each
    assert found["mlp"] == "✓ mlp()"  # it ran with the course's gelu(), as grading runs it


def test_a_students_copy_without_solutions_can_trace(tmp_path, release):
    folder = write_mutant(PROJECT / "solutions" / "the-block", tmp_path / "me", "gelu.erf")
    code, output = trace("--path", folder, cwd=release)
    assert code == 1 and verdicts(output)["gelu"].startswith("✗ gelu() differs at step 7;")


def test_an_edit_of_a_solution_counts_at_once_in_the_instructors_checkout(tmp_path):
    """Where the solutions are, the reference's values are computed live: the next `grade trace`
    follows an edited solution, with no step between (no stored values to bring up to date)."""
    from grader.course.manifest import settings

    course, reference = tmp_path / "course", PROJECT / "solutions" / THE_BLOCK
    for folder in ("exercises", "tests"):
        shutil.copytree(
            PROJECT / folder / THE_BLOCK,
            course / folder / THE_BLOCK,
            ignore=shutil.ignore_patterns("__pycache__", "checks", "hidden"),
        )
    solutions = write_mutant(reference, course / "solutions" / THE_BLOCK, "gelu.erf")
    shutil.copy(reference / "mistakes.py", solutions)  # course.json names it
    assignment = settings(PROJECT / "course.json", THE_BLOCK)[0]
    del assignment["overrides"]
    assignment["problems"] = [
        {k: v for k, v in p.items() if k != "hidden"} for p in assignment["problems"]
    ]
    (course / "course.json").write_text(json.dumps(assignment))
    code, output = trace("--path", reference, cwd=course)
    assert code == 1 and verdicts(output)["gelu"].startswith("✗ gelu() differs at step 7;")


def test_a_case_without_a_reference_is_a_one_line_error(tmp_path):
    code, output = trace("--path", "solutions/the-block", "--case", "row_x10=9")
    assert code == 2 and "no such case: row_x10 is one of 1, 2, 3, 4, 5, null;" in output
    code, output = trace("--path", "solutions/the-block", "--case", "rowx10=3")
    assert (
        code == 2
        and "no case 'rowx10' (its cases: row_x10, change_last, no_attention, random" in output
    )


def test_the_cases_are_the_trace_modules_own(tmp_path):
    """The grader declares no case: --cases lists the course's trace module's keywords and their
    lines."""
    code, output = trace("--cases")
    assert code == 0 and "--case row_x10=VALUE  (default null): a token number 1 to 5" in output
    assert [line.split()[1].split("=")[0] for line in output.splitlines()] == [
        "row_x10",
        "change_last",
        "no_attention",
        "random",
    ]
    write_tree(tmp_path / "empty", {})
    code, output = trace("--path", tmp_path / "missing")
    assert code == 2 and "folder not found" in output


def test_a_near_miss_in_a_called_function_is_named_and_marks_no_row_of_its_own_step(
    tmp_path, release
):
    """gelu with 0.0447 for 0.044715 is within the tolerance at its own step (grade check passes it)
    and W_2 carries its difference beyond it at mlp's: the rows of gelu's step are ✓ like the step,
    and mlp's verdict sends the student to gelu(), not to a correct mlp(). (In a release, where
    mlp() runs with the student's own gelu(); where the solutions are it runs with the course's, and
    matches.)"""
    folder = faulty(tmp_path, "me", {"gelu": [("0.044715", "0.0447")]})
    code, output = trace("--path", folder, cwd=release)
    step = output[output.index("7. MLP hidden layer") : output.index("8. m = mlp")]
    assert step.splitlines()[0].endswith("✓") and "✗" not in step
    found = verdicts(output)
    assert found["gelu"] == "✓ gelu()"
    assert (
        found["mlp"].startswith(
            "✗ mlp() differs at step 8; gelu(), which it is meant to call, matches the "
            "reference only within the tolerance"
        )
        and "look at gelu() first" in found["mlp"]
    )


def test_an_exception_shows_its_message_and_the_students_line(tmp_path):
    """A trace runs on the student's own machine: the exception's message and line are theirs to
    see."""
    folder = faulty(
        tmp_path,
        "me",
        {"block": [("return gelu(u @ W_1) @ W_2", "return np.dot(gelu(u @ W_1), W_2)")]},
    )
    code, output = trace("--path", folder)
    assert code == 1
    step = output[output.index("8. m = mlp") : output.index("9. y = block")]
    source = (PROJECT / "solutions" / "the-block" / "block.py").read_text().splitlines()
    line = 1 + next(i for i, text in enumerate(source) if "return gelu(u @ W_1) @ W_2" in text)
    assert "NameError: name 'np' is not defined" in step
    assert f'File "block.py", line {line}, in mlp' in step
    assert verdicts(output)["mlp"] == "✗ mlp() failed at step 8: mlp() raised NameError."


SWAPPED_IN_BLOCK = {"block": [('p["W_q"], p["W_k"], p["W_v"]', 'p["W_k"], p["W_q"], p["W_v"]')]}


def test_the_closing_note_names_each_fault_the_toy_cannot_see_and_the_case_that_sees_it(tmp_path):
    """The toy's W_q = W_k = I: a block that passes W_q and W_k swapped matches at every step. The
    note names that fault and the case that sees it, and that case does."""
    folder = faulty(tmp_path, "me", SWAPPED_IN_BLOCK)
    code, output = trace("--path", folder)
    assert code == 0 and "Every step matches the reference." in output
    note = " ".join(output[output.index("With W_o = I") :].split())
    assert (
        "It cannot see W_q and W_k swapped, in attention or as block() passes them (scores "
        "k @ q.T) (W_q = W_k = I: q and k are the same): `grade trace --case random` sees "
        "it."
    ) in note
    assert (
        "It cannot see use_attention=False ignored (attention is on here): `grade trace --case "
        "no_attention` sees it."
    ) in note
    assert (
        "It cannot see a LayerNorm whose axis follows the input's shape (x is 5 × 4, never "
        "square): no case of this example does; the public test "
        "test_a_square_input_is_normalised_row_by_row does"
    ) in note
    code, output = trace("--path", folder, "--case", "random")
    assert code == 1 and verdicts(output)["block"].startswith("✗ block() differs at step 10;")
    blind = load_trace_module().cannot_check(random=True)
    assert all(f["see"] != "random" for f in blind["faults"])  # the random case hides none of them


def test_weights_that_are_not_weights_are_never_shown_as_the_students(tmp_path):
    """An attention whose values come from W_k (a copy slip): its weights are right, but what the
    probe reads back through its value path is all zeros. The step says they cannot be read off,
    judges nothing, and attention() is judged at step 4, a, alone."""
    folder = faulty(
        tmp_path,
        "me",
        {
            "attention": [
                ("q, k, v = u @ W_q, u @ W_k, u @ W_v", "q, k, v = u @ W_q, u @ W_k, u @ W_k")
            ]
        },
    )
    code, output = trace("--path", folder)
    assert code == 1
    step = output[output.index("3. attention weights") : output.index("4. a = attention")]
    assert "not judged: these cannot be read off your function" in step
    assert "the rows of what came back sum to 0, 0, 0, 0, 0, not 1" in " ".join(step.split())
    assert "yours" not in step and "✗" not in step
    assert verdicts(output)["attention"] == (
        "✗ attention() differs at step 4; its input was the reference's, so look at attention()."
    )
