"""The-block's own checks: a component's fault costs only that component's problem even when
the components collude, an import error is explained, `grade check` says what share of the points
it ran. The checks every assignment gets (validate, the examples' grades, the named tests, the
catalogue) are tests/checks/test_course.py's, with this assignment's data in expected.py."""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import PROJECT, THE_BLOCK, course_copy, grade


def test_the_course_loads(course):
    assert course.problem_names == ["layernorm", "gelu", "attention", "block", "params"]
    assert course.max_score == 100
    assert course.functions["softmax"] == "attention" and course.functions["mlp"] == "block"
    assert len(course.sha256) == 64


@pytest.fixture(scope="module")
def example_scores(tmp_path_factory):
    """The score files of the two examples the checks below read (tests/checks/test_course.py grades
    them all)."""
    subs = tmp_path_factory.mktemp("examples")
    for student in ("alan_ddof1", "barbara_import_error"):
        shutil.copytree(PROJECT / "examples" / THE_BLOCK / student, subs / "subs" / student)
    code, output = grade(
        "autograde",
        "--course",
        course_copy(),
        "-a",
        THE_BLOCK,
        subs / "subs",
        "--out",
        subs / "out",
        "--jobs",
        2,
    )
    assert code == 0, output
    return {p.stem: json.loads(p.read_text()) for p in (subs / "out").glob("*.json")}


def test_import_error_is_explained_and_hidden_outputs_stay_coarse(example_scores):
    doc = example_scores["barbara_import_error"]
    attention = [t for t in doc["tests"] if t["problem"] == "attention"]
    assert all(
        t["status"] == "error"
        and (
            "importing attention.py failed: NameError" in t["output"]
            if t["visibility"] == "visible"
            else t["output"] == "importing attention.py failed"
        )
        for t in attention
    )
    alan = example_scores["alan_ddof1"]
    hidden = [t for t in alan["tests"] if t["visibility"] != "visible" and t["status"] != "passed"]
    assert hidden and all(
        "yours" not in t["output"] and "expected" not in t["output"].split(":", 1)[0]
        for t in hidden
    )


def test_checking_one_problem_gives_it_the_points_a_full_check_gives():
    """`grade check block` still sees the student's own layernorm (the block tests accept own
    components)."""
    alan = PROJECT / "examples" / "the-block" / "alan_ddof1"  # ddof=1 layernorm, correct wiring
    code, output = grade("check", "-a", THE_BLOCK, "block", "--path", alan)
    assert code == 0, output
    assert "8/8" in output and "error in the test itself" not in output


def test_check_says_what_share_of_each_problems_points_its_public_tests_carry(
    example_scores, tmp_path
):
    """The share is the public tests' points as autograde counts them, of the problem's points."""
    alan = PROJECT / "examples" / "the-block" / "alan_ddof1"
    code, output = grade("check", "-a", THE_BLOCK, "--path", alan, "--json", tmp_path / "me.json")
    assert code == 1, output
    checked = json.loads((tmp_path / "me.json").read_text())
    graded = example_scores["alan_ddof1"]
    public_total = 0.0
    for problem in graded["problems"]:
        public = sum(
            t["max_score"]
            for t in graded["tests"]
            if t["problem"] == problem["name"] and t["visibility"] == "visible"
        )
        assert 0 < public < problem["max_score"]
        mine = next(p for p in checked["problems"] if p["name"] == problem["name"])
        assert mine["max_score"] == public
        row = next(line for line in output.splitlines() if f" {problem['name']} " in line)
        assert f"{public:g} of {problem['max_score']:g}" in row
        public_total += public
    assert (
        f"grade check ran the public tests only, which carry {public_total:g} of the 100 points; "
        "hidden tests "
        f"of the same rules, graded after the deadline, carry the other {100 - public_total:g}."
    ) in " ".join(output.split())
    code, output = grade("check", "-a", THE_BLOCK, "layernorm", "--path", alan)
    layernorm = sum(
        t["max_score"]
        for t in graded["tests"]
        if t["problem"] == "layernorm" and t["visibility"] == "visible"
    )
    assert (
        f"grade check ran layernorm's public tests only, which carry {layernorm:g} of its 20 "
        "points; hidden "
        f"tests of the same rules, graded after the deadline, carry the other {20 - layernorm:g}."
    ) in " ".join(output.split())


def problem_scores(folder, tmp_path) -> dict:
    """`grade autograde` on the one submission in ``folder``; its problems' scores (points) by
    name."""
    code, output = grade(
        "autograde",
        "--course",
        course_copy(),
        "-a",
        THE_BLOCK,
        folder.parent,
        "--out",
        tmp_path / "out",
        "--quiet",
    )
    assert code == 0, output
    doc = json.loads((tmp_path / "out" / f"{folder.name}.json").read_text())
    return {p["name"]: p["score"] for p in doc["problems"]}


def test_stateful_components_cannot_earn_the_block_wiring_points(tmp_path):
    """A block that returns x, with components that return zeros only right after block() or mlp()
    ran, would match "your own components" if that fallback ran in the same worker: it runs in a
    fresh one."""
    cheat = tmp_path / "subs" / "mallory"
    shutil.copytree(PROJECT / "solutions" / "the-block", cheat)
    (cheat / "trap.py").write_text("ARMED = [False]\n")
    for module, function in (("attention", "attention"), ("gelu", "gelu")):
        source = (cheat / f"{module}.py").read_text()
        source += (
            f"\n_real_{function} = {function}\n"
            f"def {function}(*args, **kwargs):\n"
            "    import numpy as np, trap\n"
            "    if trap.ARMED[0]:\n"
            "        trap.ARMED[0] = False\n"
            f"        return np.zeros_like(_real_{function}(*args, **kwargs))\n"
            f"    return _real_{function}(*args, **kwargs)\n"
        )
        (cheat / f"{module}.py").write_text(source)
    (cheat / "block.py").write_text(
        "import numpy as np\nimport trap\n"
        "def mlp(u, W_1, W_2):\n    trap.ARMED[0] = True\n    return np.zeros((u.shape[0], "
        "W_2.shape[1]))\n"
        "def block(x, params, n_heads=1, use_attention=True):\n    trap.ARMED[0] = True\n    "
        "return np.array(x, dtype=float)\n"
    )
    assert problem_scores(cheat, tmp_path)["block"] < 5


def test_components_colluding_inside_the_own_components_check_earn_no_block_points(tmp_path):
    """attention recognises "called on what layernorm just returned" (the wiring h = x + attention(
    layernorm(x))) and returns -x, so a wiring built from these components would ignore x, like this
    block (red team, 2026-11-29). The block tests' fallback runs no student code: the wiring around
    a component's known mistake comes from the catalogue."""
    cheat = tmp_path / "subs" / "chain"
    shutil.copytree(PROJECT / "solutions" / "the-block", cheat)
    (cheat / "chainstate.py").write_text("LAST = {}\n")
    with open(cheat / "layernorm.py", "a") as f:
        f.write(
            "\n_real_layernorm = layernorm\n"
            "def layernorm(x, gamma=None, beta=None, eps=1e-5):\n"
            "    import chainstate\n"
            "    out = _real_layernorm(x, gamma, beta, eps)\n"
            "    chainstate.LAST.update(x=np.array(x, copy=True), out=np.array(out, copy=True))\n"
            "    return out\n"
        )
    with open(cheat / "attention.py", "a") as f:
        f.write(
            "\n_real_attention = attention\n"
            "def attention(u, W_q, W_k, W_v, W_o, n_heads=1, causal=True):\n"
            "    import chainstate\n"
            "    last = chainstate.LAST\n"
            "    if 'out' in last and np.shape(u) == last['out'].shape and np.array_equal(u, "
            "last['out']):\n"
            "        x = last['x']\n"
            "        last.clear()\n"
            "        return -np.asarray(x, dtype=np.float64)\n"
            "    return _real_attention(u, W_q, W_k, W_v, W_o, n_heads, causal)\n"
        )
    (cheat / "block.py").write_text(
        "import numpy as np\nfrom gelu import gelu\nfrom layernorm import _real_layernorm\n"
        "def mlp(u, W_1, W_2):\n    return gelu(u @ W_1) @ W_2\n"
        "def block(x, params, n_heads=1, use_attention=True):\n"
        "    z = np.zeros(np.shape(x))\n"
        "    return z + mlp(_real_layernorm(z, params.get('gamma_2'), params.get('beta_2')), "
        "params['W_1'], params['W_2'])\n"
    )
    scores = problem_scores(cheat, tmp_path)
    assert scores["layernorm"] == 20 and scores["attention"] == 25 and scores["gelu"] == 15, scores
    assert scores["block"] < 10, scores  # only the mlp tests, which this block does not touch


def test_a_component_slip_costs_its_own_value_tests_only(tmp_path):
    """alan's layernorm has ddof=1 (a known mistake its tests name) and his block is wired right:
    the block keeps its points, and layernorm its property points. The same layernorm with a block
    that returns zeros gets no block points."""
    right = tmp_path / "subs" / "alan"
    shutil.copytree(PROJECT / "examples" / "the-block" / "alan_ddof1", right)
    zeros = tmp_path / "subs" / "zeros"
    shutil.copytree(right, zeros)
    (zeros / "block.py").write_text(
        "import numpy as np\n"
        "def mlp(u, W_1, W_2):\n    return np.zeros((u.shape[0], W_2.shape[1]))\n"
        "def block(x, params, n_heads=1, use_attention=True):\n    return np.zeros(np.shape(x))\n"
    )
    code, output = grade(
        "autograde",
        "--course",
        course_copy(),
        "-a",
        THE_BLOCK,
        right.parent,
        "--out",
        tmp_path / "out",
        "--quiet",
    )
    assert code == 0, output
    scores = {
        name: {
            p["name"]: p["score"]
            for p in json.loads((tmp_path / "out" / f"{name}.json").read_text())["problems"]
        }
        for name in ("alan", "zeros")
    }
    assert 0 < scores["alan"]["layernorm"] < 20 and scores["alan"]["block"] == 25, scores
    assert (
        scores["zeros"]["layernorm"] == scores["alan"]["layernorm"]
        and scores["zeros"]["block"] == 0
    ), scores


def test_a_component_failing_on_purpose_cannot_excuse_a_wiring_mistake(tmp_path):
    """A block that does not pass gamma and beta on computes exactly the wiring around a layernorm
    that ignores them (layernorm.no_affine). A layernorm that ignores them on one hidden test only,
    to get that mistake named, must not turn the wiring mistake into block points (red team,
    2026-11-29)."""
    subs = tmp_path / "subs"
    for name in ("honest", "attack"):
        shutil.copytree(PROJECT / "solutions" / "the-block", subs / name)
        block = (subs / name / "block.py").read_text()
        for i, v in (("1", "x"), ("2", "h")):
            block = block.replace(
                f'layernorm({v}, p.get("gamma_{i}"), p.get("beta_{i}"))', f"layernorm({v})"
            )
        (subs / name / "block.py").write_text(block)
    layernorm = (subs / "attack" / "layernorm.py").read_text()
    (subs / "attack" / "layernorm.py").write_text(
        layernorm
        + (
            "\n_real_layernorm = layernorm\n"
            "def layernorm(x, gamma=None, beta=None, eps=1e-5):\n"
            "    if np.shape(x) == (3, 5):        # only the hidden test of an input left "
            "unmodified\n"
            "        gamma = beta = None\n"
            "    return _real_layernorm(x, gamma, beta, eps)\n"
        )
    )
    code, output = grade(
        "autograde",
        "--course",
        course_copy(),
        "-a",
        THE_BLOCK,
        subs,
        "--out",
        tmp_path / "out",
        "--quiet",
    )
    assert code == 0, output
    block = {
        name: next(
            p["score"]
            for p in json.loads((tmp_path / "out" / f"{name}.json").read_text())["problems"]
            if p["name"] == "block"
        )
        for name in ("honest", "attack")
    }
    assert block["honest"] < 25 and block["attack"] == block["honest"], block


def test_grading_after_other_submissions_gives_what_grading_alone_gives(course, tmp_path):
    """From the second submission on, a grader process sends each test's calls ahead (the calls it
    made for the submission before): verdicts, messages, the output each test shows and the
    diagnoses must be those of the submission graded alone, in every order."""

    from grader.grading import executors
    from grader.grading.results import Job

    talker = (
        tmp_path / "talker"
    )  # a wrong layernorm that prints: each failed test shows its own print
    shutil.copytree(PROJECT / "examples" / "the-block" / "alan_ddof1", talker)
    with open(talker / "layernorm.py", "a") as f:
        f.write(
            "\n_quiet = layernorm\n"
            "def layernorm(x, *args, **kwargs):\n"
            "    print('TALK', np.shape(x), np.sum(x))\n"
            "    return _quiet(x, *args, **kwargs)\n"
        )
    folders = [talker] + sorted(
        p for p in (PROJECT / "examples" / "the-block").iterdir() if p.is_dir()
    )

    def verdicts(jobs):
        found = []
        executors.run(
            course,
            [Job(p.name, p) for p in jobs],
            lambda g: found.append(
                (
                    g.job.path.name,
                    [
                        (r.name, r.status, r.kind, r.output, r.feedback.get("diagnosis"))
                        for r in g.results
                    ],
                )
            ),
            hidden=True,
            level="process",
        )
        return found

    alone = {p.name: verdicts([p])[0][1] for p in folders}
    together = verdicts(folders + folders[::-1])
    assert [name for name, _ in together] == [p.name for p in folders + folders[::-1]]
    for name, results in together:
        assert results == alone[name], name
    shown = [t[3] for t in alone["talker"] if "TALK" in t[3]]
    assert len(shown) >= 3 and all(out.count("TALK") == 1 for out in shown)
    assert len(set(shown)) == len(shown)
