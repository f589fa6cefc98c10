"""Odd return values are never a grader fault (issue 27: "A suite's hint raising on a student's
value": count_params returning np.array([...]) made the public params hint raise IndexError, and the
whole submission, 85 correct points, was flagged "the grader failed, not your code" on every rerun).

For every course function of both assignments and each of the KINDS of odd value below (complex,
bool, uint64, float16, big-endian and long double arrays; 0-d, empty and many-dimensional arrays;
lists of floats, nested, ragged and mixed lists; inf, NaN, -0.0, 1.7e308, 2**70; strings; nesting at
the wire's depth cap and containers at its item cap; arrays where a dict or an int is expected;
dicts where an array is expected, dicts with other, extra or missing keys or with arrays for values;
tuples; None; a bool or a float where an int is expected; an int where an array is expected; the
right shape in a wrong dtype; a transposed shape; one-element arrays for a scalar; values the wire
refuses; odd values on some calls or inputs only; the arguments left in odd shapes), a submission
that is the reference but for that one function returning that kind of value is graded by `grade
autograde` (one run per assignment). None may be a grader error, no test may say "error in the test
itself", the odd function's problem must lose points and no other problem may.

Then `grade check`, as a student checks in a fresh release (the public suites, the stored mistakes
data, each problem with the student's own components): check() itself on one submission per kind in
which every function is odd, each with a kind of its own (a latin square: every function meets every
kind), and the command on the issue's example.

An odd function computes the reference's value from a private copy of the reference modules (so that
what it returns does not depend on which other functions are odd), then returns its kind of value.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from conftest import PROJECT, course_copy, grade, make_course, write_tree

from grader.course.manifest import load
from grader.errors import StudentError
from grader.feedback.compare import Diagnosis, Mismatch, assert_close, assert_equal, either
from grader.grading.verdicts import verdict

ASSIGNMENTS = ("the-block", "the-modern-block")
COURSE = {a: load(PROJECT / "course.json", a) for a in ASSIGNMENTS}
FUNCTIONS = [(a, f) for a in ASSIGNMENTS for f in COURSE[a].functions]
SUITE_ERROR = "error in the test itself"

# kind -> what an odd function returns where the reference returns an ndarray, a dict of counts or
# an int (one expression for all three, or one each), in terms of the reference's value ``r``
# (``_v``: a dict's values; ``args``: the arguments; ``_np``: numpy; the helpers are HELPERS')
KINDS: dict[str, str | tuple[str, str, str]] = {
    "complex": ("r + 1j", "_np.array(_v) + 1j", "_np.array([r]) + 1j"),
    "complex_exact": (
        "r.astype(complex)",
        "_np.array(_v, dtype=complex)",
        "_np.array(r, dtype=complex)",
    ),
    "complex_big_endian": (
        "(r + 2j).astype('>c16')",
        "_np.array(_v, dtype='>c16')",
        "_np.array([r], dtype='>c8')",
    ),
    "bool_array": ("r > 0", "_np.array(_v) > 0", "_np.array([True])"),
    "uint64": (
        "_np.abs(r * 1000).astype(_np.uint64)",
        "_np.array(_v, dtype=_np.uint64)",
        "_np.array([r], dtype=_np.uint64)",
    ),
    "float16": (
        "(r + 0.25).astype(_np.float16)",
        "_np.array(_v, dtype=_np.float16)",
        "_np.array(r, dtype=_np.float16)",
    ),
    "big_endian": (
        "(r * 1.5 + 0.5).astype('>f8')",
        "_np.array(_v, dtype='>f8')",
        "_np.array([r], dtype='>i8')",
    ),
    "longdouble": (
        "r.astype(_np.longdouble) * 2",
        "_np.array(_v, dtype=_np.longdouble)",
        "_np.array([r], dtype=_np.longdouble)",
    ),
    "zero_d": ("_np.array(1.5)", "_np.array(_v[0])", "_np.array(r)"),
    "empty": ("_np.zeros((0,) + r.shape[1:])", "_np.zeros(0)", "_np.zeros((0, 0))"),
    "many_dims": (
        "r.reshape((1,) * 6 + r.shape)",
        "_np.array(_v).reshape(1, 1, 1, 1, -1)",
        "_np.array(r).reshape((1,) * 8)",
    ),
    "list_of_floats": ("[float(x) for x in r.ravel()]", "[float(x) for x in _v]", "[float(r)]"),
    "nested_list": (
        "r.tolist() if r.ndim > 1 else [r.tolist()]",
        "[[k, x] for k, x in r.items()]",
        "[[r]]",
    ),
    "ragged_list": "[[1.0], [1.0, 2.0], []]",
    "mixed_list": "[1, 'a', None, [2.5], {'k': 1}, True]",
    "inf": ("_np.full(r.shape, _np.inf)", "{k: float('inf') for k in r}", "float('inf')"),
    "nan": ("_np.full(r.shape, _np.nan)", "{k: float('nan') for k in r}", "float('nan')"),
    "non_finite_mix": ("_mix(r)", "{k: _MIX[i % 4] for i, k in enumerate(r)}", "-float('inf')"),
    "huge_floats": ("_np.where(r >= 0, 1.7e308, -1.7e308)", "{k: -1.7e308 for k in r}", "1.7e308"),
    "negative_zero": ("_np.full(r.shape, -0.0)", "{k: -0.0 for k in r}", "-0.0"),
    "big_int": (
        "[2 ** 70, -(2 ** 70)]",
        "{k: (-1) ** i * 2 ** 70 + x for i, (k, x) in enumerate(r.items())}",
        "2 ** 70",
    ),
    "string": ("'an answer'", "{k: str(x) for k, x in r.items()}", "str(r)"),
    "deep_nesting": ("_deep(15)", "_deep_dict(list(r), 15)", "_deep(15)"),  # the wire's cap: 16
    "huge_list": "[0.5] * 9990",  # the wire's cap: 10,000
    "huge_dict": (
        "{f'k{i}': i for i in range(9990)}",
        "{**r, **{f'k{i}': i for i in range(9980)}}",
        "{f'k{i}': i for i in range(9990)}",
    ),
    "array_for_dict_or_int": ("_np.ones(7)", "_np.array(_v)", "_np.array([r, r])"),
    "dict_for_array": ("{'output': r}", "{'counts': r}", "{'d_ff': r}"),
    "dict_wrong_keys": ("{'': 1.0}", "{k.upper(): x for k, x in r.items()}", "{'D_FF': r}"),
    "dict_extra_keys": ("{'a': r, 'b': r}", "{**r, 'bias': 1}", "{'width': r, 'extra': 1}"),
    "dict_missing_keys": ("{}", "dict(list(r.items())[1:])", "{}"),
    "dict_of_arrays": (
        "{'first': r[:1], 'rest': r[1:]}",
        "{k: _np.array([x]) for k, x in r.items()}",
        "{'width': _np.array([r])}",
    ),
    "dict_of_0d_arrays": (
        "{'r': _np.array(1.0)}",
        "{k: _np.array(x) for k, x in r.items()}",
        "_np.array(r, dtype=_np.int64)",
    ),
    "dict_of_odd_values": (
        "{'values': r.tolist(), 'shape': list(r.shape)}",
        "{k: (None if i % 2 else [x]) for i, (k, x) in enumerate(r.items())}",
        "{'width': None}",
    ),
    "tuple": ("tuple(r.ravel().tolist())", "tuple(_v)", "(r,)"),
    "none": "None",
    "bool_scalar": ("True", "{k: True for k in r}", "True"),
    "float_for_int": ("1.5", "{k: float(x) for k, x in r.items()}", "float(r) + 0.5"),
    "int_for_array": ("3", "3", "-1"),
    "one_element_array": ("r.ravel()[:1]", "_np.array(_v[-1:])", "_np.array([r])"),
    "wrong_dtype_right_shape": (
        "_np.round(r * 10).astype(_np.int64)",
        "{k: _np.int8(x % 100) for k, x in r.items()}",
        "_np.int8(r % 100)",
    ),
    "transposed": ("r.T if r.ndim > 1 else r[:, None]", "{str(x): k for k, x in r.items()}", "[r]"),
    # values the wire refuses: the student's error, never the grader's
    "refused_by_the_wire": ("{1, 2}", "{1: 2}", "1j"),
    "int_of_5000_digits": ("10 ** 5000", "{k: 10 ** 5000 for k in r}", "10 ** 5000"),
    # the right value on some calls only, as from code that breaks on some inputs: a property test's
    # second output is odd after a good first (silu(x), then silu(-x))
    "odd_on_every_other_call": "_some(r, _CALLS[0] % 2)",
    "odd_where_the_input_starts_positive": "_some(r, _first(args) > 0)",
    "odd_where_the_input_starts_negative": "_some(r, _first(args) < 0)",
    # the right value, the arguments left in odd shapes: what the tests read back of the inputs
    "mutated_inputs": "_mutate(args, r)",
}
# kinds that may give every test of a problem the reference's value: the problem loses points only
# where a test sees what they change (the arguments after the call; an input of that sign, which a
# count function or a public suite may never be given)
RIGHT_VALUES = {
    "mutated_inputs",
    "odd_where_the_input_starts_negative",
    "odd_where_the_input_starts_positive",
}
# (kind, problem) whose public tests accept the value: 7.0 counts as 7 (hidden tests check types)
PUBLIC_ACCEPTS = {("float_for_int", "model_params")}

HELPERS = '''

# --- an odd return value (tests/unit/grading/test_odd_returns.py): the reference's value,
# then an odd kind
import numpy as _np

_REFERENCE = {}
exec(compile(REFERENCE_SOURCE, "<the reference>", "exec"), _REFERENCE)
_MIX = [_np.nan, _np.inf, -_np.inf, 1e308]
_CALLS = [0]


def _deep(n):
    return [_deep(n - 1)] if n else 1.0


def _deep_dict(keys, n):
    return {k: _deep_dict(keys[:1], n - 1) for k in keys} if n else 1.0


def _mix(r):
    out = r.astype(_np.float64).copy()
    for i, x in enumerate(_MIX):
        out.flat[i::4] = x
    return out


def _some(r, odd):
    """r, or where odd a value that careless code cannot use as an array or a number"""
    values = ["a string", {"k": 1.0}, [1.0, [2.0]], _np.zeros((0, 3))]
    return values[_CALLS[0] // 2 % len(values)] if odd else r


def _first(args):
    """the first number of the first argument"""
    a = _np.asarray(args[0]).ravel() if args else _np.zeros(0)
    return float(a[0]) if a.size else 0.0


def _mutate(args, r):
    for a in args:
        if isinstance(a, _np.ndarray) and a.flags.c_contiguous and a.flags.writeable:
            a.shape = (a.size,)
        elif isinstance(a, dict):
            a.clear()
            a.update({"W_q": "odd", "extra": [1.0, [2.0]], "gain_1": None, "gamma_1": {"k": 1}})
    return r
'''

WRAPPER = """

def {name}(*args, **kwargs):
    r = _REFERENCE[{name!r}](*args, **kwargs)
    _CALLS[0] += 1
    _v = list(r.values()) if isinstance(r, dict) else None
    if isinstance(r, _np.ndarray):
        return {array}
    if isinstance(r, dict):
        return {counts}
    return {number}
"""


def reference_namespace_source(assignment: str) -> str:
    """The assignment's reference modules as one source, without their imports of each other (no two
    define one name): the private copy of the reference that odd functions compute from."""
    modules = "|".join(COURSE[assignment].modules)
    sibling = re.compile(rf"^(?:from (?:{modules}) import .*|import (?:{modules}))$", re.M)
    return "\n\n".join(
        sibling.sub("", (PROJECT / "solutions" / assignment / f"{m}.py").read_text())
        for m in COURSE[assignment].modules
    )


def write(folder: Path, assignment: str, kinds: dict[str, str]) -> Path:
    """The reference's modules in ``folder``, each function of ``kinds`` (function -> kind)
    redefined to return its kind of value."""
    course = COURSE[assignment]
    folder.mkdir(parents=True)
    helpers = HELPERS.replace("REFERENCE_SOURCE", repr(reference_namespace_source(assignment)))
    for module in course.modules:
        text = (PROJECT / "solutions" / assignment / f"{module}.py").read_text()
        odd = [f for f in kinds if course.functions[f] == module]
        if odd:
            text += helpers
        for function in odd:
            kind = KINDS[kinds[function]]
            array, counts, number = (kind,) * 3 if isinstance(kind, str) else kind
            text += WRAPPER.format(name=function, array=array, counts=counts, number=number)
        (folder / f"{module}.py").write_text(text)
    return folder


def latin_square(assignment: str) -> list[dict[str, str]]:
    """One submission per kind, each function odd with a kind of its own: function j of submission
    i returns kind i + j, so that every function meets every kind once, in as many submissions as
    kinds."""
    kinds, functions = list(KINDS), list(COURSE[assignment].functions)
    return [
        {f: kinds[(i + j) % len(kinds)] for j, f in enumerate(functions)} for i in range(len(kinds))
    ]


def problem_of(assignment: str, function: str) -> str:
    course = COURSE[assignment]
    return next(p.name for p in course.problems if p.module == course.functions[function])


def points(doc: dict) -> dict[str, float]:
    return {p["name"]: p["score"] for p in doc["problems"]}


def faults(doc: dict) -> list[str]:
    """What says that the grader failed on this submission, rather than graded it."""
    graded = doc.get("status") == "graded"
    found = [] if graded else [f"status {doc.get('status')}: {doc.get('error', '')}"]
    return found + [
        f"{t['name']}: {t['output'][:300]}"
        for t in doc.get("tests", ())
        if SUITE_ERROR in t["output"]
    ]


def autograde(root: Path, assignment: str) -> dict:
    """`grade autograde` of the reference and of every (function, kind) of ``assignment``, in one
    run: its exit status and output, and each score file by (function, kind)."""
    subs = root / assignment
    write(subs / "reference", assignment, {})
    for function in COURSE[assignment].functions:
        for kind in KINDS:
            write(subs / f"{function}--{kind}", assignment, {function: kind})
    out = root / f"{assignment}-out"
    code, output = grade(
        "autograde",
        "--course",
        course_copy(),
        "-a",
        assignment,
        subs,
        "--out",
        out,
        "--jobs",
        2,
        "--quiet",
    )
    docs = {
        tuple(p.stem.split("--")) if "--" in p.stem else p.stem: json.loads(p.read_text())
        for p in out.glob("*.json")
    }
    return {"code": code, "output": output, "docs": docs}


CHECK = """
import json, sys
from pathlib import Path
from grader.commands.check import check
from grader.course import manifest

course = manifest.load(Path(sys.argv[1]))
for folder in sys.argv[2:]:
    Path(folder + ".json").write_text(json.dumps(check(course, Path(folder)).doc))
"""


def release_check(root: Path, assignment: str) -> dict:
    """A fresh release of ``assignment``; `grade check`'s check() in it on each submission of its
    latin_square(), in one process (the command's own start, a second, for each would be most of
    this test's time); and, for the-block, the command itself on the issue's example."""
    release = root / assignment / "release"
    code, output = grade(
        "release",
        "--course",
        PROJECT / "course.json",
        "-a",
        assignment,
        "--out",
        release,
        "--nbgrader-dir",
        root / assignment / "nbgrader",
    )
    assert code == 0, output
    folders = [
        write(root / assignment / f"square-{i}", assignment, kinds)
        for i, kinds in enumerate(latin_square(assignment))
    ]
    proc = subprocess.run(
        [sys.executable, "-c", CHECK, release / "course.json", *folders],
        capture_output=True,
        text=True,
        cwd=PROJECT,
        timeout=600,
    )
    docs = [f.with_suffix(".json") for f in folders]
    found = {
        "code": proc.returncode,
        "output": proc.stderr,
        "docs": [json.loads(d.read_text()) if d.is_file() else {} for d in docs],
    }
    if assignment == "the-block":
        folder = write(root / "cli", assignment, {"count_params": "array_for_dict_or_int"})
        code, output = grade(
            "check",
            "--course",
            release / "course.json",
            "--path",
            folder,
            "--json",
            root / "cli.json",
        )
        doc = json.loads((root / "cli.json").read_text())
        found["cli"] = {"code": code, "output": output, "doc": doc}
    return found


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[tuple[str, str], dict]:
    """("autograde" or "check", assignment) -> what autograde() or release_check() found: all four
    at once (CPU-bound, they share the cores: two grader processes an autograde, one a check)."""
    root = tmp_path_factory.mktemp("odd")
    jobs = {
        (stage, a): (autograde if stage == "autograde" else release_check, root / stage, a)
        for stage in ("autograde", "check")
        for a in ASSIGNMENTS
    }
    with ThreadPoolExecutor(len(jobs)) as pool:
        futures = {key: pool.submit(run, folder, a) for key, (run, folder, a) in jobs.items()}
        return {key: future.result() for key, future in futures.items()}


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_autograde_of_odd_returns_exits_0_without_a_traceback(runs, assignment):
    run = runs[("autograde", assignment)]
    assert run["code"] == 0 and "Traceback" not in run["output"], run["output"][-3000:]


@pytest.mark.parametrize("assignment,function", FUNCTIONS)
def test_an_odd_return_costs_its_own_problem_only_and_is_never_a_grader_fault(
    runs, assignment, function
):
    docs = runs[("autograde", assignment)]["docs"]
    problem = problem_of(assignment, function)
    assert docs["reference"]["score"] == docs["reference"]["max_score"], faults(docs["reference"])
    theirs = points(docs["reference"])
    wrong = {}
    for kind in KINDS:
        doc = docs[(function, kind)]
        found = faults(doc)
        if found:
            wrong[kind] = found
            continue
        got = points(doc)
        if got[problem] >= theirs[problem] and kind not in RIGHT_VALUES:
            wrong[kind] = f"{problem} lost no points"
        others = sorted(p for p in theirs if p != problem and got[p] != theirs[p])
        if others:
            wrong[kind] = f"{others} lost points: " + "; ".join(
                f"{t['name']}: {t['output'][:200]}"
                for t in doc["tests"]
                if t["problem"] in others and t["status"] != "passed"
            )
    assert not wrong, "\n".join(f"{kind}: {why}" for kind, why in wrong.items())


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_grade_check_of_odd_returns_in_a_release_is_never_a_grader_fault(runs, assignment):
    """Every function of every submission is odd: no grader fault, and each problem loses points
    (but where none of its functions' kinds need make it)."""
    run = runs[("check", assignment)]
    assert run["code"] == 0 and "Traceback" not in run["output"], run["output"][-3000:]
    wrong = {}
    for i, (kinds, doc) in enumerate(zip(latin_square(assignment), run["docs"])):
        must_lose = {
            problem_of(assignment, f)
            for f, k in kinds.items()
            if k not in RIGHT_VALUES and (k, problem_of(assignment, f)) not in PUBLIC_ACCEPTS
        }
        kept = [
            p["name"]
            for p in doc.get("problems", ())
            if p["score"] == p["max_score"] and p["name"] in must_lose
        ]
        if faults(doc) or kept:
            wrong[f"square-{i} {kinds}"] = faults(doc) or f"{kept} lost no points"
    assert not wrong, "\n".join(f"{name}: {why}" for name, why in wrong.items())


def test_grade_check_of_count_params_returning_an_array(runs):
    """The issue's example, through the command: count_params returning np.array([...]) loses the
    params problem's points and nothing else; the check exits 1 (a test failed)."""
    cli = runs[("check", "the-block")]["cli"]
    assert cli["code"] == 1 and "Traceback" not in cli["output"], cli["output"]
    assert not faults(cli["doc"])
    assert {p["name"] for p in cli["doc"]["problems"] if p["score"] < p["max_score"]} == {"params"}


def test_the_fuzz_covers_every_function_of_both_assignments_with_20_kinds_or_more():
    assert len(KINDS) >= 20
    assert {f for _, f in FUNCTIONS} == {
        "layernorm",
        "gelu",
        "softmax",
        "attention",
        "mlp",
        "block",
        "count_params",
        "rmsnorm",
        "silu",
        "swiglu_width",
        "swiglu",
        "gqa_attention",
        "modern_block",
        "count_model",
    }
    for assignment in ASSIGNMENTS:  # the checks' submissions meet every pair
        pairs = {(f, k) for kinds in latin_square(assignment) for f, k in kinds.items()}
        assert pairs == {(f, k) for f in COURSE[assignment].functions for k in KINDS}


# ---------------------------------------------------------------------------------- the seam itself


def reads_counts(got, expected, same):
    """A hint that reads a dict of counts: on an array it raises IndexError; on a dict, a fact."""
    return Diagnosis("hint.off", f"attention off by {got['attention'] - expected[0]['attention']}")


def test_a_hint_that_raises_on_the_students_value_gives_no_diagnosis_and_the_check_stands():
    with pytest.raises(Mismatch) as err:
        assert_equal(np.array([3, 4]), {"attention": 3}, what="counts", diagnose=reads_counts)
    assert err.value.diagnosis is None and err.value.evidence is None
    assert verdict(err.value, True, "")[:2] == ("failed", "mismatch")
    with pytest.raises(Mismatch) as err:  # on a value it can read, it still says it
        assert_equal(
            {"attention": 2}, {"attention": 3}, what="counts", diagnose=either(reads_counts)
        )
    assert err.value.diagnosis == Diagnosis("hint.off", "attention off by -1")


def test_a_hint_broken_on_the_suites_own_value_is_still_the_suites_error():
    def broken(got, expected, same):
        return Diagnosis("hint.broken", str(expected[0]["no such key"]))

    with pytest.raises(KeyError):
        assert_equal({"attention": 2}, {"attention": 3}, what="counts", diagnose=broken)
    with pytest.raises(KeyError):
        assert_close(
            np.ones(3), np.zeros(3), what="x", diagnose=lambda got, expected, same: {}["k"]
        )


def test_the_students_code_failing_inside_a_hint_stays_the_students_error():
    def calls_the_student(got, expected, same):
        raise StudentError("timeout", "timed out after 5 s of CPU time in attention")

    with pytest.raises(StudentError):
        assert_close(np.ones(3), np.zeros(3), what="x", diagnose=calls_the_student)


def test_a_detail_that_cannot_be_made_never_changes_the_verdict():
    err = Mismatch("gelu of [1, 2]", "values differ", lambda: f"{1 / 0}")
    status, kind, text = verdict(err, True, "")
    assert (status, kind) == ("failed", "mismatch")
    assert "could not be described here: ZeroDivisionError" in text


def test_plain_checks_of_odd_values_say_what_is_wrong_in_bounded_words():
    with pytest.raises(Mismatch) as err:  # lists holding arrays: numpy cannot say ==
        assert_equal([np.ones(2), 1], [1, 1], what="a list")
    assert err.value.wrong == "not the expected value"
    with pytest.raises(Mismatch) as err:
        assert_equal(list(range(9990)), 7, what="a count")
    assert len(err.value.detail) < 300


# A suite with a hint that cannot read one student's value, which costs that student the diagnosis
# alone, and a hint broken whatever the student returns (a typo): its error is the grader's, exit 3.
HINTS_SUITE = '''
import numpy as np
import pytest
from grader.feedback.compare import Diagnosis, assert_close, assert_equal


def sums(got, expected, same):
    return Diagnosis("hint.sum", f"yours sums to {got.sum():g}")   # an array's method: no string's


def broken(got, expected, same):
    return Diagnosis("hint.broken", f"yours is {got - expected[0]} off, not {wanted}")   # NameError


@pytest.mark.points(1)
def test_double(student):
    """double of [0, 1, 2]"""
    assert_close(student.double(np.arange(3.0)), np.arange(3.0) * 2, what="double", diagnose=sums)


@pytest.mark.points(1)
def test_twice(student):
    """twice of 21"""
    assert_equal(student.twice(21), 42, what="twice(21)", diagnose=broken)
'''


def test_a_suites_own_error_in_a_hint_is_still_a_grader_fault(tmp_path):
    course = make_course(tmp_path / "course", public=HINTS_SUITE, points=5)
    subs = tmp_path / "subs"
    write_tree(
        subs / "odd_double",
        {"mathy.py": "def double(x):\n    return 'three'\n\ndef twice(n):\n    return 2 * n\n"},
    )
    write_tree(
        subs / "wrong_twice",
        {"mathy.py": "def double(x):\n    return 2 * x\n\ndef twice(n):\n    return 2 * n + 1\n"},
    )
    code, output = grade(
        "autograde", "--course", course, subs, "--out", tmp_path / "out", "--quiet"
    )
    assert code == 3, output
    docs = {p.stem: json.loads(p.read_text()) for p in (tmp_path / "out").glob("*.json")}
    assert docs["odd_double"]["status"] == "graded" and not faults(docs["odd_double"])
    assert docs["odd_double"]["problems"][0]["score"] == 2  # test_twice and the hidden twice
    assert docs["wrong_twice"]["status"] == "grader_error"
    twice = next(t for t in docs["wrong_twice"]["tests"] if t["name"] == "test_twice")
    assert "error in the test itself: NameError" in twice["output"]
