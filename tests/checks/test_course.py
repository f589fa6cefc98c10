"""The course checks every assignment of course.json gets: its reference scores full marks and its
stubs zero (grade validate); every mistake of its catalogue, written into a copy of the reference
as a student would write it, is named, named alone, and costs points in its own problem only; so
does every other single fault; the reference and the correct examples are never diagnosed; the
bundled examples get the grades their mistakes deserve; the tests the course text asks for by name
exist and pass; a student's copy (grade release) checks the stubs, passes the reference, names
mistakes from its stored outputs and traces the course example; so does `grade trace` in the
checkout.

An assignment supplies data, no code: tests/<assignment>/checks/expected.py defines (each optional;
a name left out is empty, and then the checks that need it check nothing, except MUTANTS: every
mistake of the catalogue needs one):

- MUTANTS: mistake id -> (module, [(old, new), ...]), the mistake written into the reference's
  module the way a student writes it (each ``old`` must be in the reference), independently of the
  catalogue.
- FAULTS: more single faults, name -> an object with ``problem`` (its name in course.json) and
  ``edits`` (module -> [(old, new), ...], or None: the module left out); the-block's mutants.py has
  them.
- PAIRS: [(mistake, mistake), ...]: both written into one submission, both are named, nothing else.
- MUST_NAME: the mistake ids the catalogue must keep (those its issues asked for).
- EXAMPLES: a bundled example (examples/<assignment>/<student>) -> per problem, in course.json's
  order, "full", "zero" or "not_full".
- NAMED_TESTS: problem -> the names of the tests the course text asks for.
- NAMED_IN_RELEASE: mistake ids that `grade check` in a student's copy must name.
- TRACE: `grade trace --case` value (None: the example itself) -> strings its trace shows.

A third assignment gets every check here by its entry in course.json and that file: no code. Each
assignment's class (mutants, faults, pairs, the reference, the examples) is autograded once, and its
release made once (module-scoped fixtures). Run: .venv/bin/python -m pytest tests/checks -q
"""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import pytest
from conftest import PROJECT, course_copy, grade, students_copy
from mutants import write_faults

from grader.course.modules import import_course_module
from grader.feedback.mistakes import family

COURSE = json.loads((PROJECT / "course.json").read_text())
ASSIGNMENTS = {a["assignment"]: a for a in COURSE["assignments"]}
DEFAULTS = {
    "MUTANTS": {},
    "FAULTS": {},
    "PAIRS": [],
    "MUST_NAME": set(),
    "EXAMPLES": {},
    "NAMED_TESTS": {},
    "NAMED_IN_RELEASE": [],
    "TRACE": {},
}


class Assignment:
    """One assignment of course.json: its problems, its catalogue and what expected.py supplies."""

    def __init__(self, name: str):
        entry = ASSIGNMENTS[name]
        self.name, self.solutions = name, PROJECT / entry["solutions"]
        self.problems = [p["name"] for p in entry["problems"]]
        self.modules = [p["module"] for p in entry["problems"]]
        self.problem_of = {p["module"]: p["name"] for p in entry["problems"]}
        mistakes = entry.get("feedback", {}).get("mistakes")
        self.catalogue = (
            import_course_module(PROJECT / mistakes, [self.solutions]).MISTAKES if mistakes else []
        )
        data = PROJECT / "tests" / name / "checks" / "expected.py"
        module = None
        if data.is_file():
            spec = importlib.util.spec_from_file_location(
                f"expected_{name.replace('-', '_')}", data
            )
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
        for key, default in DEFAULTS.items():
            setattr(self, key.lower(), getattr(module, key, default))

    def singles(self) -> dict[str, tuple[str, dict]]:
        """Every single fault: name -> (its problem, its edits)."""
        found = {
            m: (self.problem_of[module], {module: changes})
            for m, (module, changes) in self.mutants.items()
        }
        found.update({name: (f.problem, f.edits) for name, f in self.faults.items()})
        return found

    def write(self, folder: Path, edits: dict) -> Path:
        """A copy of the reference's modules in ``folder`` with ``edits`` made."""
        return write_faults(folder, edits, self.solutions, self.modules)

    def mutant(self, folder: Path, *mistakes: str) -> Path:
        """A copy of the reference with ``mistakes`` written in."""
        edits: dict[str, list] = {}
        for mistake in mistakes:
            module, changes = self.mutants[mistake]
            edits.setdefault(module, []).extend(changes)
        return self.write(folder, edits)


A = {name: Assignment(name) for name in ASSIGNMENTS}


def cases(what) -> list:
    """pytest params: (assignment, item) for each item ``what(assignment)`` lists."""
    label = {str: str, tuple: "+".join, type(None): lambda _: "example"}
    return [
        pytest.param(a.name, item, id=f"{a.name}:{label[type(item)](item)}")
        for a in A.values()
        for item in what(a)
    ]


EACH = pytest.mark.parametrize("assignment", list(A))


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """assignment -> its class's score files by student, autograded once: every single fault and
    pair, the reference ("reference") and the bundled examples."""
    done: dict[str, dict[str, dict]] = {}

    def get(name: str) -> dict[str, dict]:
        if name not in done:
            a, tmp = A[name], tmp_path_factory.mktemp(name)
            for fault, (_, edits) in a.singles().items():
                a.write(tmp / "subs" / fault, edits)
            for pair in a.pairs:
                a.mutant(tmp / "subs" / "+".join(pair), *pair)
            a.write(tmp / "subs" / "reference", {})
            for student in a.examples:
                assert not (tmp / "subs" / student).exists(), f"{student} is also a fault's name"
                shutil.copytree(PROJECT / "examples" / name / student, tmp / "subs" / student)
            code, output = grade(
                "autograde",
                "--course",
                course_copy(),
                "-a",
                name,
                tmp / "subs",
                "--out",
                tmp / "out",
                "--jobs",
                2,
            )
            assert code == 0, output
            done[name] = {p.stem: json.loads(p.read_text()) for p in (tmp / "out").glob("*.json")}
        return done[name]

    return get


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    """assignment -> a student's copy of it, made by `grade release` once."""
    done: dict[str, Path] = {}

    def get(name: str) -> Path:
        if name not in done:
            done[name] = students_copy(tmp_path_factory.mktemp("release") / name, name)
        return done[name]

    return get


@EACH
def test_validate_reference_full_and_stubs_zero(assignment):
    code, output = grade("validate", "-a", assignment)
    assert code == 0, output
    assert "course is valid" in output


@EACH
def test_every_mistake_of_the_catalogue_has_a_mutant_and_the_issues_lists_are_covered(assignment):
    a = A[assignment]
    assert {family(m.id) for m in a.catalogue} == set(a.mutants)
    assert a.must_name <= set(a.mutants)


@EACH
def test_messages_are_one_line_naming_the_mistake_then_the_fix(assignment):
    for m in A[assignment].catalogue:
        assert (
            "\n" not in m.message and m.message.startswith("this matches ") and ": " in m.message
        ), m.id
        assert len(m.message) < 220, m.id


def failed(doc: dict) -> list[dict]:
    return [t for t in doc["tests"] if t["status"] != "passed"]


def diagnosed(tests: list[dict]) -> set:
    """The mistakes named (hints aside)."""
    return {
        t.get("diagnosis") for t in tests if not t.get("diagnosis", "hint.").startswith("hint.")
    }


@pytest.mark.parametrize("assignment, mistake", cases(lambda a: sorted(a.mutants)))
def test_each_mistake_is_named_and_no_other(graded, assignment, mistake):
    wrong = failed(graded(assignment)[mistake])
    assert wrong, f"{mistake}: no test fails"
    assert diagnosed(wrong) == {mistake}
    messages = {
        f"diagnosis: {m.message}" for m in A[assignment].catalogue if family(m.id) == mistake
    }
    assert all(
        t["output"].splitlines()[1] in messages for t in wrong if t.get("diagnosis") == mistake
    )


@pytest.mark.parametrize("assignment, pair", cases(lambda a: a.pairs))
def test_two_mistakes_are_both_named(graded, assignment, pair):
    wrong = failed(graded(assignment)["+".join(pair)])
    assert {family(m) for m in diagnosed(wrong)} == set(pair)


@pytest.mark.parametrize("assignment, fault", cases(lambda a: sorted(a.singles())))
def test_a_single_fault_costs_points_in_its_own_problem_only(graded, assignment, fault):
    """A correct block keeps its points beside a wrong component, and the suites catch the fault."""
    docs, problem = graded(assignment), A[assignment].singles()[fault][0]
    reference = {p["name"]: p["score"] for p in docs["reference"]["problems"]}
    lost = {p["name"]: reference[p["name"]] - p["score"] for p in docs[fault]["problems"]}
    assert lost[problem] > 0, f"{fault}: no test of {problem} fails"
    assert not any(v for name, v in lost.items() if name != problem), [
        (t["problem"], t["name"], t["output"][:200])
        for t in failed(docs[fault])
        if t["problem"] != problem
    ]


@EACH
def test_the_reference_and_the_correct_examples_are_never_diagnosed(graded, assignment):
    correct = ["reference"] + [
        s for s, want in A[assignment].examples.items() if set(want) == {"full"}
    ]
    for name in correct:
        doc = graded(assignment)[name]
        assert (
            doc["score"]
            == doc["max_score"]
            == sum(p["points"] for p in ASSIGNMENTS[assignment]["problems"])
        ), name
        assert not any("diagnosis" in t for t in doc["tests"]), name


@pytest.mark.parametrize("assignment, student", cases(lambda a: sorted(a.examples)))
def test_the_examples_get_the_grade_their_mistake_deserves(graded, assignment, student):
    got = {p["name"]: p for p in graded(assignment)[student]["problems"]}
    for name, want in zip(A[assignment].problems, A[assignment].examples[student], strict=True):
        p = got[name]
        ok = {
            "full": p["score"] == p["max_score"],
            "zero": p["score"] == 0,
            "not_full": p["score"] < p["max_score"],
        }[want]
        assert ok, f"{student} {name}: expected {want}, got {p['score']}/{p['max_score']}"


@EACH
def test_the_named_course_tests_exist_and_pass_for_the_reference(graded, assignment):
    tests = {
        (t["problem"], t["name"]): t["status"] for t in graded(assignment)["reference"]["tests"]
    }
    for problem, names in A[assignment].named_tests.items():
        for name in names:
            assert tests.get((problem, name)) == "passed", (problem, name)


@EACH
def test_a_students_copy_checks_the_stubs_and_passes_the_reference(release, assignment):
    code, output = grade("check", cwd=release(assignment))
    assert code == 1, output
    code, output = grade("check", "--path", A[assignment].solutions, cwd=release(assignment))
    assert code == 0, output


@pytest.mark.parametrize("assignment, mistake", cases(lambda a: a.named_in_release))
def test_a_students_copy_names_the_mistake_from_the_stored_outputs(
    release, tmp_path, assignment, mistake
):
    folder = A[assignment].mutant(tmp_path / "me", mistake)
    code, output = grade("check", "--path", folder, cwd=release(assignment))
    assert code == 1, output
    message = next(m.message for m in A[assignment].catalogue if m.id == mistake)
    assert f"\n    diagnosis: {message}\n" in output


def traced(assignment: str, case, cwd: Path, *course: str):
    """`grade trace` of the reference in ``cwd``: every step matches; it shows what TRACE says."""
    options = ["--case", case] if case else []
    code, output = grade("trace", "--path", A[assignment].solutions, *options, *course, cwd=cwd)
    assert code == 0 and "Every step matches the reference." in output, output
    for shown in A[assignment].trace[case]:
        assert shown in output, (shown, output)


@pytest.mark.parametrize("assignment, case", cases(lambda a: a.trace))
def test_the_trace_of_the_course_example_matches_for_the_reference(assignment, case):
    traced(assignment, case, PROJECT, "-a", assignment)


# A student's copy traces from stored values, all stored alike: the example and random weights.
IN_RELEASE = (None, "random")


@pytest.mark.parametrize(
    "assignment, case", cases(lambda a: [c for c in IN_RELEASE if c in a.trace])
)
def test_a_students_copy_traces_the_course_example_from_its_stored_values(
    release, assignment, case
):
    traced(assignment, case, release(assignment))
