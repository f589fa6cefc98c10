"""The worker: runs one student's functions, one call at a time, and replies with plain data.

This file runs as a script (``python -I -B worker.py SUBMISSION LIMITS_JSON``) in a separate,
sandboxed process. It imports only the standard library and numpy, and knows nothing about tests,
points or expected values: the grader sends the inputs, the worker sends back what the student's
function returned. The grader module :mod:`grader.sandbox.client` imports the framing helpers below, so
both sides share one implementation of the wire format.

Wire format: each message is a list of frames; a frame is an 8-byte big-endian length and that
many bytes. Frame 0 is a JSON document (``allow_nan`` so a student's NaN survives the trip); each
further frame is one array's raw bytes in C order (``ndarray.tobytes``), referenced from the JSON as
``{"$nd": index, "dtype": "<f8", "shape": [2, 3]}`` and rebuilt with ``np.frombuffer``; only numeric
dtypes pass. Dicts travel as ``{"$dict": {...}}``. (The ``.npy`` format carries the same three
things, but ``np.load`` parses its header with ``ast.literal_eval``: 90 µs an array, a third of a
call's round trip.)
"""
from __future__ import annotations

import builtins
import functools
import importlib
import importlib.util
import json
import math
import os
import random
import signal
import struct
import sys
import time
import traceback
from types import SimpleNamespace

if "--site" in sys.argv:      # in the sandbox (python -S: no site-packages), the course's allowed packages
    sys.path.append(sys.argv[sys.argv.index("--site") + 1])

import numpy as np  # noqa: E402
import numpy.linalg  # noqa: F401,E402  numpy loads these lazily: load them once in the zygote, not in every worker
import numpy.random  # noqa: F401,E402

MAX_FRAME = 16 << 20          # bytes in one frame (one array)
MAX_HEAD = 1 << 20            # bytes in the JSON document (MAX_ITEMS items fit many times over)
MAX_MESSAGE = 32 << 20        # bytes in one message, all frames together
MAX_ARRAYS = 16               # arrays in one message
MAX_ITEMS = 10_000            # list items and dict keys in one message
MAX_DEPTH = 16                # nesting of lists and dicts
SEED = 0                      # random and np.random are seeded with this before every call
_HEADER = struct.Struct(">Q")
_SCALARS = (bool, int, float, str, type(None))
_NUMPY_SCALARS = {np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
                  np.uint64, np.float16, np.float32, np.float64}


class WireError(Exception):
    """A value that cannot travel: wrong type, too large, too deep. ``kind`` is ``bad_type`` or ``too_large``."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


# ---------------------------------------------------------------- framing, shared with the grader

def read_exact(stream, n: int) -> bytes:
    chunks = []
    while n:
        chunk = stream.read(n)
        if not chunk:
            raise EOFError("the other side closed the channel")
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def read_message(stream):
    """Read one message; raise EOFError when the stream ends, WireError when it breaks the caps."""
    frames = []
    count = None
    total = 0
    while count is None or len(frames) < count:
        (size,) = _HEADER.unpack(read_exact(stream, _HEADER.size))
        total += size
        if size > (MAX_HEAD if count is None else MAX_FRAME) or total > MAX_MESSAGE:
            raise WireError("too_large", f"a frame of {size} bytes exceeds the limits")
        frames.append(read_exact(stream, size))
        if count is None:
            head = json.loads(frames[0])
            count = 1 + head["arrays"]
            if count - 1 > MAX_ARRAYS:
                raise WireError("too_large", f"{count - 1} arrays in one message")
    return decode(frames, head)


def write_message(stream, obj) -> None:
    write_frames(stream, encode(obj))


def write_frames(stream, frames: list[bytes]) -> None:
    stream.write(b"".join(_HEADER.pack(len(f)) + f for f in frames))
    stream.flush()


def encode(obj) -> list[bytes]:
    """Plain data -> frames. Only exact ndarrays, bool/int/float/str/None, lists, tuples and str-keyed dicts pass."""
    arrays: list[bytes] = []
    budget = [MAX_ITEMS]

    def walk(value, depth):
        budget[0] -= 1
        if budget[0] < 0 or depth > MAX_DEPTH:
            raise WireError("too_large", "the value is nested too deeply or has too many items")
        kind = type(value)
        if kind is np.ndarray:
            if value.dtype.str not in _DTYPES:
                raise WireError("bad_type", f"returned an array of dtype {value.dtype}: use a numeric dtype")
            if value.nbytes > MAX_FRAME - 4096 or len(arrays) >= MAX_ARRAYS:
                raise WireError("too_large", f"returned an array of {value.nbytes} bytes")
            arrays.append(value.tobytes())
            return {"$nd": len(arrays) - 1, "dtype": value.dtype.str, "shape": list(value.shape)}
        if kind in _SCALARS:
            return value
        if kind in _NUMPY_SCALARS:
            return value.item()
        if kind in (list, tuple):
            return [walk(v, depth + 1) for v in value]
        if kind is dict:
            if not all(type(k) is str for k in value):
                raise WireError("bad_type", "returned a dict whose keys are not all strings")
            return {"$dict": {k: walk(v, depth + 1) for k, v in value.items()}}
        if isinstance(value, np.ndarray):
            raise WireError("bad_type", f"returned a {kind.__module__}.{kind.__name__} (a subclass of "
                            "numpy.ndarray): return a plain numpy array, e.g. np.asarray(...)")
        raise WireError("bad_type", f"returned a {kind.__module__}.{kind.__name__}: "
                        "return a numpy array or plain Python numbers")

    body = walk(obj, 0)
    head = json.dumps({"arrays": len(arrays), "body": body}).encode()
    if len(head) > MAX_HEAD:
        raise WireError("too_large", "the value is too large")
    return [head] + arrays


def _array(data: bytes, dtype, shape) -> np.ndarray:
    """An array's frame -> a writable ndarray; raises WireError unless the dtype is numeric and the
    bytes are exactly ``shape`` of it."""
    dtype = _DTYPES.get(dtype) if type(dtype) is str else None
    if dtype is None:
        raise WireError("bad_type", "an array of a dtype that may not travel")
    if (type(shape) is not list or len(shape) > 32 or not all(type(n) is int and n >= 0 for n in shape)
            or len(data) != dtype.itemsize * math.prod(shape)):
        raise WireError("bad_type", "an array whose shape does not match its bytes")
    return np.frombuffer(bytearray(data), dtype).reshape(shape)


# The dtypes an array may travel as: bool, integers, floats and complex, in both byte orders.
_DTYPES = {dt.str: dt for code in "?bBhHiIlLqQefdgFDG" for order in "<>|"
           for dt in [np.dtype(code).newbyteorder(order) if order != "|" else np.dtype(code)]}


def decode(frames: list[bytes], head: dict | None = None):
    """Frames -> plain data; arrays come back as exact, writable ndarrays of a numeric dtype.
    ``head``: frame 0 already parsed."""
    head = json.loads(frames[0]) if head is None else head
    used: set[int] = set()
    budget = [MAX_ITEMS]

    def walk(value, depth=0):
        budget[0] -= 1
        if budget[0] < 0 or depth > MAX_DEPTH:           # the same caps as encode(): a forged reply is refused
            raise WireError("too_large", "the value is nested too deeply or has too many items")
        if type(value) is list:
            return [walk(v, depth + 1) for v in value]
        if type(value) is dict:
            if "$nd" in value:
                index = value["$nd"]
                if type(index) is not int or not 0 <= index < len(frames) - 1 or index in used:
                    raise WireError("bad_type", "a reference to an array that is not there (or used twice)")
                used.add(index)                          # each frame becomes one array: no amplification
                return _array(frames[1 + index], value.get("dtype"), value.get("shape"))
            return {k: walk(v, depth + 1) for k, v in value["$dict"].items()}
        return value

    return walk(head["body"])


# ---------------------------------------------------------------- the worker side

@functools.lru_cache(maxsize=1)
def _libc():
    """The C library through ctypes, with the types the worker's start needs (Linux). Loaded once, in the
    zygote before it forks (see :func:`_prepare_start`): each worker inherits it instead of paying for
    ``CDLL``, the ctypes types and the function lookups again (about 0.5 ms a worker)."""
    import ctypes

    class Program(ctypes.Structure):                     # struct sock_fprog
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    libc = ctypes.CDLL(None, use_errno=True)
    for name in ("prctl", "capset", "capget", "unshare", "mount"):
        getattr(libc, name)                              # looked up (and kept by the CDLL) once
    return SimpleNamespace(libc=libc, ctypes=ctypes, Program=Program, CapHeader=ctypes.c_uint32 * 2,
                           CapData=ctypes.c_uint32 * 6)


@functools.lru_cache(maxsize=4)
def _seccomp_fprog(program_hex: str):
    """The seccomp program (hex, as the grader sends it) as a ``struct sock_fprog`` and the buffer it points
    to (kept alive with it); made once per program, in the zygote before it forks."""
    c = _libc()
    program = bytes.fromhex(program_hex)
    code = c.ctypes.create_string_buffer(program, len(program))
    return c.Program(len(program) // 8, c.ctypes.addressof(code)), code


def _prepare_start(limits: dict) -> None:
    """In the zygote, before a fork: what every worker's start needs and that is the same for all of them."""
    if sys.platform.startswith("linux"):
        _libc()
        if limits.get("seccomp"):
            _seccomp_fprog(limits["seccomp"])


def _drop_privileges(uid: int | None, gid: int | None = None) -> None:
    """As root, become ``uid`` (and ``gid``) with no groups; then hold no capability at all (in the
    sandbox the zygote keeps CAP_SYS_ADMIN to mount each worker's private /tmp; as root CAP_SETUID and
    CAP_SETGID)."""
    if uid is not None and os.getuid() == 0:
        os.setgroups([])
        os.setgid(uid if gid is None else gid)
        os.setuid(uid)
        if os.getuid() != uid or os.geteuid() != uid:
            raise SystemExit("could not drop privileges")
    if sys.platform.startswith("linux"):
        c = _libc()
        c.libc.prctl(47, 4, 0, 0, 0)                     # PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL
        header = c.CapHeader(0x20080522, 0)              # _LINUX_CAPABILITY_VERSION_3, this thread
        c.libc.capset(header, c.CapData())               # effective, permitted, inheritable: empty
        # Checked with capget (reading /proc/self/status cost a quarter of a millisecond): effective and
        # permitted sets empty, in both words; the ambient set is then empty too (the kernel keeps it a
        # subset of the permitted one).
        held = c.CapData()
        if c.libc.capget(c.CapHeader(0x20080522, 0), held) != 0 or any(held[i] for i in (0, 1, 3, 4)):
            raise SystemExit("could not drop capabilities")


def _filter_syscalls(program_hex: str) -> None:
    """Add the grader's seccomp filter (a BPF program libseccomp wrote, in hex) to this process, for good."""
    c = _libc()
    fprog, _code = _seccomp_fprog(program_hex)
    PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2
    if c.libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 or c.libc.prctl(
            PR_SET_SECCOMP, SECCOMP_MODE_FILTER, c.ctypes.byref(fprog), 0, 0) != 0:
        raise SystemExit("could not install the worker's syscall filter")


def _set_parent_death_signal() -> None:
    """Linux: be killed when the parent dies (the grader, or for a worker its zygote), so nothing outlives it."""
    if sys.platform.startswith("linux"):
        _libc().libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG


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


def _limit(limits: dict) -> None:
    """Apply the POSIX resource limits the grader asked for (no-op where ``resource`` is missing)."""
    try:
        import resource
    except ImportError:                                  # Windows: the parent's timeouts still hold
        return
    wanted = {"RLIMIT_AS": limits.get("memory_bytes"), "RLIMIT_FSIZE": limits.get("file_bytes"),
              "RLIMIT_NOFILE": limits.get("open_files"), "RLIMIT_CPU": limits.get("cpu_seconds"),
              "RLIMIT_CORE": 0}
    if os.name == "posix" and os.getuid() != 0:       # not enforced for root anyway
        wanted["RLIMIT_NPROC"] = limits.get("processes")
    if hasattr(signal, "SIGXFSZ"):                     # past the file-size limit a write fails, no kill
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    for name, value in wanted.items():
        if value is not None and hasattr(resource, name):
            try:
                resource.setrlimit(getattr(resource, name), (int(value), int(value)))
            except (ValueError, OSError):
                pass


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


MAX_STANDIN_CALLS = 256     # stand-in calls in one call


class NotSpecified(Exception):
    """A stand-in was called on an input the specified wiring never gives it (the grader says so)."""


_MINE: list = [0, []]          # sys.modules' size when the submission's modules were last listed, and them


def _modules_of(submission: str) -> list:
    """The loaded modules that come from the submission's folder (listed again when more were loaded)."""
    if _MINE[0] != len(sys.modules):
        _MINE[:] = [len(sys.modules), [m for m in list(sys.modules.values())
                                       if (getattr(m, "__file__", None) or "").startswith(submission + os.sep)]]
    return _MINE[1]


def _stand_ins(names: dict, submission: str, ask) -> list:
    """Bind, by identity, every global of the submission's modules (and every attribute of its component
    modules) that IS one of the student's functions ``names`` (function -> module) to a stand-in that asks
    the grader for its value (``ask(function, args, kwargs)``): only the wiring of the function under test
    runs as the student wrote it. The grader decides every answer from the arguments it is sent: nothing in
    this process (which the student's code may have patched) could make a wrong call get a right value.
    Returns what to put back."""
    mine = _modules_of(submission)
    undo = []
    for function, module_name in names.items():
        module = sys.modules.get(module_name)
        original = getattr(module, function, None) if module is not None else None
        if original is None or not callable(original):
            continue

        def stand_in(*args, _function=function, **kwargs):
            return ask(_function, list(args), kwargs)

        stand_in.__name__ = stand_in.__qualname__ = function
        for m in mine:
            for key, value in list(vars(m).items()):
                if value is original:
                    undo.append((m, key, value))
                    setattr(m, key, stand_in)
    return undo


def _asker(request: dict, requests, replies):
    """``ask(function, args, kwargs)``: the grader's answer for a stand-in's call, over the worker's channel."""
    asked = [0]

    def ask(function: str, args: list, kwargs: dict):
        asked[0] += 1
        if asked[0] > MAX_STANDIN_CALLS:
            raise RuntimeError(f"{function}() was called more than {MAX_STANDIN_CALLS} times")
        try:
            frames = encode({"id": request["id"], "standin": function, "args": args, "kwargs": kwargs})
        except WireError as exc:
            raise TypeError(f"{function}() was called with a value the grader cannot read ({exc})") from None
        write_frames(replies, frames)
        answer = read_message(requests)
        if type(answer) is not dict or answer.get("id") != request["id"]:
            raise SystemExit("the grader's answer is out of step")
        if not answer.get("ok"):
            raise NotSpecified(answer.get("error", ""))
        return answer["value"]

    return ask


def _call(request: dict, requests=None, replies=None) -> dict:
    if "import" in request:                              # the grader imports each module first, on its own budget
        module = _import(request["import"])
        return module if type(module) is dict else {"ok": True, "value": None}
    module_name, function = request["module"], request["function"]
    module = _import(module_name)
    if type(module) is dict:
        return module
    fn = getattr(module, function, None)
    if not callable(fn):
        return {"ok": False, "kind": "missing_function", "error": f"{module_name}.py has no function {function}()"}
    args, kwargs = request["args"], request["kwargs"]
    undo = []
    if request.get("standins"):
        for name in set(request["standins"].values()):   # the modules the stand-ins replace functions of
            _import(name)
        undo = _stand_ins(request["standins"], sys.path[0], _asker(request, requests, replies))
    random.seed(SEED)
    np.random.seed(SEED)
    started = time.perf_counter()
    try:
        value = fn(*args, **kwargs)
    except BaseException as exc:
        if isinstance(exc, NotSpecified):
            return {"ok": False, "kind": "not_specified", "error": str(exc)[:500]}
        if isinstance(exc, NotImplementedError):
            return {"ok": False, "kind": "not_implemented",
                    "error": f"{function}() is not implemented yet (it raises NotImplementedError)"}
        # Shown by public tests only (a hidden test words its message from "kind" alone).
        return {"ok": False, "kind": "raised", "error": f"{function}() raised {_name(exc)}",
                "builtins": _builtin_bases(exc),
                "traceback": f"{_describe(exc)}\n{_student_frames(exc.__traceback__)}".rstrip()}
    finally:
        for where, key, original in undo:
            setattr(where, key, original)
    reply = {"ok": True, "value": value, "seconds": time.perf_counter() - started}
    if request.get("return_inputs"):
        reply["inputs"] = [args, kwargs]
    return reply


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
    if limits.get("modules"):
        sys.meta_path.insert(0, _Placeholders(limits["modules"], submission))
    for module, why in limits.get("failed_imports", {}).items():    # they timed out or crashed a worker before
        _FAILED_IMPORTS[module] = {"ok": False, "kind": "import_error", "error": why}
    if limits.get("tmp_inodes"):
        _private_tmp(limits["tmp_bytes"], limits["tmp_inodes"])
    _drop_privileges(limits.get("drop_uid"), limits.get("drop_gid"))
    _limit(limits)
    if limits.get("seccomp"):
        _filter_syscalls(limits["seccomp"])
    while True:
        try:
            request = read_message(requests)
        except EOFError:
            return
        cpu = time.process_time()
        reply = _call(request, requests, replies)
        reply["cpu"] = time.process_time() - cpu         # what the grader uses where it cannot measure it
        for stream in (sys.__stdout__, sys.__stderr__, sys.stdout, sys.stderr):
            try:
                stream.flush()
            except BaseException:
                pass
        # Where the log ends after this call: the grader shows each call what it printed, also when it
        # reads this reply after later calls have run (calls sent ahead).
        meta = {"id": request.get("id"), "log": _log_end()}
        try:
            frames = encode({**reply, **meta})
        except WireError as exc:
            frames = encode({"ok": False, "kind": exc.kind, "error": f"{request.get('function')}() {exc}", **meta,
                             "cpu": reply["cpu"]})
        except BaseException as exc:                   # a value whose walk ran student code and failed
            frames = encode({"ok": False, "kind": "bad_type", **meta, "cpu": reply["cpu"],
                             "error": f"{request.get('function')}() returned a value that cannot be read: "
                                      f"{_describe(exc)}"})
        write_frames(replies, frames)


def _log_end() -> int | None:
    """The size of the log (fd 2), or None when the student's code moved fd 2 elsewhere."""
    try:
        return os.fstat(2).st_size
    except BaseException:
        return None


# ---------------------------------------------------------------- the zygote: warm workers by fork

def _kill_all(in_pid_namespace: bool, children: set[int], owner: int | None = None) -> bool:
    """Kill every worker and everything they started; in a pid namespace that is every process but
    its init and this one, so children that called setsid() go too; outside one, with the workers
    running as a user of their own (``owner``), every process of that user. False if some survive 5 s."""
    if not in_pid_namespace:
        for pid in children:
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass
        if owner:
            for name in os.listdir("/proc") if os.path.isdir("/proc") else []:
                try:
                    if name.isdigit() and os.stat(f"/proc/{name}").st_uid == owner:
                        os.kill(int(name), signal.SIGKILL)
                except OSError:
                    pass
        return True
    me = os.getpid()
    deadline = time.monotonic() + 5
    for pid in children:                                 # the workers: wait until they die (not reaped yet)
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
        except OSError:
            pass
    while time.monotonic() < deadline:
        alive = []
        for name in os.listdir("/proc"):
            if name.isdigit() and int(name) not in (1, me):
                try:
                    os.kill(int(name), signal.SIGKILL)   # the whole thread group, zombie leader or not
                    with open(f"/proc/{name}/stat", "rb") as f:
                        zombie = f.read().rsplit(b")", 1)[1].split()[0] == b"Z"
                    if not zombie or len(os.listdir(f"/proc/{name}/task")) > 1:
                        alive.append(name)               # a zombie leader with live threads is alive
                except (OSError, IndexError):
                    pass
        if not alive:
            return True
        time.sleep(0.0005)
    return False


def _remove_ipc(owner: int | None) -> None:
    """Remove every System V shared memory segment, semaphore set and message queue in the sandbox's
    own IPC namespace: they outlive the workers that made them, and would carry data (and memory past
    RLIMIT_AS) to the next student. Done as ``owner`` (the workers' uid) when it is not ours, since
    IPC_RMID needs the owner or CAP_SYS_ADMIN. Only ever called in the bwrap sandbox (``--unshare-ipc``):
    on the host it would remove other programs' objects."""
    found = []
    for kind in ("shm", "sem", "msg"):
        try:
            with open(f"/proc/sysvipc/{kind}") as table:
                found += [(kind, int(line.split()[1])) for line in table.read().splitlines()[1:] if line.strip()]
        except (OSError, ValueError, IndexError):
            pass
    if not found:
        return
    import ctypes

    as_owner = owner is not None and owner != os.getuid()
    if as_owner:
        pid = os.fork()
        if pid:
            os.waitpid(pid, 0)
            return
    try:
        if as_owner:
            os.setgroups([])
            os.setgid(owner)
            os.setuid(owner)
        libc = ctypes.CDLL(None, use_errno=True)
        IPC_RMID = 0
        for kind, ident in found:
            if kind == "shm":
                libc.shmctl(ident, IPC_RMID, None)
            elif kind == "sem":
                libc.semctl(ident, 0, IPC_RMID)
            else:
                libc.msgctl(ident, IPC_RMID, None)
    finally:
        if as_owner:
            os._exit(0)


def _private_tmp(size: int, inodes: int) -> None:
    """Give this process a mount namespace of its own with a fresh tmpfs on /tmp, capped in bytes and in
    inodes (tmpfs counts no bytes for an empty folder: a flood of them is stopped by the inode cap). It
    dies with the last process in the namespace, so nothing is left to clean up for the next worker.

    :raises OSError: the kernel refused (the zygote checks at start that it works)."""
    c = _libc()
    CLONE_NEWNS, MS_NOSUID, MS_NODEV, MS_REC, MS_PRIVATE = 0x20000, 2, 4, 1 << 14, 1 << 18
    if c.libc.unshare(CLONE_NEWNS) != 0 or c.libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None) != 0 \
            or c.libc.mount(b"tmpfs", b"/tmp", b"tmpfs", MS_NOSUID | MS_NODEV,
                            f"size={size},nr_inodes={inodes},mode=1777".encode()) != 0:
        raise OSError(c.ctypes.get_errno(), "could not mount a private /tmp")


def _child(ctrl, fds: list[int], request: dict) -> None:
    """In a freshly forked worker: take the channel as stdin/stdout and the log as stderr, close every
    other descriptor (the zygote's control socket included), then serve the grader."""
    try:
        ctrl.detach()
        channel, log = fds
        _set_parent_death_signal()
        os.setsid()
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        os.dup2(channel, 0)
        os.dup2(channel, 1)
        os.dup2(log, 2)
        os.closerange(3, 1 << 16)
        os.chdir(request["dir"])
        os.environ["HOME"] = request["dir"]
        os.environ["TMPDIR"] = request["limits"]["tmp"]
        main(["worker", request["dir"], json.dumps(request["limits"])])
    finally:
        os._exit(0)


def _can_mount_private_tmp() -> bool:
    """Fork a child that mounts a private /tmp (as every worker will) and say whether it worked."""
    pid = os.fork()
    if pid == 0:
        try:
            _private_tmp(1 << 20, 16)
            os._exit(0)
        except BaseException:
            os._exit(1)
    return os.waitpid(pid, 0)[1] == 0


def zygote(in_pid_namespace: bool) -> None:
    """Serve the grader's control socket (fd 0, SOCK_SEQPACKET, one JSON message a packet):
    ``ping`` (the answer says whether each worker can have a private /tmp), ``spawn`` forks a worker on
    the passed channel and log descriptors (numpy already imported, no student code loaded), ``kill``
    kills every worker. Each answer echoes its request's ``id``; each worker's exit code is reported
    back unasked (``exit``, no id)."""
    import select
    import socket

    import resource  # noqa: F401  for _limit: loaded once here, not in every worker
    _prepare_start({})                                   # ctypes and the C library, for every worker
    _set_parent_death_signal()
    ctrl = socket.socket(fileno=0)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    children: set[int] = set()
    owner = None                                         # the workers' uid, from the last spawn

    def send(message: dict) -> None:
        ctrl.send(json.dumps(message).encode())

    def reap() -> None:
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if pid in children:
                children.discard(pid)
                send({"op": "exit", "pid": pid, "code": os.waitstatus_to_exitcode(status)})

    while True:
        ready, _, _ = select.select([ctrl, wake_r], [], [])
        if wake_r in ready:
            os.read(wake_r, 4096)
            reap()
        if ctrl not in ready:
            continue
        data, fds, _, _ = socket.recv_fds(ctrl, 1 << 16, 2)
        if not data:                                     # the grader is gone: take the workers along
            _kill_all(in_pid_namespace, children)
            return
        request = json.loads(data)
        ident = request.get("id")
        if request["op"] == "spawn":
            owner = request["limits"].get("drop_uid")
            _prepare_start(request["limits"])
            pid = os.fork()
            if pid == 0:
                _child(ctrl, fds, request)
            for fd in fds:
                os.close(fd)
            children.add(pid)
            send({"op": "spawned", "id": ident, "pid": pid})
        elif request["op"] == "ping":
            send({"op": "pong", "id": ident, "pid": os.getpid(),
                  "private_tmp": in_pid_namespace and _can_mount_private_tmp()})
        elif request["op"] == "kill":
            clean = _kill_all(in_pid_namespace, children, None if in_pid_namespace or owner == os.getuid() else owner)
            reap()
            if in_pid_namespace:                         # (each worker's /tmp went with its mount namespace)
                _remove_ipc(owner)                       # its own IPC namespace: no segment left over
            send({"op": "killed", "id": ident, "clean": clean})


if __name__ == "__main__":
    if sys.argv[1:2] == ["--zygote"]:
        zygote(sys.argv[2] == "pidns")
    else:
        main(sys.argv)
