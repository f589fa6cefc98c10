"""The second assignment, the-modern-block: the reference scores full marks and the stubs zero;
every mistake of its catalogue (solutions/the-modern-block/mistakes.py), written into a copy of the reference as a
student would write it, is named, and named alone; a correct submission is never diagnosed; a student's copy of
the assignment names a mistake from the outputs `grade release` stored in it; `grade trace` runs the
course text's 5-token example, there too."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import PROJECT, grade

from grader.course.modules import import_course_module
from grader.feedback.mistakes import family

ASSIGNMENT = "the-modern-block"
SOLUTIONS = PROJECT / "solutions" / "the-modern-block"
MODULES = ["rmsnorm", "swiglu", "gqa", "modern_block", "model_params"]
CATALOGUE = import_course_module(SOLUTIONS / "mistakes.py", [SOLUTIONS]).MISTAKES

REPEAT = "k, v = (t.repeat(n_heads // n_kv_heads, axis=0) for t in (k, v))"

# mistake id -> (module, [(old, new), ...]): each written the way a student writes it, independently of the
# catalogue's variants (so a variant that models its mistake wrongly shows up as a mutant with no diagnosis).
MUTANTS: dict[str, tuple[str, list[tuple[str, str]]]] = {
    "rmsnorm.mean_subtracted": ("rmsnorm", [("    ms = (x * x)", "    x = x - x.mean(axis=-1, keepdims=True)\n"
                                                               "    ms = (x * x)")]),
    "rmsnorm.no_eps": ("rmsnorm", [("np.sqrt(ms + eps)", "np.sqrt(ms)")]),
    "rmsnorm.axis": ("rmsnorm", [("(x * x).mean(axis=-1, keepdims=True)", "(x * x).mean(axis=0, keepdims=True)")]),
    "silu.sigmoid": ("swiglu", [("return x / (1 + np.exp(-x))", "return 1 / (1 + np.exp(-x))")]),
    "swiglu.swapped": ("swiglu", [("(silu(u @ W_1) * (u @ W_3))", "(silu(u @ W_3) * (u @ W_1))")]),
    "swiglu.gate_outside": ("swiglu", [("(silu(u @ W_1) * (u @ W_3))", "silu((u @ W_1) * (u @ W_3))")]),
    "swiglu.meta_rounding": ("swiglu", [("return round(8 * d / 3 / 256) * 256 if d >= 256 else 8 * d // 3",
                                         "hidden = int(8 * d / 3)\n    return 256 * ((hidden + 255) // 256)")]),
    "gqa.tile": ("gqa", [(REPEAT, "k, v = (np.tile(t, (n_heads // n_kv_heads, 1, 1)) for t in (k, v))")]),
    "gqa.no_repeat": ("gqa", [(REPEAT, "k, v = k[:1], v[:1]  # one K/V head, broadcast over the query heads")]),
    "gqa.scale_d_model": ("gqa", [("/ math.sqrt(d_head)", "/ math.sqrt(d)")]),
    "modern_block.no_residual": ("modern_block", [("    return h + swiglu(", "    return swiglu(")]),
    "modern_block.ignores_use_attention": ("modern_block", [("    if use_attention:\n", "    if True:\n")]),
    "modern_block.gains": ("modern_block", [('rmsnorm(x, p.get("gain_1"))', 'rmsnorm(x, p.get("gain_2"))'),
                                            ('rmsnorm(h, p.get("gain_2"))', 'rmsnorm(h, p.get("gain_1"))')]),
    "model.tied_twice": ("model_params", [('"output": 0 if tied else vocab_size * d', '"output": vocab_size * d')]),
    "model.n_kv_heads": ("model_params", [("2 * d * n_kv_heads * d_head", "2 * d * d")]),
    "model.meta_rounding": ("model_params", [("d_ff = swiglu_width(d) if d_ff is None else d_ff",
                                              "d_ff = (int(8 * d / 3) + 255) // 256 * 256 if d_ff is None else d_ff")]),
}

# The issue's list of usual mistakes (section 3), by catalogue id.
ISSUE = {"rmsnorm.mean_subtracted", "rmsnorm.no_eps", "rmsnorm.axis", "silu.sigmoid", "swiglu.swapped",
         "swiglu.gate_outside", "gqa.tile", "gqa.no_repeat", "gqa.scale_d_model", "swiglu.meta_rounding",
         "model.tied_twice"}


def write_mutant(folder: Path, mistake: str) -> Path:
    """A copy of the reference modules in ``folder`` with ``mistake`` written into one of them."""
    folder.mkdir(parents=True)
    for module in MODULES:
        shutil.copyfile(SOLUTIONS / f"{module}.py", folder / f"{module}.py")
    module, changes = MUTANTS[mistake]
    target = folder / f"{module}.py"
    text = target.read_text()
    for old, new in changes:
        assert old in text, f"{mistake}: {old!r} is not in {module}.py"
        text = text.replace(old, new)
    target.write_text(text)
    return folder


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> dict[str, dict]:
    """Every mutant and the reference, autograded with the assignment's manifest."""
    tmp = tmp_path_factory.mktemp("modern")
    for mistake in MUTANTS:
        write_mutant(tmp / "subs" / mistake, mistake)
    shutil.copytree(SOLUTIONS, tmp / "subs" / "reference", ignore=shutil.ignore_patterns("mistakes.py", "__pycache__"))
    code, output = grade("autograde", "-a", ASSIGNMENT, tmp / "subs", "--out", tmp / "out", "--jobs", 2)
    assert code == 0, output
    return {p.stem: json.loads(p.read_text()) for p in (tmp / "out").glob("*.json")}


def test_validate_reference_full_and_stubs_zero():
    code, output = grade("validate", "-a", ASSIGNMENT)
    assert code == 0, output
    assert "course is valid" in output


def test_every_mistake_of_the_catalogue_has_a_mutant_and_the_issues_list_is_covered():
    assert {family(m.id) for m in CATALOGUE} == set(MUTANTS)
    assert ISSUE <= set(MUTANTS)


@pytest.mark.parametrize("mistake", sorted(MUTANTS))
def test_each_mistake_is_named_and_no_other(graded, mistake):
    failed = [t for t in graded[mistake]["tests"] if t["status"] != "passed"]
    assert failed, f"{mistake}: no test fails"
    assert {t.get("diagnosis") for t in failed if not t.get("diagnosis", "hint.").startswith("hint.")} == {mistake}
    messages = {f"diagnosis: {m.message}" for m in CATALOGUE if family(m.id) == mistake}
    named = [t for t in failed if t.get("diagnosis") == mistake]
    assert all(t["output"].splitlines()[1] in messages for t in named)


@pytest.mark.parametrize("mistake", sorted(MUTANTS))
def test_a_mistake_costs_points_in_its_own_problem_only(graded, mistake):
    """The block and count_model are judged on their wiring: a component's mistake costs nothing elsewhere."""
    own = MUTANTS[mistake][0]
    for problem in graded[mistake]["problems"]:
        if problem["name"] != own:
            assert problem["score"] == problem["max_score"], (mistake, problem["name"])


def test_the_reference_is_never_diagnosed(graded):
    doc = graded["reference"]
    assert doc["score"] == doc["max_score"] == 100
    assert not any("diagnosis" in t for t in doc["tests"])


def test_the_named_course_tests_exist():
    """The tests section 3 of issue 15 asks for by name."""
    names = {"hidden/test_gqa.py": ["test_gqa_course_d8_walk", "test_gqa_multi_query_one_kv_head",
                                    "test_gqa_with_n_kv_heads_equal_to_n_heads_is_multi_head_attention",
                                    "test_gqa_changing_last_token_leaves_earlier_rows_unchanged"],
             "hidden/test_rmsnorm.py": ["test_rmsnorm_row_times_10_changes_nothing"],
             "hidden/test_modern_block.py": ["test_modern_block_course_d8_walk_5_by_8",
                                             "test_modern_block_use_attention_off"],
             "hidden/test_model_params.py": ["test_course_counts_d_4096_32_heads_8_kv_heads",
                                             "test_llama3_8b_total_8_030_261_248"]}
    for path, tests in names.items():
        text = (PROJECT / "tests" / "the-modern-block" / path).read_text()
        for name in tests:
            assert f"def {name}(" in text, (path, name)


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> Path:
    """A student's copy of the assignment, made by `grade release`."""
    root = tmp_path_factory.mktemp("release")
    out = root / "modern"
    code, output = grade("release", "-a", ASSIGNMENT, "--out", out, "--nbgrader-dir", root / "nbgrader")
    assert code == 0, output
    return out


def test_a_students_copy_checks_the_stubs_and_names_a_mistake(release, tmp_path):
    code, output = grade("check", cwd=release)
    assert code == 1, output
    folder = write_mutant(tmp_path / "me", "gqa.tile")
    code, output = grade("check", "--path", folder, cwd=release)
    assert code == 1
    message = next(m.message for m in CATALOGUE if m.id == "gqa.tile")
    assert f"\n    diagnosis: {message}\n" in output
    code, output = grade("check", "--path", SOLUTIONS, cwd=release)
    assert code == 0, output


def test_a_students_copy_traces_the_course_example_from_its_stored_values(release):
    code, output = grade("trace", "--path", SOLUTIONS, cwd=release)
    assert code == 0 and "Every step matches the reference." in output, output
    code, output = grade("trace", "--path", SOLUTIONS, "--case", "random", cwd=release)
    assert code == 0 and "Every step matches the reference." in output, output


@pytest.mark.parametrize("case", [[], ["--case", "row_x10=3"], ["--case", "change_last"], ["--case", "no_attention"],
                                  ["--case", "random"]])
def test_trace_of_the_course_example_matches_for_the_reference(case):
    code, output = grade("trace", "-a", ASSIGNMENT, "--path", SOLUTIONS, *case)
    assert code == 0, output
    assert "y = modern_block(x)" in output and ("query head 2's weights" in output) != ("no_attention" in case)


def test_the_reference_silu_warns_nothing_for_large_inputs():
    """The contract: silu(x) = x / (1 + exp(-x)) with no overflow warning however large |x| (float64 and float32)."""
    import warnings

    import numpy as np

    silu = import_course_module(SOLUTIONS / "swiglu.py").silu
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for dtype in (np.float64, np.float32):
            got = silu(np.array([-1e4, -1000.0, 1000.0, 1e4], dtype=dtype))
            assert got.dtype == dtype and np.array_equal(got, np.array([-0.0, -0.0, 1000.0, 1e4], dtype=dtype))


def test_the_examples_get_the_grade_their_mistake_deserves(tmp_path):
    """make demo's class for this assignment: the correct one full marks, each single mistake costs its own
    problem only."""
    code, output = grade("autograde", "-a", ASSIGNMENT, PROJECT / "examples" / ASSIGNMENT, "--out", tmp_path,
                         "--quiet")
    assert code == 0, output
    faulty = {"ada_correct": None, "emmy_mean_subtracted": "rmsnorm", "hedy_tiled_kv": "gqa",
              "claude_sigmoid_silu": "swiglu",
              # the first assignment's students, in this one too (one class: make demo)
              "alan_ddof1": None, "edsger_post_ln": None, "kathy_erf_gelu": None,
              "barbara_import_error": "gqa", "linus_no_mask": "gqa"}
    for student, problem in faulty.items():
        doc = json.loads((tmp_path / f"{student}.json").read_text())
        lost = {p["name"] for p in doc["problems"] if p["score"] < p["max_score"]}
        assert lost == ({problem} if problem else set()), (student, lost)
    grace = json.loads((tmp_path / "grace_partial.json").read_text())   # the last three: stubs
    assert [p["score"] for p in grace["problems"]][2:] == [0, 0, 0]
