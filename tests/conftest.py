"""Fixtures for the grader's own tests: tiny courses and submissions written into tmp_path."""

from __future__ import annotations

import atexit
import functools
import json
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

from grader.course.limits import Limits
from grader.course.manifest import load
from grader.sandbox.client import Worker
from grader.sandbox.policy import BWRAP, available_levels
from grader.sandbox.zygote import Zygote

PROJECT = Path(__file__).resolve().parents[1]
EXAMPLES = PROJECT / "examples" / "the-block"
THE_BLOCK = (
    "the-block"  # the project's first assignment, the example course of the end-to-end tests
)
# its single faults, written as students write them (mutants.py), live with the course and serve
# those tests too
sys.path.insert(0, str(PROJECT / "tests" / THE_BLOCK / "checks"))
# the exercise suites are the grader's to run (with --noconftest), not this test run's; bench/ holds
# scripts
collect_ignore_glob = ["*/public/*", "*/hidden/*", "bench/*"]
_THE_BLOCK = load(PROJECT / "course.json", "the-block")
MODULES = _THE_BLOCK.modules  # whatever the-block's problems are
MAX_SCORE = _THE_BLOCK.max_score
REFERENCE = PROJECT / "solutions" / "the-block"  # a correct submission: its MODULES files
_SIBLING_IMPORT = re.compile(rf"^from (?:{'|'.join(MODULES)}) import .*$", re.M)


def notebook_code(student: str, module: str) -> str:
    """An example student's module as a notebook cell holds it: without imports of the other modules
    (a module the example predates, of a problem added since: the reference's)."""
    path = EXAMPLES / student / f"{module}.py"
    return _SIBLING_IMPORT.sub("", (path if path.is_file() else REFERENCE / path.name).read_text())


# A one-problem course whose suites need no reference: the student's `double(x)` must return 2 * x.
MINI_PUBLIC = '''
import numpy as np
import pytest
from grader.feedback.compare import assert_close

@pytest.mark.points(1)
def test_double_small(student):
    """double of a small vector"""
    assert_close(student.double(np.arange(3.0)), np.arange(3.0) * 2, what="double of [0, 1, 2]")
'''
MINI_HIDDEN = '''
import numpy as np
import pytest
from grader.feedback.compare import assert_close

@pytest.mark.points(2)
def test_double_secret(student):
    """double of a secret vector"""
    x = np.array([1234.5, -7.25])
    assert_close(student.double(x), x * 2, what="double of a hidden vector")

@pytest.mark.points(1)
def test_twice_secret(student):
    """twice of a secret scalar"""
    assert student.twice(21) == 42, "twice(21) should be 42"
'''
GOOD = {
    "mathy.py": "import numpy as np\n\ndef double(x):\n    return 2 * x\n\ndef twice(n):\n    "
    "return 2 * n\n"
}


def grade(*args, cwd: Path = PROJECT) -> tuple[int, str]:
    """Run `grade` in a fresh process, as a user would; its exit status and what it printed."""
    # timeout: a backstop against a hang, not a measurement (quiet: under 20 s a call; 30x margin)
    proc = subprocess.run(
        [sys.executable, "-m", "grader", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=600,
    )
    return proc.returncode, proc.stdout + proc.stderr


@functools.lru_cache(maxsize=None)
def course_copy() -> Path:
    """A copy of the project's course.json and of what grading reads through it (exercises/,
    solutions/, each assignment's public and hidden suites with their data), made once a session
    in a folder of its own; returns the copy's course.json. Its overrides files hold a header alone.

    The tests that autograde, export or report the project's own assignments grade with this copy:
    the project's overrides files are the instructor's, and the README's walkthrough appends rows
    to overrides/the-block.csv (run twice, its rows come twice, and every `grade autograde -a
    the-block` stops on the duplicate extension). The copy's fingerprint (course_sha256) is the
    project's: the same files at the same relative paths, and overrides are no part of it. Its
    .grade-key is its own."""
    root = Path(tempfile.mkdtemp(prefix="grade-course-copy-"))
    atexit.register(shutil.rmtree, root, True)
    header = "student,kind,problem,points,due,reason,by\n"
    shutil.copy(PROJECT / "course.json", root / "course.json")
    folders = ["exercises", "solutions"]
    for assignment in json.loads((PROJECT / "course.json").read_text())["assignments"]:
        name = assignment["assignment"]
        folders += [f"tests/{name}/public", f"tests/{name}/hidden"]
        if assignment.get("overrides"):
            write_tree(root, {assignment["overrides"]: header})
    for folder in folders:
        if (PROJECT / folder).is_dir():
            shutil.copytree(
                PROJECT / folder, root / folder, ignore=shutil.ignore_patterns("__pycache__")
            )
    return root / "course.json"


def write_tree(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(textwrap.dedent(text))
    return root


def make_course(
    root: Path,
    limits: dict | None = None,
    public: str = MINI_PUBLIC,
    hidden: str = MINI_HIDDEN,
    points: int = 4,
) -> Path:
    """The mini course in ``root`` (problem `mathy`: double, twice), with these limits and suites;
    returns course.json."""
    write_tree(root / "tests" / "public", {"__init__.py": "", "test_mathy.py": public})
    write_tree(root / "tests" / "hidden", {"__init__.py": "", "test_mathy.py": hidden})
    (root / "tests" / "__init__.py").write_text("")
    write_tree(root / "solutions", GOOD)
    write_tree(
        root / "exercises",
        {
            "mathy.py": "def double(x):\n    raise NotImplementedError\n\n"
            "def twice(n):\n    raise NotImplementedError\n"
        },
    )
    manifest = {
        "assignment": "mini",
        "solutions": "solutions",
        "limits": limits or {"call_timeout": 2, "problem_budget": 5, "submission_budget": 20},
        "problems": [
            {
                "name": "mathy",
                "module": "mathy",
                "functions": ["double", "twice"],
                "points": points,
                "public": "tests/public/test_mathy.py",
                "hidden": "tests/hidden/test_mathy.py",
            }
        ],
    }
    (root / "course.json").write_text(json.dumps(manifest))
    return root / "course.json"


@pytest.fixture
def mini_course(tmp_path: Path) -> Path:
    """A course folder with one problem, `mathy` (functions double, twice), 4 points; returns
    course.json."""
    return make_course(tmp_path / "course")


@pytest.fixture
def limits() -> Limits:
    return Limits(call_timeout=2, problem_budget=5, submission_budget=20, memory_mb=1024)


@pytest.fixture
def submission(tmp_path: Path):
    """Write a submission folder from {filename: source} and return its path."""
    counter = iter(range(1000))

    def make(files: dict[str, str], name: str | None = None) -> Path:
        return write_tree(tmp_path / "subs" / (name or f"student{next(counter)}"), files)

    return make


@pytest.fixture(scope="session")
def course():
    return load(PROJECT / "course.json", THE_BLOCK)


def students_copy(root: Path, assignment: str = THE_BLOCK) -> Path:
    """What a student's release holds of ``assignment`` (stubs, public suites and the feedback
    data, the student course.json), written by ``grade release``, without the grader package
    (`python -m grader` in ``root`` runs this checkout's); returns ``root``."""
    import shutil
    import tempfile

    made = Path(tempfile.mkdtemp(prefix="grade-release-"))
    release, grader_files = made / "release", ("grader", "pyproject.toml")
    try:
        code, output = grade(
            "release", "-a", assignment, "--out", release, "--nbgrader-dir", made / "nb"
        )
        assert code == 0, output
        shutil.copytree(
            release,
            root,
            ignore=lambda folder, names: [
                name for name in names if Path(folder) == release and name in grader_files
            ],
        )
    finally:
        shutil.rmtree(made, ignore_errors=True)
    return root


LEVELS = available_levels()
WARM = [False, True] if hasattr(socket, "send_fds") else [False]


@pytest.fixture(params=LEVELS)
def level(request) -> str:
    """Every isolation level this machine offers (bwrap where bubblewrap works, and plain
    process)."""
    return request.param


@pytest.fixture
def bwrap_level() -> str:
    if BWRAP not in LEVELS:
        pytest.skip("bubblewrap is not available on this machine")
    return BWRAP


def _worker_factory(level: str, warm: bool, limits: Limits):
    zygotes = []

    def make(submission: Path) -> Worker:
        if warm and not zygotes:
            zygotes.append(Zygote(level, imports=limits.imports))
        return Worker(submission, limits, level, zygotes[0] if warm else None)

    return make, zygotes


@pytest.fixture(
    params=[(lv, w) for lv in LEVELS for w in WARM],
    ids=lambda p: f"{p[0]}-{'warm' if p[1] else 'cold'}",
)
def make_worker(request, limits):
    """Make a Worker at every level, started cold (a new interpreter) or warm (forked from a
    zygote)."""
    make, zygotes = _worker_factory(*request.param, limits)
    yield make
    for z in zygotes:
        z.close()


@pytest.fixture(params=LEVELS if WARM[-1] else [], ids=lambda lv: f"{lv}-warm")
def make_forked_worker(request, limits):
    """Make a Worker forked from a zygote (POSIX), at every level: the kind that takes calls sent
    ahead."""
    make, zygotes = _worker_factory(request.param, True, limits)
    yield make
    for z in zygotes:
        z.close()


@pytest.fixture(params=WARM, ids=lambda w: "warm" if w else "cold")
def make_bwrap_worker(request, limits, bwrap_level):
    make, zygotes = _worker_factory(bwrap_level, request.param, limits)
    yield make
    for z in zygotes:
        z.close()
