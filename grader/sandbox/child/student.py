"""The student's modules as the worker loads them, and the words for what their code raised.

What they may import (the course's policy), each imported once (a failed import gives the same reply every
time), a course module that failed to import left as placeholders (so the modules that import it still
import), and an exception described in capped words and the submission's own traceback lines. Standard
library only; loaded by path by worker.py (as ``_worker_student``), like its other siblings.
"""
from __future__ import annotations

import builtins
import importlib
import importlib.util
import os
import sys
import traceback


class _ImportPolicy:
    """A meta path finder that refuses every module the course does not allow, with ModuleNotFoundError
    (so a student's ``try: import torch`` / ``except ImportError:`` still works): the standard library,
    the course's allowed packages and the submission's own modules pass, on every install alike."""

    def __init__(self, allowed: list[str], folder: str):
        self.allowed = set(allowed) | set(sys.stdlib_module_names) | set(sys.builtin_module_names)
        self.folder = folder
        self.words = " and ".join([", ".join(allowed)] * bool(allowed) + ["the Python standard library"])

    def find_spec(self, name, path=None, target=None):
        top = name.partition(".")[0]
        if top in self.allowed or os.path.exists(os.path.join(self.folder, top + ".py")) \
                or os.path.isdir(os.path.join(self.folder, top)):
            return None                                  # the usual finders decide
        error = ModuleNotFoundError(f"{top} is not available in this course (allowed: {self.words})", name=name)
        error.course_policy = True
        raise error


def _import_failure(module_name: str, exc: BaseException) -> dict:
    if isinstance(exc, ModuleNotFoundError) and exc.name == module_name:
        why = f"there is no {module_name}.py in your folder"     # not the import policy's "not available"
    elif getattr(exc, "course_policy", False) and isinstance(exc, ModuleNotFoundError):
        why = str(exc)
    else:
        why = _describe(exc)
    return {"ok": False, "kind": "import_error", "error": f"importing {module_name}.py failed: {why}",
            "traceback": _student_frames(exc.__traceback__)}


def _student_frames(tb) -> str:
    """The traceback lines inside the submission, last three frames, for the student's eyes."""
    root = sys.path[0] + os.sep
    frames = [f for f in traceback.extract_tb(tb) if f.filename.startswith(root)]
    for f in frames:
        f.filename = f.filename[len(root):]
    return "".join(traceback.format_list(frames[-3:])).rstrip()


SHOWN_NAME = 80              # characters of a student's exception type name shown (public tests only)


def _name(exc: BaseException) -> str:
    """The exception's type name, capped: student code chooses it (it may even hold an input as text)."""
    name = type(exc).__name__
    return name if len(name) <= SHOWN_NAME else name[:SHOWN_NAME] + "…"


def _builtin_bases(exc: BaseException) -> list[str]:
    """The built-in exception classes ``exc`` is an instance of (ValueError for a subclass of it): what a
    test of "raises ValueError" asks, by names that are Python's, not the student's."""
    return [c.__name__ for c in type(exc).__mro__
            if issubclass(c, BaseException) and getattr(builtins, c.__name__, None) is c]


def _describe(exc: BaseException) -> str:
    try:
        text = str(exc)
    except BaseException:                                # a student's exception with a broken __str__
        text = ""
    return f"{_name(exc)}: {text[:500]}" if text else _name(exc)


_FAILED_IMPORTS: dict[str, dict] = {}    # module -> the reply its failed import gave: not run again


def _import(module_name: str):
    """The student's module, imported once; a failed import gives the same reply every time (not run again),
    also when it failed inside another module's import (a placeholder then stands in its place: _Placeholders)."""
    if module_name in _FAILED_IMPORTS:
        return dict(_FAILED_IMPORTS[module_name])
    try:
        module = importlib.import_module(module_name)
    except BaseException as exc:                        # SystemExit, KeyboardInterrupt, pytest.exit too
        _FAILED_IMPORTS[module_name] = _import_failure(module_name, exc)
    return dict(_FAILED_IMPORTS[module_name]) if module_name in _FAILED_IMPORTS else module


class _Placeholders:
    """A meta path finder for the course's modules (``modules``: module -> its course functions). One that fails
    to import (a SyntaxError, an exception at import, no such file; or one whose import timed out or crashed an
    earlier worker, which is not run again) is left in ``sys.modules`` as a placeholder
    holding only the course's functions, each raising ImportError with the import's failure: so block.py's
    ``from layernorm import layernorm`` still imports, and its wiring tests, which stand the function in
    anyway (bound by identity), judge the block; the failing module's own calls get its import failure, as
    before (``_import``)."""

    def __init__(self, modules: dict, folder: str):
        self.modules, self.folder = modules, folder
        self.finding: set[str] = set()

    def find_spec(self, name, path=None, target=None):
        if path is not None or name not in self.modules or name in self.finding:
            return None
        self.finding.add(name)
        spec = failure = None
        try:
            if name not in _FAILED_IMPORTS:             # (one that timed out in an earlier worker: not again)
                spec = importlib.util.find_spec(name)   # the usual finders, the import policy first
        except BaseException as exc:                    # no such file: the policy's ModuleNotFoundError
            failure = exc
        finally:
            self.finding.discard(name)
        if spec is None and failure is None and name not in _FAILED_IMPORTS:
            failure = ModuleNotFoundError(f"No module named {name!r}", name=name)
        loader = _PlaceholderLoader(spec.loader if spec else None, failure, self.modules[name],
                                    os.path.join(self.folder, name + ".py"))
        if spec is None:
            return importlib.util.spec_from_loader(name, loader)
        spec.loader = loader
        return spec


class _PlaceholderLoader:
    """Runs the module's own loader; when that fails, records the failure and makes the module a placeholder."""

    def __init__(self, loader, failure: BaseException | None, functions: list, path: str):
        self.loader, self.failure, self.functions, self.path = loader, failure, functions, path

    def create_module(self, spec):
        return self.loader.create_module(spec) if self.loader is not None else None

    def exec_module(self, module):
        try:
            if self.failure is not None:
                raise self.failure
            if self.loader is not None:
                self.loader.exec_module(module)
                return
        except BaseException as exc:                    # SystemExit, KeyboardInterrupt, pytest.exit too
            _FAILED_IMPORTS[module.__name__] = _import_failure(module.__name__, exc)
        why = _FAILED_IMPORTS[module.__name__]["error"]
        for key in [k for k in vars(module) if not k.startswith("__")]:
            delattr(module, key)                         # whatever ran before the failure: not the student's module
        module.__file__ = self.path                      # one of the submission's modules (_modules_of)
        for function in self.functions:
            setattr(module, function, _unavailable(function, why))


def _unavailable(function: str, why: str):
    def placeholder(*args, **kwargs):
        raise ImportError(f"{function}() cannot run: {why}")

    placeholder.__name__ = placeholder.__qualname__ = function
    return placeholder
