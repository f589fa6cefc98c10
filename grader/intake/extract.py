"""Turn code cells (a notebook's, or one .py file) into the course's modules, statically: nothing is
run.

Each exercise function goes to its module (course.json ``functions``), with the top-level code it
needs: the imports, helpers and constants it refers to, followed name by name. Everything else a
notebook runs (prints, plots, calls, test cells, ``if __name__ == "__main__":``) is left out, and so
are IPython magics (``%time``), cell magics (``%%bash``) and shell escapes (``!pip``). An exercise
function used by another module is imported from its own module (``from layernorm import
layernorm``), as in the stubs.
"""

from __future__ import annotations

import ast
import builtins
import re
import symtable
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

IPYTHON_LINE = re.compile(r"^\s*(?:[%!]|[\w.,\s]+=\s*[%!]\S|\?\S|[\w.]+\?\??\s*$)")
BUILTINS = frozenset(dir(builtins))
PYTHON_CELL_MAGICS = (
    "%%time",
    "%%timeit",
    "%%capture",
)  # their body is Python: only the first line goes


@dataclass(frozen=True)
class Extracted:
    """The modules built from the cells, and what a person should know about how.

    :param modules: module name -> Python source, only for modules with at least one exercise
        function.
    :param notes: one sentence each: cells skipped, functions defined twice, functions no cell
        defines.
    """

    modules: dict[str, str]
    notes: tuple[str, ...]


@dataclass(frozen=True)
class _Statement:
    where: str  # "cell 4"
    node: ast.stmt
    text: str  # its source, as the student wrote it
    binds: frozenset[str]
    uses: frozenset[str]
    course_import: bool  # `from attention import attention`: the file layout, not a definition


def _parse(label: str, source: str, notes: list[str]) -> tuple[ast.Module, str] | None:
    """The cell's AST and the source it was parsed from; IPython-only lines are blanked when (and
    only when) the cell is not plain Python as it stands."""
    source = source.replace("\r\n", "\n").replace("\r", "\n")
    lines = source.split("\n")
    first = next((i for i, line in enumerate(lines) if line.strip()), 0)
    magic = lines[first].split()[0] if lines[first].strip() else ""
    if magic in PYTHON_CELL_MAGICS:
        source = "\n".join(lines[:first] + [""] + lines[first + 1 :])
        notes.append(f"{label}: left out its cell magic {magic}")
    elif magic.startswith("%%"):
        notes.append(f"{label} skipped: a cell magic ({magic}) is not Python")
        return None
    try:
        return ast.parse(source), source
    except SyntaxError:
        pass
    lines = source.split("\n")
    kept = [("" if IPYTHON_LINE.match(line) else line) for line in lines]
    dropped = sum(a != b for a, b in zip(lines, kept))
    try:
        tree = ast.parse("\n".join(kept))
    except SyntaxError as err:
        notes.append(f"{label} skipped: it is not valid Python ({err.msg}, line {err.lineno})")
        return None
    notes.append(f"{label}: left out {dropped} IPython magic or shell line{'s' * (dropped != 1)}")
    return tree, "\n".join(kept)


def binds(node: ast.stmt) -> set[str]:
    """The module-level names a statement binds (not looking inside function or class bodies)."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {node.name}
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return {(a.asname or a.name).split(".")[0] for a in node.names}
    names: set[str] = set()
    todo: list[ast.AST] = [node]
    while todo:
        current = todo.pop()
        if isinstance(current, ast.Name) and isinstance(current.ctx, ast.Store):
            names.add(current.id)
        elif isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(current.name)
        elif isinstance(current, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in current.names}
        elif not isinstance(current, (ast.Lambda, ast.comprehension)):
            todo.extend(ast.iter_child_nodes(current))
    return names


def uses(text: str, node: ast.stmt) -> set[str]:
    """The module-level names a statement reads: at the top level, or as globals inside its
    functions."""
    try:
        table = symtable.symtable(text, "<cell>", "exec")
    except SyntaxError:  # e.g. `nonlocal` at the top: every name it reads
        return {
            n.id
            for n in ast.walk(node)
            if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Store)
        }
    names: set[str] = set()
    tables = [table]
    while tables:
        current = tables.pop()
        top = current.get_type() == "module"
        names |= {
            sym.get_name()
            for sym in current.get_symbols()
            if sym.is_referenced() and (top or sym.is_global())
        }
        tables.extend(current.get_children())
    return names


def segment(source_lines: list[str], source: str, node: ast.stmt) -> str:
    """A top-level statement's source as written, decorators included."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        first = min([node.lineno] + [d.lineno for d in node.decorator_list])
        return "\n".join(source_lines[first - 1 : node.end_lineno])
    # Not ast.get_source_segment: it splits the whole source again for every statement (quadratic).
    lines = [
        line.encode() for line in source_lines[node.lineno - 1 : node.end_lineno]
    ]  # offsets are in bytes
    if not lines or node.end_col_offset is None:
        return ast.unparse(node)
    lines[-1] = lines[-1][: node.end_col_offset]
    lines[0] = lines[0][node.col_offset :]
    return b"\n".join(lines).decode(errors="replace")


def is_course_import(node: ast.stmt, modules: set[str]) -> bool:
    """``from attention import attention`` or ``import attention``: the file layout, not a
    definition."""
    return (isinstance(node, ast.ImportFrom) and node.level == 0 and node.module in modules) or (
        isinstance(node, ast.Import) and all(a.name in modules for a in node.names)
    )


def _statements(
    cells: Iterable[tuple[str, str]], modules: set[str], notes: list[str]
) -> list[_Statement]:
    found = []
    for label, source in cells:
        parsed = _parse(label, source, notes)
        if parsed is None:
            continue
        tree, source = parsed
        lines = source.split("\n")
        for node in tree.body:
            text = segment(lines, source, node)
            found.append(
                _Statement(
                    label,
                    node,
                    text,
                    frozenset(binds(node)),
                    frozenset(uses(text, node)),
                    is_course_import(node, modules),
                )
            )
    return found


def modules_from_cells(cells: Sequence[tuple[str, str]], functions: Mapping[str, str]) -> Extracted:
    """Build the course's modules from ``cells``.

    :param cells: ``(label, source)`` pairs in the order they ran, e.g. ``("cell 3", "def gelu(x):
        ...")``.
    :param functions: every exercise function -> its module (``Course.functions``).
    :returns: the modules and the notes; a module none of whose functions is defined is absent.
    """
    notes: list[str] = []
    modules = set(functions.values())
    statements = [s for s in _statements(cells, modules, notes) if not s.course_import]
    by_name: dict[str, list[_Statement]] = {}
    for s in statements:
        for name in s.binds:
            by_name.setdefault(name, []).append(s)
    star_imports = [s for s in statements if isinstance(s.node, ast.ImportFrom) and "*" in s.binds]

    for function in functions:
        places = [s.where for s in by_name.get(function, [])]
        if not places:
            notes.append(f"no code defines {function}() (module {functions[function]})")
        elif len(places) > 1:
            notes.append(
                f"{function}() is defined {len(places)} times ({', '.join(places)}): the last one "
                "is graded"
            )

    sources = {}
    for module in sorted(modules):
        own = [f for f, m in functions.items() if m == module and f in by_name]
        if own:
            sources[module] = _module_source(
                module, own, by_name, star_imports, statements, functions
            )
    return Extracted(sources, tuple(notes))


def _module_source(
    module: str,
    roots: list[str],
    by_name: Mapping[str, list[_Statement]],
    star_imports: list[_Statement],
    statements: list[_Statement],
    functions: Mapping[str, str],
) -> str:
    """The statements ``roots`` need, in the order they ran, after the imports of other modules'
    functions."""
    needed: set[int] = set()
    imports: set[tuple[str, str]] = set()
    todo = list(roots)
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        if name in functions and functions[name] != module:
            if name in by_name:  # else a NameError when called, as in the notebook
                imports.add((functions[name], name))
            continue
        binders = by_name.get(name)
        if binders is None:
            binders = star_imports if name not in BUILTINS else []
        for s in binders:
            if id(s) not in needed:
                needed.add(id(s))
                todo.extend(s.uses)
    chosen = [s for s in statements if id(s) in needed]
    future = [
        s.text
        for s in chosen
        if isinstance(s.node, ast.ImportFrom) and s.node.module == "__future__"
    ]
    body = [s.text for s in chosen if s.text not in future]
    header = [
        f"# {module}.py, built by the grader from the submitted cells that define "
        f"{', '.join(f + '()' for f in sorted(roots))}"
    ]
    imports_text = [f"from {m} import {n}" for m, n in sorted(imports)]
    return (
        "\n\n".join(
            header
            + sorted(set(future))
            + (["\n".join(imports_text)] if imports_text else [])
            + body
        )
        + "\n"
    )
