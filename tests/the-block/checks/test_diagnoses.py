"""The course's catalogue of known mistakes (solutions/mistakes.py) on the real suites: every mistake, written
into a copy of the reference as a student would write it, is named, and named alone; a correct submission is
never diagnosed; a student's copy of the course (no solutions) names them from the
tests/public/mistakes.json that `grade release` computed into it."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import PROJECT, THE_BLOCK, course_copy, grade, students_copy
from mutants import MUTANTS, write_faults, write_mutant

from grader.feedback.mistakes import family
from grader.course.modules import import_course_module

CATALOGUE = import_course_module(PROJECT / "solutions" / "the-block" / "mistakes.py", [PROJECT / "solutions" / "the-block"]).MISTAKES

# Two mistakes in one submission, in two modules or in two places of one: both are named, nothing else.
PAIRS = [("mlp.no_gelu", "gelu.relu"), ("block.post_ln", "layernorm.ddof1"), ("attention.no_mask", "gelu.relu"),
         ("attention.scale_d_model", "block.no_residual_mlp"), ("layernorm.no_affine", "params.no_bias")]


def write_pair(folder: Path, pair: tuple[str, str]) -> Path:
    edits: dict[str, list] = {}
    for mistake in pair:
        module, changes = MUTANTS[mistake]
        edits.setdefault(module, []).extend(changes)
    return write_faults(folder, edits, PROJECT / "solutions" / "the-block")


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> dict[str, dict]:
    """Every mutant, the reference and a correct example, autograded."""
    tmp = tmp_path_factory.mktemp("mutants")
    for mistake in MUTANTS:
        write_mutant(PROJECT / "solutions" / "the-block", tmp / "subs" / mistake, mistake)
    for pair in PAIRS:
        write_pair(tmp / "subs" / "+".join(pair), pair)
    shutil.copytree(PROJECT / "solutions" / "the-block", tmp / "subs" / "reference", ignore=shutil.ignore_patterns("mistakes.py"))
    shutil.copytree(PROJECT / "examples" / "the-block" / "ada_correct", tmp / "subs" / "ada_correct")
    code, output = grade("autograde", "--course", course_copy(), "-a", THE_BLOCK, tmp / "subs",
                         "--out", tmp / "out", "--jobs", 2)
    assert code == 0, output
    return {p.stem: json.loads(p.read_text()) for p in (tmp / "out").glob("*.json")}


def test_every_mistake_of_the_catalogue_has_a_mutant_and_the_issues_list_is_covered():
    ids = {family(m.id) for m in CATALOGUE}
    assert ids == set(MUTANTS)
    issue_list = {"layernorm.ddof1", "layernorm.eps_outside", "layernorm.no_eps", "layernorm.axis",
                  "layernorm.no_affine", "gelu.erf", "gelu.sigmoid", "gelu.constant", "softmax.no_max", "softmax.axis",
                  "attention.mask_diagonal", "attention.mask_leak", "attention.no_mask", "attention.mask_zero",
                  "attention.scale_d_model", "attention.head_split", "block.post_ln", "block.no_residual_attention",
                  "block.no_residual_mlp", "block.residual_from_normalised", "block.ignores_use_attention",
                  "params.no_bias", "params.no_beta", "params.n_kv_heads"}
    issue_14 = {"layernorm.rms", "attention.transposed", "attention.no_w_o", "attention.heads_reversed",
                "attention.head_interleaved", "softmax.no_keepdims", "attention.scale_d_head", "gelu.no_half",
                "gelu.square", "layernorm.no_beta", "layernorm.eps_after", "block.second_norm_params",
                "params.meta_rounding", "layernorm.eps", "params.no_w_o"}
    assert issue_list | issue_14 <= ids


@pytest.mark.parametrize("mistake", sorted(MUTANTS))
def test_each_mistake_is_named_and_no_other(graded, mistake):
    failed = [t for t in graded[mistake]["tests"] if t["status"] != "passed"]
    assert failed, f"{mistake}: no test fails"
    assert {t.get("diagnosis") for t in failed if not t.get("diagnosis", "hint.").startswith("hint.")} == {mistake}
    messages = {f"diagnosis: {m.message}" for m in CATALOGUE if family(m.id) == mistake}
    named = [t for t in failed if t.get("diagnosis") == mistake]
    assert all(t["output"].splitlines()[1] in messages for t in named)


@pytest.mark.parametrize("pair", PAIRS, ids="+".join)
def test_two_mistakes_are_both_named(graded, pair):
    failed = [t for t in graded["+".join(pair)]["tests"] if t["status"] != "passed"]
    assert {family(t["diagnosis"]) for t in failed if not t.get("diagnosis", "hint.").startswith("hint.")} == set(pair)


def test_correct_submissions_are_never_diagnosed(graded):
    for name in ("reference", "ada_correct"):
        assert graded[name]["score"] == graded[name]["max_score"]
        assert not any("diagnosis" in t for t in graded[name]["tests"])


def test_messages_are_one_line_naming_the_mistake_then_the_fix():
    for m in CATALOGUE:
        assert "\n" not in m.message and m.message.startswith("this matches ") and ": " in m.message, m.id
        assert len(m.message) < 220, m.id


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> Path:
    """A student's copy of the course as `grade release` writes it: course.json, exercises/ and
    tests/public/ (with the feedback data computed on this machine)."""
    return students_copy(tmp_path_factory.mktemp("release") / "release")


@pytest.mark.parametrize("mistake", ["layernorm.ddof1", "gelu.erf", "attention.no_mask", "block.post_ln",
                                     "params.no_bias"])
def test_a_students_copy_names_the_mistake_from_the_stored_outputs(release, tmp_path, mistake):
    folder = write_mutant(PROJECT / "solutions" / "the-block", tmp_path / "me", mistake)
    code, output = grade("check", "--path", folder, cwd=release)
    assert code == 1
    message = next(m.message for m in CATALOGUE if m.id == mistake)
    assert f"\n    diagnosis: {message}\n" in output
