"""The benchmark's baseline: a plain pytest plugin that imports the student's modules into the test
process (what a same-process grader does), so the suites run with no sandbox and no worker.

    SUBMISSION=path/to/student PYTHONPATH=tests/bench pytest -p naive tests/the-block/public
    tests/the-block/hidden
Only for measuring: it is exactly the design the grader exists to avoid. It gives the suites every
fixture they ask for, so each test really runs (a test checks that the reference passes them all):
``mistakes`` names no mistake and ``figure`` draws nothing.
"""

import copy
import importlib
import json
import os
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

ROOT = Path(__file__).resolve().parents[2]
COURSE = next(
    a
    for a in json.loads((ROOT / "course.json").read_text())["assignments"]
    if a["assignment"] == "the-block"
)


def _load(folder: Path, prefix: str) -> SimpleNamespace:
    """Import the five modules from ``folder``; keep them under ``prefix`` names so two sets can
    coexist."""
    sys.path.insert(0, str(folder))
    functions = {}
    try:
        for problem in COURSE["problems"]:
            try:
                module = importlib.import_module(problem["module"])
            except BaseException:
                continue
            for name in problem["functions"]:
                if hasattr(module, name):
                    functions[name] = getattr(module, name)
    finally:
        sys.path.remove(str(folder))
        for problem in COURSE["problems"]:
            module = sys.modules.pop(problem["module"], None)
            if module is not None:
                sys.modules[prefix + problem["module"]] = module
    return SimpleNamespace(**functions)


class _NoDiagnosis:
    """``mistakes.<function>(...)``: no known mistake is ever named."""

    def __call__(self, got, expected, same):
        return None

    def outputs(self) -> dict:
        return {}


def pytest_configure(config):
    config.addinivalue_line("markers", "points(p): points")


@pytest.fixture(scope="session")
def reference():
    return _load(ROOT / "solutions" / "the-block", "reference_")


@pytest.fixture(scope="session")
def student(reference):
    functions = _load(Path(os.environ["SUBMISSION"]), "student_")

    def call_with_inputs(name, *args, **kwargs):  # copies, as the worker's are
        args, kwargs = copy.deepcopy(args), copy.deepcopy(kwargs)
        return getattr(functions, name)(*args, **kwargs), list(args), kwargs

    functions.call_with_inputs = call_with_inputs
    return functions


@pytest.fixture(scope="session")
def mistakes():
    return SimpleNamespace(
        **{
            p: lambda *args, **kwargs: _NoDiagnosis()
            for problem in COURSE["problems"]
            for p in problem["functions"]
        }
    )


@pytest.fixture
def figure():
    return lambda title, **arrays: None
