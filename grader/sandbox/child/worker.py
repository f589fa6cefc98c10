"""The worker: runs one student's functions, one call at a time, and replies with plain data.

This file runs as a script (``python -I -B worker.py SUBMISSION LIMITS_JSON``) in a separate,
sandboxed process. It imports only the standard library and numpy, and knows nothing about tests,
points or expected values: the grader sends the inputs, the worker sends back what the student's
function returned. Its siblings, loaded by path (:func:`_sibling`): protocol.py, the wire format the
grader shares (:mod:`grader.sandbox.child.protocol`); confine.py, what the worker does to itself
before any student code runs; student.py, how the student's modules are imported and their
exceptions told; zygote.py, the warm parent that forks workers (``worker.py --zygote``). The sandbox
mounts these five files and nothing else of the grader.
"""

from __future__ import annotations

import importlib.util
import json
import os
import random
import sys
import time

if (
    "--site" in sys.argv
):  # in the sandbox (python -S: no site-packages), the course's allowed packages
    sys.path.append(sys.argv[sys.argv.index("--site") + 1])

import numpy as np  # noqa: E402

if (
    "--zygote" in sys.argv
):  # numpy loads these lazily: once in the zygote, not in every worker it forks (a
    # noqa: F401,E402    worker started alone loads them when its code uses them)
    import numpy.linalg
    import numpy.random  # noqa: F401,E402


def _sibling(name: str):
    """Another file of this folder, imported once as ``_worker_<name>``. This file runs as a script
    (``python -I``: its folder is not on sys.path), and a plain ``import protocol`` could also find
    a student's module of that name; nothing of the grader is imported."""
    key = f"_worker_{name}"
    if key not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            key, os.path.join(os.path.dirname(os.path.abspath(__file__)), f"{name}.py")
        )
        module = importlib.util.module_from_spec(spec)
        sys.modules[key] = module
        spec.loader.exec_module(module)
    return sys.modules[key]


protocol, confine, student = _sibling("protocol"), _sibling("confine"), _sibling("student")
WireError, encode, read_message, write_frames = (
    protocol.WireError,
    protocol.encode,
    protocol.read_message,
    protocol.write_frames,
)
_drop_privileges, _filter_syscalls, _limit, _private_tmp = (
    confine._drop_privileges,
    confine._filter_syscalls,
    confine._limit,
    confine._private_tmp,
)
_FAILED_IMPORTS, _ImportPolicy, _Reference, _import = (
    student._FAILED_IMPORTS,
    student._ImportPolicy,
    student._Reference,
    student._import,
)
_builtin_bases, _describe, _name, _student_frames = (
    student._builtin_bases,
    student._describe,
    student._name,
    student._student_frames,
)


SEED = 0  # random and np.random are seeded with this before every call
_SEEDED = [True]  # whether the code here names `random` at all (seeding costs more than most calls)


def _names_random(folder: str) -> bool:
    """Whether a Python file of the submission names ``random``: only then can its code draw from
    the global generators (``random``, ``np.random``), whose seeding before each call makes its
    draws the same on every run (code that reaches them by another name only makes its own grade
    vary)."""
    for root, _, files in os.walk(folder):
        for name in files:
            if name.endswith(".py"):
                try:
                    with open(os.path.join(root, name), "rb") as f:
                        if b"random" in f.read():
                            return True
                except OSError:
                    return True
    return False


def _call(request: dict) -> dict:
    if "reference" in request:  # before any student code: see student._Reference
        sys.meta_path.insert(0, _Reference(request["reference"], sys.path[0]))
        _SEEDED[0] = _SEEDED[0] or any(
            "random" in source for source in request["reference"].values()
        )
        return {"ok": True, "value": None}
    if "import" in request:  # the grader imports each module first, on its own budget
        module = _import(request["import"])
        return module if type(module) is dict else {"ok": True, "value": None}
    module_name, function = (
        request["module"],
        request["function"],
    )  # (the envelope's, and the call's)
    module = _import(module_name)
    if type(module) is dict:
        return module
    fn = getattr(module, function, None)
    if not callable(fn):
        return {
            "ok": False,
            "kind": "missing_function",
            "error": f"{module_name}.py has no function {function}()",
        }
    args, kwargs = request["args"], request["kwargs"]
    if _SEEDED[0]:
        random.seed(SEED)
        np.random.seed(SEED)
    started = time.perf_counter()
    used = _watch(request.get("watch"))
    try:
        value = fn(*args, **kwargs)
    except BaseException as exc:
        _unwatch(used)
        if isinstance(exc, NotImplementedError):
            return {
                "ok": False,
                "kind": "not_implemented",
                "error": f"{function}() is not implemented yet (it raises NotImplementedError)",
                **_used(used),
            }
        # Shown by public tests only (a hidden test words its message from "kind" alone).
        return {
            "ok": False,
            "kind": "raised",
            "error": f"{function}() raised {_name(exc)}",
            "builtins": _builtin_bases(exc),
            "traceback": f"{_describe(exc)}\n{_student_frames(exc.__traceback__)}".rstrip(),
            **_used(used),
        }
    _unwatch(used)
    reply = {"ok": True, "value": value, "seconds": time.perf_counter() - started, **_used(used)}
    if request.get("return_inputs"):
        reply["inputs"] = [args, kwargs]
    return reply


def _watch(modules) -> set | None:
    """Record which of the submission's ``modules`` (other problems', whose own tests may fail)
    the call runs code of: a Python function of their files entered (``sys.settrace``, on only for
    such a call). None where no module is watched."""
    if not modules:
        return None
    files = {}
    for name in modules:
        path = getattr(sys.modules.get(name), "__file__", None)
        files[path or os.path.join(sys.path[0], f"{name}.py")] = name
    used = set()

    def trace(frame, event, arg):
        name = files.get(frame.f_code.co_filename)
        if name is not None:
            used.add(name)

    sys.settrace(trace)
    return used


def _unwatch(used: set | None) -> None:
    if used is not None:
        sys.settrace(None)


def _used(used: set | None) -> dict:
    """The reply's ``used``: the watched modules the call ran code of (none where none watched)."""
    return {} if used is None else {"used": sorted(used)}


def main(argv: list[str]) -> None:
    submission, limits = argv[1], json.loads(argv[2])
    # Keep private copies of the request/reply pipes, then send the student's prints to stderr,
    # which the grader captures (capped) and never parses.
    requests = os.fdopen(os.dup(0), "rb")
    replies = os.fdopen(os.dup(1), "wb")
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    sys.dont_write_bytecode = True
    sys.path.insert(0, submission)
    if limits.get("imports") is not None:
        sys.meta_path.insert(0, _ImportPolicy(limits["imports"], submission))
    for module, why in limits.get(
        "failed_imports", {}
    ).items():  # they timed out or crashed a worker before
        _FAILED_IMPORTS[module] = {"ok": False, "kind": "import_error", "error": why}
    if limits.get("tmp_inodes"):
        _private_tmp(limits["tmp_bytes"], limits["tmp_inodes"])
    _drop_privileges(limits.get("drop_uid"), limits.get("drop_gid"))
    _limit(limits)
    if limits.get("seccomp"):
        _filter_syscalls(limits["seccomp"])
    _SEEDED[0] = _names_random(submission)
    while True:
        try:
            request = read_message(requests)
            if request.get("call"):  # an envelope: the call itself follows
                request = {
                    **read_message(requests),
                    "id": request.get("id"),
                    "module": request.get("module"),
                    "watch": request.get("watch"),
                }
        except EOFError:
            return
        cpu = time.process_time()
        reply = _call(request)
        reply["cpu"] = time.process_time() - cpu  # what the grader uses where it cannot measure it
        for stream in (sys.__stdout__, sys.__stderr__, sys.stdout, sys.stderr):
            try:
                stream.flush()
            except BaseException:
                pass
        # Where the log ends after this call: the grader shows each call what it printed, also when
        # it
        # reads this reply after later calls have run (calls sent ahead).
        meta = {"id": request.get("id"), "log": _log_end()}
        try:
            frames = encode({**reply, **meta})
        except WireError as exc:
            frames = encode(
                {
                    "ok": False,
                    "kind": exc.kind,
                    "error": f"{request.get('function')}() {exc}",
                    **meta,
                    "cpu": reply["cpu"],
                }
            )
        except BaseException as exc:  # a value whose walk ran student code and failed
            frames = encode(
                {
                    "ok": False,
                    "kind": "bad_type",
                    **meta,
                    "cpu": reply["cpu"],
                    "error": f"{request.get('function')}() returned a value that cannot be read: "
                    f"{_describe(exc)}",
                }
            )
        write_frames(replies, frames)


def _log_end() -> int | None:
    """The size of the log (fd 2), or None when the student's code moved fd 2 elsewhere."""
    try:
        return os.fstat(2).st_size
    except BaseException:
        return None


if __name__ == "__main__":
    if sys.argv[1:2] == ["--zygote"]:
        _sibling("zygote").zygote(sys.argv[2] == "pidns", main)
    else:
        main(sys.argv)
