"""Weave a stub module and its reference solution into one nbgrader solution cell.

The cell reads like the stub (its imports, signatures and docstrings); each exercise function's body
is the reference's, between ``### BEGIN SOLUTION`` and ``### END SOLUTION``, with the reference's
helpers, constants and extra imports nested inside it. ``nbgrader generate_assignment`` replaces
each region with ``raise NotImplementedError()``, so the released cell is the stub again, and no
line of the reference survives it. Imports of other exercise modules are left out: in a notebook
those functions are global.
"""

from __future__ import annotations

import ast
import textwrap
from typing import Iterable

from grader.errors import GradeError
from grader.intake.extract import binds, is_course_import, segment, uses

BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)


def _is_docstring(node: ast.stmt) -> bool:
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    )


def _functions(tree: ast.Module, names: Iterable[str], where: str) -> dict[str, ast.FunctionDef]:
    found = {n.name: n for n in tree.body if isinstance(n, DEFS)}
    missing = [n for n in names if n not in found]
    if missing:
        raise GradeError(f"{where}: no function {', '.join(missing)}")
    return found


def _body(lines: list[str], fn: ast.FunctionDef) -> str:
    """The function's body without its docstring, dedented."""
    body = fn.body[1:] if _is_docstring(fn.body[0]) and len(fn.body) > 1 else fn.body
    first = body[0]
    start = min([first.lineno] + [d.lineno for d in getattr(first, "decorator_list", [])])
    if start == fn.lineno:  # `def f(x): return x` on one line
        return "\n".join(ast.unparse(s) for s in body)
    return textwrap.dedent("\n".join(lines[start - 1 : fn.end_lineno]))


def _header(lines: list[str], fn: ast.FunctionDef) -> tuple[str, str]:
    """The stub function's decorators, ``def`` line(s) and docstring, and the body's indentation."""
    start = min([fn.lineno] + [d.lineno for d in fn.decorator_list])
    first = fn.body[0]
    if _is_docstring(first):
        return "\n".join(lines[start - 1 : first.end_lineno]), " " * first.col_offset
    return "\n".join(lines[start - 1 : first.lineno - 1]).rstrip(), " " * first.col_offset


def weave(
    stub: str,
    reference: str,
    functions: Iterable[str],
    course_modules: set[str],
    *,
    where: str = "the module",
) -> str:
    """The solution cell's source for one problem.

    :param stub: the stub module's source (what students get).
    :param reference: the reference module's source.
    :param functions: the problem's exercise functions (course.json), all defined in both modules.
    :param course_modules: every exercise module name, whose imports are left out of the cell.
    :raises GradeError: a function is missing from the stub or the reference.
    """
    functions = list(functions)
    stub_tree, ref_tree = ast.parse(stub), ast.parse(reference)
    stub_lines, ref_lines = stub.split("\n"), reference.split("\n")
    stub_defs = _functions(stub_tree, functions, f"{where} (stub)")
    ref_defs = _functions(ref_tree, functions, f"{where} (reference)")

    kept_stub = [
        n
        for n in stub_tree.body
        if not (n is stub_tree.body[0] and _is_docstring(n))
        and not is_course_import(n, course_modules)
    ]
    provided = set().union(*(binds(n) for n in kept_stub)) if kept_stub else set()
    support = [
        n
        for n in ref_tree.body
        if not _is_docstring(n)
        and not is_course_import(n, course_modules)
        and not (isinstance(n, DEFS) and n.name in functions)
    ]
    texts = {id(n): segment(ref_lines, reference, n) for n in support}
    bound = {name: n for n in support for name in binds(n)}

    def helpers(fn: ast.FunctionDef) -> list[str]:
        """The reference's top-level statements ``fn`` needs that the stub does not provide, in file
        order."""
        needed: set[int] = set()
        todo = list(uses(segment(ref_lines, reference, fn), fn))
        while todo:
            name = todo.pop()
            node = bound.get(name)
            if node is None or id(node) in needed or name in functions or binds(node) <= provided:
                continue
            needed.add(id(node))
            todo.extend(uses(texts[id(node)], node))
        return [texts[id(n)] for n in support if id(n) in needed]

    parts = []
    for node in kept_stub:
        if isinstance(node, DEFS) and node.name in functions:
            header, indent = _header(stub_lines, stub_defs[node.name])
            region = "\n\n".join(
                helpers(ref_defs[node.name]) + [_body(ref_lines, ref_defs[node.name])]
            )
            parts.append(
                "\n".join([header, indent + BEGIN, textwrap.indent(region, indent), indent + END])
            )
        else:
            parts.append(segment(stub_lines, stub, node))
    cell = "\n\n\n".join(_join_imports(parts)) + "\n"
    try:
        ast.parse(cell)
    except SyntaxError as err:
        raise GradeError(
            f"{where}: the woven solution cell is not valid Python ({err.msg}, line {err.lineno}); "
            "check the indentation of multi-line strings in the reference"
        ) from None
    return cell


def _join_imports(parts: list[str]) -> list[str]:
    """Consecutive import lines stay together instead of two blank lines apart."""
    joined: list[str] = []
    for part in parts:
        if (
            joined
            and part.startswith(("import ", "from "))
            and joined[-1].split("\n")[-1].startswith(("import ", "from "))
        ):
            joined[-1] += "\n" + part
        else:
            joined.append(part)
    return joined
