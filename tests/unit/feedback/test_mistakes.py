"""The catalogue of known mistakes, generically: a diagnosis is shown only for the unique match,
never for a correct submission, from the variants (instructors) or from the outputs `grade release`
stores (a student's copy)."""

from __future__ import annotations

import json
import sys
from functools import partial
from pathlib import Path

import numpy as np
import pytest
from conftest import GOOD, grade, write_tree

from grader.course.modules import import_course_module
from grader.feedback.compare import Diagnosis, same_array
from grader.feedback.matching import unique_match
from grader.feedback.mistakes import Catalogue, fit, mistake
from grader.feedback.outputs import call_key
from grader.feedback.recorder import Recorder

SUITE = '''
import numpy as np
import pytest
from grader.feedback.compare import assert_close

@pytest.mark.points(1)
def test_double_small(student, mistakes):
    """double of a small vector"""
    x = np.arange(1.0, 4.0)
    assert_close(student.double(x), 2 * x, what="double of [1, 2, 3]", diagnose=mistakes.double(x))
'''
HIDDEN = (
    SUITE.replace("test_double_small", "test_double_secret")
    .replace("np.arange(1.0, 4.0)", "np.array([1234.5, -7.25])")
    .replace("double of [1, 2, 3]", "double of a hidden vector")
)
CATALOGUE = """
from grader.feedback.mistakes import mistake

MISTAKES = [
    mistake("double.triple", "this matches 3 * x: multiply by 2", double=lambda x: 3 * x),
    mistake("double.square", "this matches x ** 2: multiply by 2", double=lambda x: x ** 2),
    mistake("double.four_a", "this matches 4 * x", double=lambda x: 4 * x),
    mistake(
        "double.four_b", "this also matches 4 * x", double=[lambda x: x + 3 * x, lambda x: 1 / 0]
    ),
]
"""


def student(body: str) -> dict[str, str]:
    return {
        "mathy.py": f"import numpy as np\n\ndef double(x):\n    return {body}\n\ndef twice(n):\n   "
        " return 2 * n\n"
    }


@pytest.fixture
def course_with_mistakes(mini_course: Path) -> Path:
    """The mini course with a catalogue of four mistakes (two of which give the same output)."""
    root = mini_course.parent
    (root / "tests" / "public" / "test_mathy.py").write_text(SUITE)
    (root / "tests" / "hidden" / "test_mathy.py").write_text(HIDDEN)
    (root / "solutions" / "mistakes.py").write_text(CATALOGUE)
    data = json.loads(mini_course.read_text())
    data["feedback"] = {"mistakes": "solutions/mistakes.py"}
    data["problems"][0]["points"] = 2
    mini_course.write_text(json.dumps(data))
    return mini_course


def autograde(course: Path, submissions: dict[str, dict], tmp_path: Path) -> dict[str, dict]:
    subs = tmp_path / "subs"
    for name, files in submissions.items():
        write_tree(subs / name, files)
    code, output = grade(
        "autograde", subs, "--out", tmp_path / "out", "--course", course, "--jobs", 1
    )
    assert code == 0, output
    return {
        name: {
            t["name"]: t
            for t in json.loads((tmp_path / "out" / f"{name}.json").read_text())["tests"]
        }
        for name in submissions
    }


def test_the_unique_match_is_named_in_public_and_hidden_tests_and_the_score_file(
    course_with_mistakes, tmp_path
):
    docs = autograde(
        course_with_mistakes,
        {
            "tripler": student("3 * x"),
            "good": GOOD,
            "quadrupler": student("4 * x"),
            "other": student("x - 1"),
        },
        tmp_path,
    )
    for name in ("test_double_small", "test_double_secret"):
        test = docs["tripler"][name]
        assert test["diagnosis"] == "double.triple"
        assert test["output"].splitlines()[1] == "diagnosis: this matches 3 * x: multiply by 2"
    assert (
        "1234.5" not in docs["tripler"]["test_double_secret"]["output"]
    )  # hidden: still no values
    assert "yours" in docs["tripler"]["test_double_small"]["output"]  # public: the numbers follow
    for name in ("good", "other"):  # correct; no match
        assert not any(
            "diagnosis" in t or "diagnosis:" in t["output"] for t in docs[name].values()
        ), name
    # two mistakes match: neither is named; what is certain is said as a hint
    assert {t.get("diagnosis") for t in docs["quadrupler"].values()} == {"hint.scaled"}
    assert (
        "diagnosis: your output is the expected one times 2, everywhere"
        in docs["quadrupler"]["test_double_small"]["output"]
    )


def release(course: Path, tmp_path: Path) -> tuple[int, str, Path]:
    """`grade release` of ``course`` into tmp_path/release: its exit status, what it printed, the
    folder."""
    out = tmp_path / "release"
    code, output = grade(
        "release", "--course", course, "--out", out, "--nbgrader-dir", tmp_path / "nb"
    )
    return code, output, out


def test_a_students_copy_without_solutions_diagnoses_from_the_outputs_its_release_stores(
    course_with_mistakes, tmp_path
):
    code, output, released = release(course_with_mistakes, tmp_path)
    assert code == 0, output
    assert "the known mistakes' outputs on 1 call" in output and "1 calls" not in output, output
    data_file = released / "tests" / "public" / "mistakes.json"
    assert (
        json.loads(data_file.read_text())["messages"]["double.triple"]
        == "this matches 3 * x: multiply by 2"
    )
    manifest = json.loads((released / "course.json").read_text())
    assert manifest["feedback"] == {"mistakes_data": "tests/public/mistakes.json"}  # no variants
    assert "solutions" not in manifest and not (released / "solutions").exists()
    me = write_tree(tmp_path / "me", student("3 * x"))
    code, output = grade("check", "--course", released / "course.json", "--path", me)
    assert code == 1
    assert "diagnosis: this matches 3 * x: multiply by 2" in output


def test_a_release_whose_reference_fails_a_public_test_stops_naming_the_test(
    course_with_mistakes, tmp_path
):
    """Its feedback data comes from grading the reference with the public suites, as real grading
    runs them: a reference that fails one is named, test by test, with what the test said, and
    nothing is released."""
    write_tree(course_with_mistakes.parent / "solutions", student("3 * x"))
    code, output, released = release(course_with_mistakes, tmp_path)
    assert code == 2, output
    lines = output.strip().splitlines()
    assert lines[0] == (
        "Error: the reference solutions fail public tests, so their feedback data "
        "cannot be computed:"
    )
    assert lines[1].startswith(
        "  tests/public/test_mathy.py::test_double_small: double of [1, 2, 3]"
    )
    assert "diagnosis: this matches 3 * x: multiply by 2" in lines[1] and len(lines) == 2
    assert not released.exists()


def test_a_catalogue_change_in_the_instructors_checkout_counts_at_once(
    course_with_mistakes, tmp_path
):
    """Where the solutions are, the variants run live: an edited message or a new mistake is what
    the next grading says, with no step between (no stored data to bring up to date)."""
    me = write_tree(tmp_path / "me", student("3 * x"))
    code, output = grade("check", "--course", course_with_mistakes, "--path", me)
    assert code == 1 and "diagnosis: this matches 3 * x: multiply by 2" in output
    catalogue = course_with_mistakes.parent / "solutions" / "mistakes.py"
    catalogue.write_text(CATALOGUE.replace("3 * x: multiply by 2", "3 * x: use 2"))
    code, output = grade("check", "--course", course_with_mistakes, "--path", me)
    assert code == 1 and "diagnosis: this matches 3 * x: use 2" in output
    me = write_tree(tmp_path / "me", student("x - 1"))
    code, output = grade("check", "--course", course_with_mistakes, "--path", me)
    assert "diagnosis" not in output
    catalogue.write_text(
        CATALOGUE + "MISTAKES.append(mistake('double.minus', 'this matches x - 1: "
        "multiply by 2', double=lambda x: x - 1))\n"
    )
    code, output = grade("check", "--course", course_with_mistakes, "--path", me)
    assert code == 1 and "diagnosis: this matches x - 1: multiply by 2" in output


def test_an_instructors_course_json_may_not_name_computed_data(course_with_mistakes):
    """Data kept beside the solutions would be used in place of the live catalogue and go stale
    unseen."""
    data = json.loads(course_with_mistakes.read_text())
    data["feedback"]["mistakes_data"] = "tests/public/mistakes.json"
    course_with_mistakes.write_text(json.dumps(data))
    code, output = grade("check", "--course", course_with_mistakes)
    assert code == 2 and output.strip().splitlines() == [
        f"Error: {course_with_mistakes}: field 'feedback.mistakes_data': computed data belongs in "
        "a student's release (grade release writes it there); with the solutions it is computed "
        "live: remove the field"
    ]


def test_unique_match_needs_exactly_one_mistake_that_the_expected_value_does_not_also_match():
    same = same_array
    messages = {"a": "A", "b": "B", "c": "C"}
    got, expected = np.array([3.0]), [np.array([2.0])]
    assert unique_match(
        {"a": [np.array([3.0])], "b": [np.array([9.0])]}, messages, got, expected, same
    ) == Diagnosis("a", "A")
    assert (
        unique_match(
            {"a": [np.array([3.0])], "b": [np.array([9.0]), np.array([3.0])]},
            messages,
            got,
            expected,
            same,
        )
        is None
    )  # two mistakes match
    assert unique_match({"a": [np.array([2.0])]}, messages, np.array([2.0]), expected, same) is None
    assert (
        unique_match({"a": [{"total": 1}]}, messages, got, expected, same) is None
    )  # a dict is no match


def test_call_key_tells_calls_apart_by_values_dtype_shape_and_keywords():
    x = np.arange(6.0).reshape(2, 3)
    key = call_key("layernorm", (x,), {})
    assert key == call_key("layernorm", (x.copy(),), {})
    assert (
        len(
            {
                key,
                call_key("layernorm", (x.astype(np.float32),), {}),
                call_key("layernorm", (x.reshape(3, 2),), {}),
                call_key("layernorm", (x,), {"eps": 0.1}),
                call_key("gelu", (x,), {}),
                call_key("layernorm", (x + 1e-12,), {}),
            }
        )
        == 6
    )
    assert call_key("f", (np.float64(0.5), {"b": 1, "a": [2]}), {}) == call_key(
        "f", (0.5, {"a": [2], "b": 1}), {}
    )


def test_catalogue_runs_the_variants_once_a_call_when_given_else_uses_the_stored_outputs(tmp_path):
    module = tmp_path / "cat" / "mistakes.py"
    write_tree(
        module.parent,
        {
            "mistakes.py": "from grader.feedback.mistakes import mistake\nRUNS = []\n"
            "MISTAKES = [mistake('f.plus', 'this matches x + 1', f=lambda x: (RUNS.append(1), x + "
            "1)[1])]\n"
        },
    )
    data = tmp_path / "data.json"
    stored = np.array([7.0])
    data.write_text(
        json.dumps(
            {
                "messages": {"f.seven": "this matches seven"},
                "calls": {call_key("f", (stored,), {}): {"f.seven": [{"array": [7.0]}]}},
            }
        )
    )
    one, seven, released = [np.array([1.0])], np.array([7.0]), Catalogue(data)
    assert released.f(stored)(seven, one, same_array) == Diagnosis("f.seven", "this matches seven")
    assert released.f(one[0])(np.array([2.0]), [np.array([5.0])], same_array) is None  # not stored
    catalogue = Catalogue(data, module)
    assert catalogue.f(stored)(seven, one, same_array) is None  # live: 7 + 1 is no 7
    x = np.array([1.0])
    for _ in range(3):
        assert catalogue.f(x)(np.array([2.0]), [np.array([5.0])], same_array) == Diagnosis(
            "f.plus", "this matches x + 1"
        )
    assert import_course_module(module).RUNS == [1, 1]  # once for each call


def test_recorder_notes_calls_and_diagnoses_nothing():
    recorder = Recorder()
    diagnose = recorder.layernorm(np.ones(3), eps=0.1)
    assert diagnose(np.ones(3), [np.zeros(3)], same_array) is None
    assert [(f, kw) for f, _, kw in recorder.calls.values()] == [("layernorm", {"eps": 0.1})]


def test_import_course_module_imports_a_suite_module_from_its_package_root(tmp_path):
    write_tree(
        tmp_path / "tests" / "pub",
        {"__init__.py": "", "data.py": "X = 3\n", "trace.py": "from pub.data import X\n"},
    )
    assert import_course_module(tmp_path / "tests" / "pub" / "trace.py").X == 3
    assert str(tmp_path / "tests") not in sys.path


def test_mistake_takes_one_variant_or_several():
    one = mistake("m.one", "msg", f=abs)
    several = mistake("m.two", "msg", f=[abs, round], g=abs)
    assert one.variants == {"f": [abs]} and several.variants == {"f": [abs, round], "g": [abs]}


def test_released_hidden_details_show_the_numbers_of_hidden_tests_too(
    course_with_mistakes, tmp_path
):
    data = json.loads(course_with_mistakes.read_text())
    data["release_hidden_details"] = True
    course_with_mistakes.write_text(json.dumps(data))
    docs = autograde(course_with_mistakes, {"tripler": student("3 * x")}, tmp_path)
    output = docs["tripler"]["test_double_secret"]["output"]
    assert output.splitlines()[1] == "diagnosis: this matches 3 * x: multiply by 2"
    assert "first difference at [0]: yours 3703.5, expected 2469" in output


def test_a_call_names_no_mistake_its_inputs_cannot_tell_from_another_within_the_tolerance():
    same = same_array
    messages = {"a": "A", "b": "B", "c": "C"}
    got, expected = np.array([3.0]), [np.array([2.0])]
    # b's output is within the tolerance (3e-5) of a's: these inputs cannot tell a from b, so even a
    # student's
    # output that matches a alone (3 - 2.5e-5 is 5e-5 from b) names neither
    outputs = {"a": [np.array([3.0])], "b": [np.array([3.0 + 2.5e-5])]}
    assert unique_match(outputs, messages, np.array([3.0 - 2.5e-5]), expected, same) is None
    # ... unless b's output is also the reference's here: then it is no mistake on these inputs, and
    # a is named
    assert unique_match(
        {"a": [np.array([3.0])], "b": [np.array([2.0]), np.array([9.0])]},
        messages,
        got,
        expected,
        same,
    ) == Diagnosis("a", "A")
    # the checked function's own mistakes (prefer) are not rivals of a component's mistake computing
    # the same
    outputs = {"block.own": [np.array([3.0])], "layernorm.inside": [np.array([3.0])]}
    assert unique_match(
        outputs, {"block.own": "O", "layernorm.inside": "L"}, got, expected, same, prefer="block."
    ) == Diagnosis("block.own", "O")
    outputs["block.other"] = [np.array([3.0])]
    assert (
        unique_match(
            outputs,
            {"block.own": "O", "layernorm.inside": "L", "block.other": "X"},
            got,
            expected,
            same,
            prefer="block.",
        )
        is None
    )


def test_a_fit_names_its_family_with_the_value_closest_to_the_students_output():
    members = fit(
        "f.eps",
        "this matches eps = {value}: use 1e-5",
        [1e-3, 1e-6, 1e-8],
        f=lambda eps: lambda x: x + eps,
    )
    assert [m.id for m in members] == ["f.eps@0.001", "f.eps@1e-06", "f.eps@1e-08"]
    outputs = {m.id: [m.variants["f"][0](np.array([1.0]))] for m in members}
    messages = {m.id: m.message for m in members}
    same = partial(same_array, rtol=2e-6, atol=0.0)
    # 1 + 1e-6 and 1 + 1e-8 are within the tolerance of each other: members of one family are no
    # rivals
    assert unique_match(
        outputs, messages, np.array([1.0 + 1e-6]), [np.array([1.0 + 1e-5])], same
    ) == Diagnosis("f.eps", "this matches eps = 1e-06: use 1e-5")
    outputs["f.zero"] = [np.array([1.0])]  # another mistake within the tolerance
    messages["f.zero"] = "Z"
    assert (
        unique_match(outputs, messages, np.array([1.0 + 1e-6]), [np.array([1.0 + 1e-5])], same)
        is None
    )
    assert unique_match(
        outputs, messages, np.array([1.001]), [np.array([1.0 + 1e-5])], same
    ) == Diagnosis("f.eps", "this matches eps = 0.001: use 1e-5")
