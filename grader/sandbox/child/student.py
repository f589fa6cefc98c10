"""The student's modules as the worker loads them, and the words for what their code raised.

What they may import (the course's policy), each imported once (a failed import gives the same reply
every time), the reference's modules of the other problems where a worker tests a function that uses
them (:class:`_Reference`), and an exception described in capped words and the submission's own
traceback lines. Standard library only; loaded by path by worker.py (as ``_worker_student``), like
its other siblings.
"""

from __future__ import annotations

import builtins
import importlib
import importlib.machinery
import importlib.util
import os
import sys
import traceback


class _ImportPolicy:
    """A meta path finder that refuses every module the course does not allow, with
    ModuleNotFoundError (so a student's ``try: import torch`` / ``except ImportError:`` still
    works): the standard library, the course's allowed packages and the submission's own modules
    pass, on every install alike. The standard library is every module ``sys.stdlib_module_names``
    names and every module found in the standard library's own folders (this platform's
    ``_sysconfigdata_*``, which sysconfig, and so numpy.testing, imports), not their site-packages.
    """

    def __init__(self, allowed: list[str], folder: str):
        self.allowed = set(allowed) | set(sys.stdlib_module_names) | set(sys.builtin_module_names)
        self.folder = folder
        self.stdlib = _stdlib_folders()
        self.words = " and ".join(
            [", ".join(allowed)] * bool(allowed) + ["the Python standard library"]
        )

    def find_spec(self, name, path=None, target=None):
        top = name.partition(".")[0]
        if (
            top in self.allowed
            or os.path.exists(os.path.join(self.folder, top + ".py"))
            or os.path.isdir(os.path.join(self.folder, top))
            or getattr(
                importlib.machinery.PathFinder.find_spec(top, self.stdlib), "has_location", 0
            )
        ):
            return None  # the usual finders decide
        error = ModuleNotFoundError(
            f"{top} is not available in this course (allowed: {self.words})", name=name
        )
        error.course_policy = True
        raise error


def _stdlib_folders() -> list[str]:
    """The standard library's folders (its modules, lib-dynload's, Windows' DLLs), not their
    subfolders. Read off ``os``'s own file and ``sys.base_prefix``, not sysconfig: sysconfig
    imports this platform's ``_sysconfigdata_*`` first, the module this list exists to allow."""
    top = os.path.dirname(os.__file__)
    folders = (top, os.path.join(top, "lib-dynload"), os.path.join(sys.base_prefix, "DLLs"))
    return [d for d in folders if os.path.isdir(d)]


def _import_failure(module_name: str, exc: BaseException) -> dict:
    if isinstance(exc, ModuleNotFoundError) and exc.name == module_name:
        # not the import policy's "not available"
        why = f"there is no {module_name}.py in your folder"
    elif getattr(exc, "course_policy", False) and isinstance(exc, ModuleNotFoundError):
        why = str(exc)
    else:
        why = _describe(exc)
    return {
        "ok": False,
        "kind": "import_error",
        "error": f"importing {module_name}.py failed: {why}",
        "traceback": _student_frames(exc.__traceback__),
    }


def _student_frames(tb) -> str:
    """The traceback lines inside the submission, last three frames, for the student's eyes."""
    root = sys.path[0] + os.sep
    frames = [f for f in traceback.extract_tb(tb) if f.filename.startswith(root)]
    for f in frames:
        f.filename = f.filename[len(root) :]
    return "".join(traceback.format_list(frames[-3:])).rstrip()


SHOWN_NAME = 80  # characters of a student's exception type name shown (public tests only)


def _name(exc: BaseException) -> str:
    """The exception's type name, capped: student code chooses it (it may even hold an input as
    text)."""
    name = type(exc).__name__
    return name if len(name) <= SHOWN_NAME else name[:SHOWN_NAME] + "…"


def _builtin_bases(exc: BaseException) -> list[str]:
    """The built-in exception classes ``exc`` is an instance of (ValueError for a subclass of it):
    what a test of "raises ValueError" asks, by names that are Python's, not the student's."""
    return [
        c.__name__
        for c in type(exc).__mro__
        if issubclass(c, BaseException) and getattr(builtins, c.__name__, None) is c
    ]


def _describe(exc: BaseException) -> str:
    try:
        text = str(exc)
    except BaseException:  # a student's exception with a broken __str__
        text = ""
    return f"{_name(exc)}: {text[:500]}" if text else _name(exc)


_FAILED_IMPORTS: dict[str, dict] = {}  # module -> the reply its failed import gave: not run again


def _import(module_name: str):
    """The student's module, imported once; a failed import gives the same reply every time (not run
    again)."""
    if module_name in _FAILED_IMPORTS:
        return dict(_FAILED_IMPORTS[module_name])
    try:
        module = importlib.import_module(module_name)
    except BaseException as exc:  # SystemExit, KeyboardInterrupt, pytest.exit too
        _FAILED_IMPORTS[module_name] = _import_failure(module_name, exc)
    return dict(_FAILED_IMPORTS[module_name]) if module_name in _FAILED_IMPORTS else module


class _Reference:
    """A meta path finder that makes each module of ``sources`` (module -> the reference's source)
    the course's reference module, ahead of the submission's file of that name: in a worker that
    tests another problem's function, ``from layernorm import layernorm`` (or ``import layernorm``,
    a default argument, a class attribute, a partial: however the student's code holds it) is the
    reference's. A name the reference module lacks comes from the student's own file of that name (a
    helper of theirs: :class:`_OwnHelpers`)."""

    def __init__(self, sources: dict, folder: str):
        self.sources, self.folder = sources, folder

    def find_spec(self, name, path=None, target=None):
        if path is not None or name not in self.sources:
            return None
        return importlib.util.spec_from_loader(name, self)

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        name = module.__name__
        exec(compile(self.sources[name], f"<reference {name}.py>", "exec"), vars(module))
        if not hasattr(module, "__getattr__"):
            module.__getattr__ = _OwnHelpers(module, os.path.join(self.folder, name + ".py"))


class _OwnHelpers:
    """A reference module's ``__getattr__`` (PEP 562): the names it lacks, from the student's own
    file of that module, loaded once with every name the reference module has bound to the
    reference's (before its code runs, so that a default argument or a class body takes the
    reference's, and again after), and the student's own top-level definitions of those names left
    out. So a helper (``split_heads``, a ``LayerNorm`` class, an ``ffn`` around gelu) is the
    student's, and what it calls of the course is the reference's. ``__all__``, which a star import
    asks for, lists both modules' public names."""

    def __init__(self, reference, path: str):
        self.reference, self.path = reference, path
        self.provided = {k: v for k, v in vars(reference).items() if not k.startswith("__")}
        self.own = self.failure = None

    def _load(self):
        if self.own is None and self.failure is None:
            import ast
            import types

            name = f"_own_{self.reference.__name__}"
            module = types.ModuleType(name)
            module.__file__ = self.path
            try:
                with open(self.path, "rb") as f:
                    tree = ast.parse(f.read(), self.path)
                tree.body = [
                    node for node in tree.body if getattr(node, "name", None) not in self.provided
                ]
                vars(module).update(self.provided)
                sys.modules[name] = module  # (a dataclass looks its module up there)
                exec(compile(tree, self.path, "exec"), vars(module))
                vars(module).update(self.provided)
                self.own = module
            except BaseException as exc:  # no such file, or it fails to import: no helper there
                self.failure = _describe(exc)
        return self.own

    def __call__(self, attribute: str):
        if attribute == "__all__":
            own = self._load()
            names = [k for k in self.provided if not k.startswith("_")]
            return (
                names + [k for k in vars(own) if not k.startswith("_") and k not in self.provided]
                if own
                else names
            )
        if not attribute.startswith("__"):  # (not the import system's questions: __path__, ...)
            own = self._load()
            if own is not None and hasattr(own, attribute):
                return getattr(own, attribute)
        why = (
            f" (your {self.reference.__name__}.py failed to load: {self.failure})"
            if self.failure
            else ""
        )
        raise AttributeError(
            f"module {self.reference.__name__!r} has no attribute {attribute!r}{why}"
        )
