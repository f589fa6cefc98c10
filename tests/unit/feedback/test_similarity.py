"""`grade report --similarity`: pairs of submissions whose code is alike, ranked, with the released
stubs as boilerplate (two students who handed in the stubs are not alike), in the instructor's
report only."""

from __future__ import annotations

import re
import shutil

import pytest
from conftest import PROJECT, THE_BLOCK, course_copy, grade

from grader.course.manifest import load

RENAMES = {
    "mean": "mu",
    "var": "sigma_sq",
    "gamma": "scale",
    "beta": "shift",
    "heads": "parts",
    "scores": "logits",
}


@pytest.fixture(scope="module")
def submissions(tmp_path_factory):
    """The reference; a copy of it with names changed and comments added; two students who handed in
    the stubs; and one whose layernorm is written quite differently (the rest is the stubs)."""
    root = tmp_path_factory.mktemp("similar") / "subs"
    reference = PROJECT / "solutions" / THE_BLOCK
    modules = load(PROJECT / "course.json", THE_BLOCK).modules
    (root / "orig").mkdir(parents=True)
    (root / "copycat").mkdir()
    for module in modules:
        text = (reference / f"{module}.py").read_text()
        shutil.copy(reference / f"{module}.py", root / "orig")
        for old, new in RENAMES.items():
            text = re.sub(rf"\b{old}\b", new, text)
        (root / "copycat" / f"{module}.py").write_text(
            "# my own work\n" + text.replace("\n\n", "\n\n# step\n")
        )
    for name in ("stub_a", "stub_b", "own"):
        shutil.copytree(PROJECT / "exercises" / THE_BLOCK, root / name)
    (root / "own" / "layernorm.py").write_text(
        "import numpy as np\n\n\ndef layernorm(x, gamma=None, beta=None, eps=1e-5):\n"
        "    d = x.shape[-1]\n    centred = x - np.sum(x, axis=-1, keepdims=True) / d\n"
        "    spread = np.sqrt(np.sum(centred * centred, axis=-1, keepdims=True) / d + eps)\n"
        "    out = centred / spread\n    if gamma is not None:\n        out = out * gamma\n"
        "    if beta is not None:\n        out = out + beta\n    return out\n"
    )
    return root


def test_a_renamed_copy_ranks_first_and_the_stubs_make_nobody_alike(submissions):
    from grader.feedback.similarity import pairs

    found = pairs(load(PROJECT / "course.json", THE_BLOCK), submissions, shown=0.2)
    assert found, "no pair found"
    assert (found[0].a, found[0].b) == ("copycat", "orig") and found[0].similarity > 0.8
    named = {frozenset((p.a, p.b)) for p in found}
    assert frozenset(("stub_a", "stub_b")) not in named  # the stubs are boilerplate
    assert not any("own" in pair for pair in named)


def test_the_report_shows_the_pairs_only_when_asked(submissions, tmp_path):
    code, output = grade(
        "autograde",
        "--course",
        course_copy(),
        "-a",
        THE_BLOCK,
        submissions,
        "--out",
        tmp_path / "scores",
        "--jobs",
        2,
        "-q",
    )
    assert code == 0, output
    code, plain = grade(
        "report",
        "--course",
        course_copy(),
        "-a",
        THE_BLOCK,
        tmp_path / "scores",
        "--html",
        tmp_path / "plain.html",
    )
    assert code == 0, plain
    assert (
        "similar code" not in plain.lower()
        and "copycat ~" not in (tmp_path / "plain.html").read_text()
    )
    code, output = grade(
        "report",
        "--course",
        course_copy(),
        "-a",
        THE_BLOCK,
        tmp_path / "scores",
        "--similarity",
        submissions,
        "--html",
        tmp_path / "class.html",
    )
    assert code == 0, output
    assert re.search(r"copycat ~ orig: \d+\.\d %", output), output
    assert "copycat ~ orig" in (tmp_path / "class.html").read_text()


def test_a_copy_moved_into_a_helper_module_is_still_compared(submissions, tmp_path):
    """The grader runs every file beside the modules: a student whose modules only import a helper
    holding someone's code verbatim gets full marks, so that helper is their code and is
    compared."""
    from grader.feedback.similarity import pairs

    course = load(PROJECT / "course.json", THE_BLOCK)
    root = tmp_path / "subs"
    shutil.copytree(submissions / "orig", root / "orig")
    hider = root / "hider"
    hider.mkdir()
    own = {f"from {m} import {f}" for f, m in course.functions.items()}
    helper = [
        line
        for m in course.modules
        for line in (submissions / "orig" / f"{m}.py").read_text().splitlines()
        if line.strip() not in own
    ]
    (hider / "mycode.py").write_text("\n".join(helper) + "\n")
    for module in course.modules:
        (hider / f"{module}.py").write_text("from mycode import *  # noqa: F403\n")
    found = pairs(course, root, shown=0.2)
    assert [(p.a, p.b) for p in found] == [("hider", "orig")] and found[0].similarity > 0.8, found
