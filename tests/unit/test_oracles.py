"""A wiring test's stand-ins must not compute the function under test: in a hidden test the grader answers a
stand-in's call with the reference on whatever the student passes, so an attention (or an mlp) that calls the
block's stand-in with parameters that make everything around the attention the identity (LN_1(0) * 0 + u = u,
W_1 = W_2 = 0) gets the reference's attention without a line of its own (red team 18: 13 of attention's 25
points, every hidden attention test, with an attention that computes nothing)."""
from __future__ import annotations

import numpy as np
import pytest
from mutants import faulty

from grader.errors import StudentError

# The student's attention and mlp, computing nothing: they ask the block's stand-in for the answer.
ORACLE_ATTENTION = '''
def attention(u, W_q, W_k, W_v, W_o, n_heads=1, causal=True):
    import block as B
    d = u.shape[-1]
    params = {"W_q": W_q, "W_k": W_k, "W_v": W_v, "W_o": W_o, "W_1": np.zeros((d, 1)), "W_2": np.zeros((1, d)),
              "gamma_1": np.zeros_like(u), "beta_1": u.copy()}
    return B.block(np.zeros_like(u), params, n_heads)


def _reference_attention('''
ORACLE_MLP = '''
def mlp(u, W_1, W_2):
    return block(np.zeros_like(u), {"W_1": W_1, "W_2": W_2, "gamma_2": np.zeros_like(u), "beta_2": u.copy()},
                 use_attention=False)


def _reference_mlp('''


def _wired(course, folder, limits, function, *args, reference=None):
    from grader.feedback.standins import Wiring
    from grader.grading.plugin import load_reference
    from grader.sandbox.client import Worker
    from grader.sandbox.proxy import Student

    wiring = Wiring.for_course(course, reference or load_reference(course))
    with Worker(folder, limits, modules=course.modules, functions=course.functions) as worker:
        student = Student(worker, course.functions, limits, wiring=wiring)
        student.start_test(f"tests/the-block/hidden/test_x.py::test_{function}", public=False)
        return student.wired(function, *args)


@pytest.mark.parametrize("function", ["attention", "mlp"])
def test_a_hidden_wiring_test_never_answers_a_stand_in_that_computes_the_function_under_test(course, tmp_path,
                                                                                             limits, function):
    from grader.grading.plugin import load_reference

    reference = load_reference(course)
    rng = np.random.default_rng(18)
    if function == "attention":
        folder = faulty(tmp_path, "oracle", {"attention": [("\ndef attention(", ORACLE_ATTENTION)]})
        u = rng.normal(size=(5, 8))
        args = (u, *(rng.normal(size=(8, 8)) for _ in range(4)), 2)
    else:
        folder = faulty(tmp_path, "oracle", {"block": [("\ndef mlp(", "import numpy as np\n" + ORACLE_MLP)]})
        args = (rng.normal(size=(5, 8)), rng.normal(size=(8, 32)), rng.normal(size=(32, 8)))
    expected = getattr(reference, function)(*args)
    try:
        got = _wired(course, folder, limits, function, *args)
    except StudentError:
        return                                           # refused: the function computed nothing, and fails
    assert not (type(got) is np.ndarray and got.shape == expected.shape and np.allclose(got, expected)), \
        f"the student's {function}, which computes nothing, got the reference's value from the block's stand-in"


# A stand-in's name is the worker's word: a keyword of the stand-in itself (``_function``) sets it, so a softmax's
# stand-in can be asked for any name at all: the function under test, or a method of the grader's namespace of
# reference functions, shared by every submission of the batch.
ASK_FOR_ATTENTION = """
def attention(u, W_q, W_k, W_v, W_o, n_heads=1, causal=True):
    return softmax(u, W_q, W_k, W_v, W_o, n_heads, causal, _function="attention")


def _reference_attention("""
POISON = """
def attention(u, W_q, W_k, W_v, W_o, n_heads=1, causal=True):
    try:
        softmax(_function="__init__", attention=0, layernorm=0)
    except Exception:
        pass
    return _reference_attention(u, W_q, W_k, W_v, W_o, n_heads, causal)


def _reference_attention("""


def _attention_inputs():
    rng = np.random.default_rng(18)
    return (rng.normal(size=(5, 8)), *(rng.normal(size=(8, 8)) for _ in range(4)), 2)


def test_a_stand_in_is_never_answered_for_the_function_under_test(course, tmp_path, limits):
    from grader.grading.plugin import load_reference

    folder = faulty(tmp_path, "asks", {"attention": [("\ndef attention(", ASK_FOR_ATTENTION)]})
    args = _attention_inputs()
    expected = load_reference(course).attention(*args)
    try:
        got = _wired(course, folder, limits, "attention", *args)
    except StudentError:
        return
    assert not (type(got) is np.ndarray and got.shape == expected.shape and np.allclose(got, expected)), \
        "the student's attention got the reference's attention by naming it to its softmax's stand-in"


def test_a_stand_in_cannot_rewrite_the_grader_s_reference_functions(course, tmp_path, limits):
    from grader.grading.plugin import load_reference

    reference = load_reference(course)
    folder = faulty(tmp_path, "poison", {"attention": [("\ndef attention(", POISON)]})
    args = _attention_inputs()
    try:
        _wired(course, folder, limits, "attention", *args, reference=reference)
    except StudentError:
        pass
    # the next submission's hidden tests call these (a test that raises is a grader error: not exported)
    assert callable(reference.attention) and callable(reference.layernorm), vars(reference)


# The arguments "as the student's function left them" are the worker's list, which the student's code can reach
# (the worker's frame) and empty: a suite reading args_after[0] then raised IndexError, an error of the test
# itself, so the whole submission was a grader error ("the grader failed, not your code"), never exported, on
# every rerun: a weak submission hidden as the grader's failure.
EMPTIES_ITS_ARGUMENTS = """
import sys


def gelu(x):
    frame = sys._getframe(1)
    if frame.f_code.co_name == "_call":
        frame.f_locals["args"].clear()
        frame.f_locals["kwargs"]["x"] = 1
    return _reference_gelu(x)


def _reference_gelu("""


def test_the_arguments_after_a_call_are_those_it_was_given(course, tmp_path, limits):
    from grader.sandbox.client import Worker
    from grader.sandbox.proxy import Student

    folder = faulty(tmp_path, "empties", {"gelu": [("\ndef gelu(", EMPTIES_ITS_ARGUMENTS)]})
    x = np.linspace(-2.0, 2.0, 12).reshape(3, 4)
    with Worker(folder, limits, modules=course.modules, functions=course.functions) as worker:
        student = Student(worker, course.functions, limits)
        student.start_test("tests/the-block/hidden/test_gelu.py::test_gelu_leaves_its_input_unchanged", public=False)
        try:
            _, args_after, kwargs_after = student.call_with_inputs("gelu", x)
        except StudentError as err:                      # the student's error: its test fails, nothing more
            assert err.kind == "bad_type", err.kind
            return
    assert len(args_after) == 1 and kwargs_after == {}, (args_after, kwargs_after)


def test_a_hidden_stand_in_is_never_computed_on_inputs_far_larger_than_the_tests(course):
    """The grader runs the reference, in its own process, on what a hidden test's stand-in is passed: a call far
    larger than the test's own (a 20,000-token softmax, an attention of n_heads = 10**9 with d_head 0: scores of
    10**9 x n x n) would take the grader's memory and time, a student's fault turned into the grader's, and the
    other graders' machine. Such a call is refused, and the reference never runs on it."""
    from types import SimpleNamespace

    from grader.feedback.standins import Wiring
    from grader.grading.plugin import load_reference
    from grader.sandbox.replies import NotSpecified

    reference = load_reference(course)
    ran = []
    spy = SimpleNamespace(**vars(reference))
    spy.softmax = lambda *a, **k: ran.append("softmax") or reference.softmax(*a, **k)
    spy.attention = lambda *a, **k: ran.append("attention") or reference.attention(*a, **k)
    wiring = Wiring(course.functions, spy, None)
    rng = np.random.default_rng(18)
    u, weights = rng.normal(size=(6, 8)), [rng.normal(size=(8, 8)) for _ in range(4)]
    _, answer, _ = wiring.stand_ins("tests/the-block/hidden/test_x.py::test_a", False, "attention", [u, *weights, 2], {})
    ran.clear()                                          # (the reference's own run, recorded once)
    answer("softmax", [rng.normal(size=(2, 8, 8))], {})             # the heads stacked, a wrong size: answered
    assert ran == ["softmax"]
    for args in ([rng.normal(size=(6, 200))], [rng.normal(size=(12, 12, 12, 12))]):     # an axis, the volume
        with pytest.raises(NotSpecified):
            answer("softmax", args, {})
    assert ran == ["softmax"]
    x = rng.normal(size=(6, 8))
    params = dict(zip(["W_q", "W_k", "W_v", "W_o"], weights), W_1=rng.normal(size=(8, 32)), W_2=rng.normal(size=(32, 8)))
    _, answer, _ = wiring.stand_ins("tests/the-block/hidden/test_x.py::test_b", False, "block", [x, params, 2], {})
    ran.clear()
    answer("attention", [x, *weights, 4], {})
    with pytest.raises(NotSpecified):
        answer("attention", [np.zeros((6, 0)), *[np.zeros((0, 0))] * 4, 10**9], {})
    assert ran == ["attention"]


def test_a_hidden_stand_in_s_integer_bound_counts_a_0_d_integer_array():
    """A 0-d integer array is an integer to the reference (``reshape``, ``repeat`` and ``//`` take it as one), but
    ``callsize.extent`` counted only Python ints: ``n_heads = np.array(20_000_000)`` with d_head 0 passed the bounds of a
    5-token swiglu test, and the grader computed a gqa_attention of scores 2*10**7 x n x n in its own process,
    17 s and 2 GB a call, up to 256 stand-in calls a call (red team 18b). Refused, and the reference never runs."""
    from types import SimpleNamespace

    from grader.course.manifest import load
    from grader.feedback.standins import Wiring
    from grader.grading.plugin import load_reference
    from grader.sandbox.replies import NotSpecified
    from conftest import PROJECT

    modern = load(PROJECT / "course.json", "the-modern-block")
    reference = load_reference(modern)
    ran = []
    spy = SimpleNamespace(**vars(reference))
    spy.gqa_attention = lambda *a, **k: ran.append("gqa_attention") or reference.gqa_attention(*a, **k)
    wiring = Wiring(modern.functions, spy, None)
    rng = np.random.default_rng(18)
    x, w_1, w_3, w_2 = rng.normal(size=(5, 8)), rng.normal(size=(8, 21)), rng.normal(size=(8, 21)), \
        rng.normal(size=(21, 8))
    _, answer, _ = wiring.stand_ins("tests/the-modern-block/hidden/test_x.py::test_a", False, "swiglu",
                                    [x, w_1, w_3, w_2], {})
    empty = [np.ones((2, 8)), np.ones((8, 0)), np.ones((8, 0)), np.ones((8, 0)), np.ones((0, 8))]
    answer("gqa_attention", [rng.normal(size=(5, 8)), *(rng.normal(size=(8, 8)) for _ in range(4)), 2, 2], {})
    assert ran == ["gqa_attention"]                      # an honest call of this size: answered
    for heads in (np.array(10**9), np.array(10**9, dtype=np.uint64)):
        with pytest.raises(NotSpecified):
            answer("gqa_attention", [*empty, heads, np.array(1)], {})
    assert ran == ["gqa_attention"]


def test_a_hidden_stand_in_answers_heads_stacked_with_a_batch_axis(course):
    """An honest attention written PyTorch's way, u[None] and the heads stacked: scores (1, n_heads, n, n), a
    softmax call of four dimensions where the test's arrays have two. The bounds refused every such call ("a
    dimension more than one over its arrays'"), and the student lost each hidden wiring test of attention: 12 of
    25 points for a right attention (red team 18b; the public tests, which fall back on the student's own
    output, passed). The call costs what the reference's own softmax calls of this test do, together."""
    from grader.feedback.standins import Wiring
    from grader.grading.plugin import load_reference

    wiring = Wiring(course.functions, load_reference(course), None)
    rng = np.random.default_rng(18)
    for n, d, heads in ((6, 8, 2), (12, 40, 8)):
        u, weights = rng.normal(size=(n, d)), [rng.normal(size=(d, d)) for _ in range(4)]
        _, answer, _ = wiring.stand_ins(f"tests/the-block/hidden/test_x.py::test_{n}", False, "attention",
                                        [u, *weights, heads], {})
        scores = rng.normal(size=(1, heads, n, n))
        got = answer("softmax", [scores], {"axis": -1})
        e = np.exp(scores - scores.max(axis=-1, keepdims=True))
        assert np.allclose(got, e / e.sum(axis=-1, keepdims=True))


ROW_BY_ROW_SWIGLU = '''

def swiglu(u, W_1, W_3, W_2):
    gate = np.stack([silu(row) for row in u @ W_1])          # token by token: right, not the reference's calls
    return (gate * (u @ W_3)) @ W_2
'''


def test_a_public_wiring_test_never_fails_a_right_function_for_its_calls_only(tmp_path):
    """A right swiglu that calls silu token by token (or on the two products stacked, or transposed) makes calls
    neither the reference nor a catalogued mistake makes: a public test's stand-in refuses them, and the
    modern block's public swiglu tests, which (unlike the-block's attention_of) do not fall back on the student's
    own output, failed it ("look at what your code passes to silu()"): 5.5 of the public 9.5 points, 16 of
    swiglu's 20 in autograde, for a right swiglu (red team 18b)."""
    import json
    import shutil

    from conftest import PROJECT, grade

    folder = tmp_path / "rows"
    shutil.copytree(PROJECT / "solutions" / "the-modern-block", folder)
    (folder / "mistakes.py").unlink()
    with (folder / "swiglu.py").open("a") as f:
        f.write(ROW_BY_ROW_SWIGLU)
    status, out = grade("check", "-a", "the-modern-block", "--path", folder, "--json", tmp_path / "me.json", "swiglu")
    problems = {p["name"]: p for p in json.loads((tmp_path / "me.json").read_text())["problems"]}
    assert problems["swiglu"]["score"] == problems["swiglu"]["max_score"], out


ROW_BY_ROW_MLP = '''

def mlp(u, W_1, W_2):
    return np.stack([gelu(row) for row in u @ W_1]) @ W_2      # token by token: right, not the reference's calls
'''


def test_a_public_wiring_test_never_fails_a_right_mlp_for_its_gelu_calls_only(tmp_path):
    """The same in the-block: a right mlp calling gelu a token at a time lost 1.5 of block's public points
    ("look at what your code passes to gelu()") before its tests judged it on its own output."""
    import json
    import shutil

    from conftest import PROJECT, grade

    folder = tmp_path / "rows"
    shutil.copytree(PROJECT / "solutions" / "the-block", folder)
    (folder / "mistakes.py").unlink()
    with (folder / "block.py").open("a") as f:
        f.write("\nimport numpy as np\n" + ROW_BY_ROW_MLP)
    status, out = grade("check", "-a", "the-block", "--path", folder, "--json", tmp_path / "me.json", "block")
    problems = {p["name"]: p for p in json.loads((tmp_path / "me.json").read_text())["problems"]}
    assert problems["block"]["score"] == problems["block"]["max_score"], out


def test_a_public_calls_bounds_are_its_own_not_the_tests_first_calls(course):
    """A public test may call its function twice on inputs of different sizes; a refused stand-in call answered
    from the reference (autograde, `live`) is bounded by the call it is in, not by the test's first call."""
    from grader.feedback.standins import Wiring
    from grader.grading.plugin import load_reference

    wiring = Wiring(course.functions, load_reference(course), None)
    rng = np.random.default_rng(18)
    test = "tests/the-block/public/test_x.py::test_two_sizes"
    for n in (2, 30):                                    # the second call over twice the first one's longest axis (8)
        u = rng.normal(size=(n, 8))
        _, answer, _ = wiring.stand_ins(test, True, "attention", [u, *[np.eye(8)] * 4, 2], {}, live=True)
        answer("softmax", [rng.normal(size=(n, n))], {})
