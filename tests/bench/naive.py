"""The benchmark's baseline: a plain pytest plugin that imports the student's modules into the test
process (what a same-process grader does), so the suites run with no sandbox and no worker.

    SUBMISSION=path/to/student PYTHONPATH=tests/bench pytest -p naive tests/public tests/hidden
Only for measuring: it is exactly the design the grader exists to avoid.
"""
import importlib
import json
import os
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

ROOT = Path(__file__).resolve().parents[2]
COURSE = json.loads((ROOT / "course.json").read_text())


def _load(folder: Path, prefix: str) -> SimpleNamespace:
    """Import the five modules from ``folder``; keep them under ``prefix`` names so two sets can coexist."""
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


def pytest_configure(config):
    config.addinivalue_line("markers", "points(p): points")


@pytest.fixture(scope="session")
def reference():
    return _load(ROOT / "solutions", "reference_")


@pytest.fixture(scope="session")
def student(reference):
    return _load(Path(os.environ["SUBMISSION"]), "student_")
