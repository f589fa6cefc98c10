"""The grader's house: its stages import down the folder list, never in a circle, and the rooms that
must stay light (course.json's reader, scoring, the code mounted in the sandbox) import nothing
heavy or secret."""

from __future__ import annotations

import ast
import subprocess
import sys
import tokenize
from pathlib import Path

import pytest

import grader

PACKAGE = Path(grader.__file__).resolve().parent
CHILD = PACKAGE / "sandbox" / "child"


def _module(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """The grader modules ``path`` imports, at the top or inside a function (a lazy import is an
    edge too)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
    return names


def graph() -> dict[str, set[str]]:
    modules = {_module(p): p for p in PACKAGE.rglob("*.py")}
    return {
        name: {
            m for m in _imports(path) if m in modules and m != name and not name.startswith(m + ".")
        }
        for name, path in modules.items()
    }


def cycle(edges: dict[str, set[str]]) -> list[str]:
    """One import cycle, as the modules along it, or [] (a depth-first search)."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt) :] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        state[node] = 2
        stack.pop()
        return []

    for node in sorted(edges):
        if node not in state and (found := visit(node)):
            return found
    return []


def test_cycle_finds_a_circle_and_only_a_circle():
    assert cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) == []


def test_the_grader_imports_no_module_in_a_circle():
    edges = graph()
    assert (
        "grader.grading.executors" in edges
        and "grader.course.manifest" in edges["grader.grading.executors"]
    )
    assert cycle(edges) == []


def test_the_stages_import_each_other_in_no_circle():
    """One folder a stage: between the packages of grader/ too, imports run one way (grading uses
    feedback's comparisons, so feedback never imports grading; the LMS side never imports a
    command)."""

    def stage(module: str) -> str:
        return ".".join(module.split(".")[:2])

    stages: dict[str, set[str]] = {}
    for a, targets in graph().items():
        stages.setdefault(stage(a), set()).update(stage(b) for b in targets if stage(b) != stage(a))
    assert "grader.feedback" in stages["grader.grading"]
    assert cycle(stages) == []


def _loaded_after(statement: str) -> set[str]:
    # timeout: a backstop against a hang, not a measurement (quiet: 0.1 s; 500x margin)
    out = subprocess.run(
        [sys.executable, "-c", f"import sys; {statement}; print('\\n'.join(sys.modules))"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    return set(out.split())


def test_reading_course_json_imports_neither_the_sandbox_nor_numpy():
    loaded = _loaded_after("import grader.course.manifest")
    assert "grader.course.limits" in loaded
    assert "numpy" not in loaded and not any(m.startswith("grader.sandbox") for m in loaded)


def test_scoring_imports_no_pytest():
    loaded = _loaded_after("import grader.scoring, grader.grading.results")
    assert "pytest" not in loaded and "grader.grading.plugin" not in loaded


def test_the_code_mounted_in_the_sandbox_imports_only_the_standard_library_and_numpy():
    from grader.sandbox.policy import CHILD_FILES

    assert sorted(CHILD_FILES) == sorted(
        p.name for p in CHILD.glob("*.py") if p.name != "__init__.py"
    )
    allowed = set(sys.stdlib_module_names) | {"numpy", "_worker_confine"}
    for name in CHILD_FILES:
        tops = {m.split(".")[0] for m in _imports(CHILD / name)}
        assert tops <= allowed, (name, tops - allowed)


# Counted in statements (logical lines), which the formatter's layout does not change: the modules
# of 320 lines at 120 columns held at most about 230, before ruff formatted them at 100 columns.
MAX_STATEMENTS = 240


def statements(path: Path) -> int:
    """The statements of a module: its logical lines (a docstring, or a call over many lines, is
    one)."""
    with path.open(encoding="utf-8") as f:
        return sum(t.type == tokenize.NEWLINE for t in tokenize.generate_tokens(f.readline))


def test_no_module_of_the_grader_is_over_240_statements():
    """One job a module: a module that grows past ~240 statements is doing two, and is split by
    job."""
    sizes = {p.relative_to(PACKAGE.parent).as_posix(): statements(p) for p in PACKAGE.rglob("*.py")}
    assert sizes["grader/sandbox/client.py"] > 0  # it measured the grader's own files
    over = {path: n for path, n in sorted(sizes.items()) if n > MAX_STATEMENTS}
    assert not over, "over {} statements: {}".format(
        MAX_STATEMENTS, ", ".join(f"{p} ({n})" for p, n in over.items())
    )


@pytest.mark.parametrize("command", [["format", "--check"], ["check"]], ids=" ".join)
def test_ruff_finds_nothing_to_format_or_report(command):
    """One formatter and one linter for the house, at 100 columns (pyproject.toml's [tool.ruff];
    ruff is pinned in the dev extra: another version could lay the same code out differently)."""
    root = PACKAGE.parent
    # timeout: a backstop against a hang, not a measurement (quiet: well under a second)
    done = subprocess.run(
        [sys.executable, "-m", "ruff", *command, "--no-cache", "."],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-1000:]
