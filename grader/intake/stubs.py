"""Tell a released stub from an attempt, from the module's source: parsed, never run."""

from __future__ import annotations

import ast
from typing import Iterable

PLACEHOLDERS = {
    ast.dump(s)
    for s in ast.parse("pass\n...\nraise NotImplementedError\nraise NotImplementedError()").body
}


def untouched(source: str | bytes, functions: Iterable[str]) -> bool:
    """Whether a module's source defines none of ``functions`` beyond a placeholder, as the released
    stubs do: besides its docstring and imports it holds only plain ``def``s, and each of
    ``functions`` is missing or has a body (its docstring aside) of only ``pass``, ``...`` or
    ``raise NotImplementedError``.

    Parsed, never run. Anything else that could bind a function (an assignment such as ``gelu =
    lambda x: ...``, ``exec``, an ``if``, a decorator, an import of one of ``functions`` or ``*``, a
    default that is not a plain value) makes the module an attempt: a real attempt is never flagged
    blank. Code that does not parse is an attempt too."""
    try:
        tree = ast.parse(source)
    except (Exception, RecursionError):  # SyntaxError, MemoryError, a nesting too deep
        return False
    functions = set(functions)
    for i, node in enumerate(tree.body):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            bound = {(a.asname or a.name).split(".")[0] for a in node.names}
            if "*" in bound or bound & functions:
                return False
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if node.decorator_list or not all(
                _plain(e) for e in _evaluated(node.args, node.returns)
            ):
                return False
            if node.name in functions and not _placeholder(node.body):
                return False
        elif not (i == 0 and _docstring(node)):
            return False
    return True


def _docstring(node: ast.stmt) -> bool:
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    )


def _placeholder(body: list[ast.stmt]) -> bool:
    """A function body that is only a docstring and ``pass`` / ``...`` / ``raise
    NotImplementedError``."""
    if body and _docstring(body[0]):
        body = body[1:]
    return all(
        isinstance(s, (ast.Pass, ast.Expr, ast.Raise)) and ast.dump(s) in PLACEHOLDERS for s in body
    )


def _evaluated(args: ast.arguments, returns: ast.expr | None) -> list[ast.expr]:
    """What a ``def`` statement evaluates when it runs: its defaults and annotations."""
    every = [
        *args.posonlyargs,
        *args.args,
        *args.kwonlyargs,
        *filter(None, (args.vararg, args.kwarg)),
    ]
    return [
        *args.defaults,
        *filter(None, args.kw_defaults),
        *filter(None, (a.annotation for a in every)),
        *filter(None, [returns]),
    ]


def _plain(node: ast.expr) -> bool:
    """A value that runs no code when evaluated: a constant, a name, ``np.float32``, ``-1``, a tuple
    of these."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return _plain(node.operand)
    if isinstance(node, ast.Attribute):
        return _plain(node.value)
    if isinstance(node, ast.Tuple):
        return all(_plain(e) for e in node.elts)
    return isinstance(node, (ast.Constant, ast.Name))
