"""Which worker runs which tests: a problem is graded on its own lines, whatever the other problems'
code does.

A problem whose functions use another problem's module (the block calls layernorm, gelu and
attention; count_model calls swiglu_width) is a *dependent* problem. In ``grade autograde`` its
tests run in a fresh worker of its own, where each module it uses is the reference's
(:class:`grader.sandbox.child.student._Reference`): the student's block calls the reference's
layernorm natively, however it holds it (an import, a default argument, a class attribute, a
partial), and a fault inside a component costs points in that component's problem only. Every other
problem's tests run first, together, in a worker that holds no reference code. So the reference
never meets a function it could help: a worker holding the reference's layernorm tests only
functions that are not layernorm's problem's, and no state of one worker reaches another.

Where the reference is not here (a student's release), every test runs in one worker with the
student's own modules, and a dependent problem's failing tests say that its components were the
student's own.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from grader.course.manifest import Course
from grader.errors import GradeError


@dataclass(frozen=True)
class Phase:
    """One worker's share of a submission's tests.

    :param problems: the problems whose tests it runs.
    :param modules: the submission's modules it imports before its first call.
    :param reference: module -> the reference's source, for the modules of other problems that
        ``problems`` use (empty: the worker holds no reference code).
    """

    problems: frozenset[str]
    modules: tuple[str, ...]
    reference: Mapping[str, str] = field(default_factory=dict)

    @property
    def components(self) -> tuple[str, ...]:
        """The modules that are the reference's in this worker."""
        return tuple(self.reference)


def imported(path: Path) -> set[str]:
    """The top-level names of the modules a Python file imports, anywhere in it (read, never
    run)."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
        return set()
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name.partition(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.partition(".")[0])
    return names


def uses(course: Course) -> dict[str, tuple[str, ...]]:
    """problem -> the modules of the other problems its functions use (none for most): what its stub
    imports and, where the solutions are here, what its reference imports, with what those modules'
    references import in turn.

    :raises GradeError: a problem would use its own module through another's reference (a cycle of
        imports).
    """
    modules = set(course.modules)
    solutions = course.solutions if has_reference(course) else None

    def direct(module: str) -> set[str]:
        found = imported(course.exercises / f"{module}.py")
        if solutions is not None:
            found |= imported(solutions / f"{module}.py")
        return (found & modules) - {module}

    result = {}
    for problem in course.problems:
        seen, todo = set(), sorted(direct(problem.module))
        while todo:
            module = todo.pop()
            if module in seen:
                continue
            seen.add(module)
            todo += sorted(direct(module) - seen) if solutions is not None else []
        if problem.module in seen:
            raise GradeError(
                f"{course.path}: problem {problem.name!r}: its module {problem.module} is imported "
                f"back by the reference of {', '.join(sorted(seen - {problem.module}))}: a problem "
                "cannot use a module that uses it"
            )
        result[problem.name] = tuple(m for m in course.modules if m in seen)
    return result


def has_reference(course: Course) -> bool:
    """The reference solutions are here (an instructor's course, not a student's release)."""
    return course.solutions is not None and course.solutions.is_dir()


def plan(course: Course) -> list[Phase]:
    """The phases of grading one submission, in order: every problem that uses no other in one
    worker, then each dependent problem in a worker of its own holding the reference's modules it
    uses (where the reference is here; else every problem in one worker, with the student's own
    modules)."""
    everything = Phase(frozenset(p.name for p in course.problems), tuple(course.modules))
    if not has_reference(course):
        return [everything]
    used = uses(course)
    plain = [p for p in course.problems if not used[p.name]]
    phases = (
        [Phase(frozenset(p.name for p in plain), tuple(dict.fromkeys(p.module for p in plain)))]
        if plain
        else []
    )
    # A problem before every problem that uses it (which uses all it uses, and more): so no worker
    # holding a
    # problem's reference runs before the worker that tests it, and nothing one leaves behind (a
    # file in a /tmp
    # shared at the process level) can reach a test of that problem.
    for problem in sorted(
        (p for p in course.problems if used[p.name]), key=lambda p: len(used[p.name])
    ):
        sources = {
            m: (course.solutions / f"{m}.py").read_text(encoding="utf-8")
            for m in used[problem.name]
        }
        phases.append(Phase(frozenset({problem.name}), (problem.module,), sources))
    return phases
