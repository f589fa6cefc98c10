"""Stand-ins: grade a function on its own lines, whatever the student's other functions do.

A wiring test (``@pytest.mark.wiring``) calls ``student.wired("block", x, params)``: the student's ``block``
runs in the worker with every other course function it calls (``layernorm``, ``attention``, ``mlp``, ...)
bound to a stand-in (see :func:`grader.sandbox.child.worker._stand_ins`), and each stand-in's value comes from here, the
grader: so a fault inside a component costs points only in that component's problem, and a block that
is wired wrong loses its points however its components are written, including components that
recognise the check (none of their code runs). A function that computes its parts itself, calling none
of them, is judged on its own output.

Where the values come from:

- hidden tests: the reference functions, on whatever the student's function passes them, but for a function whose
  reference computes the function under test (the block's, for an attention: a block called with
  ``gamma_1 = 0, beta_1 = u`` and ``W_1 = W_2 = 0`` is the reference's attention of u), which is refused, and for
  inputs far larger than the test's (:mod:`grader.feedback.callsize`), which the grader would compute itself;
- public tests: the reference's own calls on the test's inputs, and those of the catalogue's variants of
  the function under test (its known wiring mistakes, so that a post-LN block still computes what the
  post-LN variant does, and is named), recorded by ``grade precompute`` in ``feedback.wiring_data`` (a
  student's release has no solutions), matched within a tight tolerance on the arguments bound to the
  reference's signature: any other call is refused (``NotSpecified``), the same in ``grade check`` and in
  ``grade autograde``.

No reference code ever enters the worker; its values for this test's calls do, as they would if the
student's own components were right. In a public test, the values of the reference's own calls go with
the call, sealed (:func:`grader.sandbox.child.protocol.sealed_keys`): the worker opens one only with those
exact arguments, so a function wired like the reference asks the grader nothing, and any other call (a
variant's, a wrong input, a call the reference never makes) is still answered, or refused, here.
A hidden test's calls are all answered here (sealed, they would tell the reference's wiring from others).
"""
from __future__ import annotations

import base64
import copy
import inspect
import json
import secrets
import sys
from pathlib import PurePosixPath
from types import SimpleNamespace
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from grader.errors import GradeError
from grader.feedback import callsize
from grader.feedback.compare import same_array
from grader.feedback.outputs import call_key
from grader.sandbox.child.protocol import WireError, bind, encode as wire_encode, framed, sealed, sealed_keys
from grader.sandbox.replies import NotSpecified

Signature = list[tuple[str, bool, Any]]      # (parameter, has a default, the default)


def signature_of(function: Callable) -> Signature:
    """The parameters of a trusted function, as plain data (stored beside the recorded calls)."""
    return [(p.name, p.default is not inspect.Parameter.empty,
             None if p.default is inspect.Parameter.empty else p.default)
            for p in inspect.signature(function).parameters.values()]


RTOL, ATOL = 1e-6, 1e-9        # how close an argument must be to the specified wiring's to match it


def same(a, b) -> bool:
    """Arguments alike: exact ndarrays of one shape and kind within the stand-ins' tolerance (NaN and inf in
    place), plain data equal."""
    if type(a) is np.ndarray or type(b) is np.ndarray:
        if type(a) is not np.ndarray or type(b) is not np.ndarray or a.shape != b.shape \
                or a.dtype.kind != b.dtype.kind:
            return False
        if a.dtype == b.dtype and a.tobytes() == b.tobytes():    # most often: the very same arithmetic
            return True
        return a.dtype.kind == "f" and same_array(a, b, rtol=RTOL, atol=ATOL)
    if type(a) is dict and type(b) is dict:
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if type(a) in (list, tuple) and type(b) in (list, tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def _never(name: str) -> NotSpecified:
    return NotSpecified(f"{name}() was called on an input the specified wiring never gives it: look at what "
                        f"your code passes to {name}()")


def _plain_data(value: Any) -> bool:
    """JSON can carry it (a signature whose default is a function or a numpy scalar cannot travel)."""
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return False
    return True


def test_key(nodeid: str) -> str:
    """A test's key in the wiring data: its nodeid from the suite's folder on (``test_block.py::test_x``), the
    same in the instructor's checkout (``tests/the-block/public/``) and in a student's release (``tests/public/``)."""
    path, _, rest = nodeid.partition("::")
    return f"{PurePosixPath(path).name}::{rest}"


class Wiring:
    """Where a wiring test's stand-ins get their values.

    :param functions: every student function of the course -> its module.
    :param reference: the reference functions (None in a student's release).
    :param stored: ``feedback.wiring_data`` (:func:`record` for each public wiring test), or None.
    """

    def __init__(self, functions: Mapping[str, str], reference: SimpleNamespace | None, stored: dict | None):
        self.functions = dict(functions)
        self.reference = reference
        self.stored = stored or {"signatures": {}, "tests": {}}
        self._cache: dict[tuple, list[dict]] = {}
        self._sealed: dict[tuple, dict] = {}
        self._bounds: dict[tuple, tuple] = {}
        self._reaches: dict[tuple[str, str], bool] = {}
        self._signatures_cache: dict = {}
        self._salt = secrets.token_bytes(16)

    @classmethod
    def for_course(cls, course, reference: SimpleNamespace | None) -> "Wiring":
        path = course.feedback.wiring_data
        stored = None
        if path is not None and path.is_file():
            try:
                stored = json.loads(path.read_text())
            except (OSError, ValueError) as err:
                raise GradeError(f"{path}: unreadable wiring data: {err}") from None
        return cls(course.functions, reference, stored)

    def stand_ins(self, test: str, public: bool, function: str, args: Sequence[Any],
                  kwargs: Mapping[str, Any], live: bool = False) -> tuple[dict[str, str], Callable, dict]:
        """For the test ``test`` calling the student's ``function(*args, **kwargs)``: the functions to stand
        in for (every other course function), ``answer(name, args, kwargs)``, their values (the calls
        the reference makes on these inputs first: a correct function costs no reference run), and, in a
        public test, those known calls' values sealed for the worker (see :meth:`sealed_answers`; None in a
        hidden test). ``live``: a public test's call that none of those matches gets the reference's value, as in
        a hidden test, where the reference is here (not in a student's release)."""
        replaced = {name: module for name, module in self.functions.items() if name != function}
        if public:
            key = (test, function)
            signatures = self.stored["signatures"]     # (stale or missing: `grade precompute --check` says so)
            if key not in self._cache:                   # decoded once: the same for every student
                stored = self.stored["tests"].get(test_key(test), {}).get(function, {})
                own = [decode(c) for c in stored.get("calls", [])]
                self._cache[key] = own + [decode(c) for c in stored.get("variants", [])]
                # Sealed: a public test's reference calls only. Their values ship in the release's wiring data,
                # which names them as the reference's (a variant's, a known mistake's, is answered here). A
                # hidden test's table would be an oracle: the worker holds the salt, so a block could hash
                # candidate calls and keep the wiring whose calls have answers, where a round trip answers
                # every wiring alike.
                self._sealed[key] = self.sealed_answers(own, {n: signatures[n] for n in replaced if n in signatures})
            known, live = self._cache[key], self.reference if live else None
        else:
            if self.reference is None:
                raise GradeError("the hidden tests' stand-ins need the reference solutions")
            key = (test, call_key(function, args, kwargs))
            known, signatures, live = self._recorded(key, function, args, kwargs), self._signatures(), self.reference
        most = ()
        if live is not None:                             # bounds of this very call (the same for every student)
            call = (test, call_key(function, args, kwargs)) if public else key
            if call not in self._bounds:
                self._bounds[call] = callsize.bounds([args, kwargs], known)
            most = self._bounds[call]

        def answer(name: str, args: list, kwargs: dict) -> Any:
            if name not in replaced:                     # the name is the worker's word (a stand-in's own
                raise _never(name)                       # keyword sets it): never the function under test, nor
                                                         # any other attribute of the reference's namespace
            bound = bind(signatures[name], args, kwargs) if name in signatures else None
            for call in known:
                if call["function"] == name and bound is not None and same(bound, call["bound"]):
                    return copy.deepcopy(call["value"])
            if live is None or not callsize.within([args, kwargs], most):
                raise _never(name)
            if (name, function) not in self._reaches:   # the reference's `name` can compute the function under
                self._reaches[name, function] = callsize.reaches(  # test (the block's, for an attention): its
                    getattr(live, name), getattr(live, function), function, reference_modules(live))  # answer
            if self._reaches[name, function]:            # would be that function's, none of the student's lines
                raise _never(name)
            try:
                return getattr(live, name)(*copy.deepcopy(args), **copy.deepcopy(kwargs))
            except Exception:                                # the student's code passed what it cannot take
                raise _never(name) from None

        return replaced, answer, self._sealed[key] if public else None

    def sealed_answers(self, known: Sequence[dict], signatures: Mapping[str, list]) -> dict:
        """The ``known`` calls' values, for the worker: each sealed with a key only their exact arguments
        give (:func:`~grader.sandbox.child.protocol.sealed_keys`), found by a lookup only they give; the
        boxes in one byte array (one frame). The same for every student: no student's data is in it."""
        signatures = {name: sig for name, sig in signatures.items() if _plain_data(sig)}  # (the worker binds with
        sealed_by_lookup: dict[str, bytes] = {}                                          # them; others are asked)
        for call in known:
            signature = signatures.get(call["function"])
            if signature is None or call["bound"] is None:
                continue
            try:
                lookup, key = sealed_keys(self._salt, call["function"], signature, call["bound"])
                box = sealed(key, framed(wire_encode(call["value"])))
            except (WireError, KeyError):
                continue
            sealed_by_lookup.setdefault(lookup.hex(), box)   # the same arguments: the first call's value,
                                                              # as answer() gives
        index, boxes, size = [], [], 0
        for lookup, box in sorted(sealed_by_lookup.items()):  # in the lookups' order: nothing of the calls'
            index.append([lookup, size, len(box)])
            boxes.append(box)
            size += len(box)
        table = json.dumps({"salt": self._salt.hex(), "signatures": dict(signatures), "index": index})
        return {"table": table, "boxes": np.frombuffer(b"".join(boxes), np.uint8)}     # (a string: one item
                                                                                      # to encode per call)

    def _recorded(self, key: tuple, function: str, args: Sequence[Any], kwargs: Mapping[str, Any]) -> list[dict]:
        """The reference's calls of its other functions in ``function(*args, **kwargs)``, once per test and
        arguments (``key``; the same for every student)."""
        if key not in self._cache:
            self._cache[key] = record(self.reference, reference_modules(self.reference), function, args, kwargs,
                                      self.functions)[1]
        return self._cache[key]

    def _signatures(self) -> dict:
        if not self._signatures_cache:
            self._signatures_cache = {name: signature_of(getattr(self.reference, name)) for name in self.functions}
        return self._signatures_cache


def record(reference: SimpleNamespace, modules: Sequence[Any], function: str, args: Sequence[Any],
           kwargs: Mapping[str, Any], functions: Mapping[str, str],
           call: Callable | None = None) -> tuple[Any, list[dict]]:
    """Run the reference ``function`` (or ``call``, e.g. a catalogued wiring mistake's variant of it) with its
    calls of the other course functions recorded: the value and the calls ``[{"function", "bound",
    "value"}]`` (arguments bound to the callee's signature).

    :param modules: the modules whose globals that ARE a reference function are wrapped while it runs
        (the reference's, the catalogue's), as the worker binds the student's.
    """
    calls: list[dict] = []
    originals = {name: getattr(reference, name) for name in functions if name != function}
    undo = []

    def wrapper(name: str, original: Callable) -> Callable:
        signature = signature_of(original)

        def recorded(*a, **k):
            value = original(*a, **k)
            bound = bind(signature, copy.deepcopy(list(a)), copy.deepcopy(dict(k)))
            calls.append({"function": name, "bound": bound, "value": copy.deepcopy(value)})
            return value
        return recorded

    target = call or getattr(reference, function)
    inner = getattr(target, "func", target)              # a functools.partial's function
    defaults = (inner.__defaults__, inner.__kwdefaults__) if hasattr(inner, "__defaults__") else None
    try:
        stand_ins = {id(original): wrapper(name, original) for name, original in originals.items()}
        for module in modules:               # (an id in stand_ins is that of a function alive in originals)
            for key, found in list(vars(module).items()):
                if id(found) in stand_ins:
                    undo.append((module, key, found))
                    setattr(module, key, stand_ins[id(found)])
        if defaults is not None:                         # a variant may take its components as defaults
            positional, keywords = defaults
            inner.__defaults__ = tuple(stand_ins.get(id(d), d) for d in positional) if positional else positional
            inner.__kwdefaults__ = ({k: stand_ins.get(id(d), d) for k, d in keywords.items()} if keywords
                                    else keywords)
        result = target(*copy.deepcopy(list(args)), **copy.deepcopy(dict(kwargs)))
    finally:
        for module, key, original in undo:
            setattr(module, key, original)
        if defaults is not None:
            inner.__defaults__, inner.__kwdefaults__ = defaults
    return result, calls


def encode(value: Any) -> Any:
    """Plain data to JSON, arrays exactly (dtype, shape, base64 of their bytes)."""
    if isinstance(value, np.ndarray):
        data = np.ascontiguousarray(value)
        return {"$nd": base64.b64encode(data.tobytes()).decode(), "dtype": data.dtype.str, "shape": list(data.shape)}
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, dict):
        return {"$dict": {k: encode(v) for k, v in value.items()}}
    if isinstance(value, (list, tuple)):
        return [encode(v) for v in value]
    return value


def decode(value: Any) -> Any:
    if isinstance(value, dict) and "$nd" in value:
        return np.frombuffer(base64.b64decode(value["$nd"]), np.dtype(value["dtype"])).reshape(value["shape"]).copy()
    if isinstance(value, dict) and "$dict" in value:
        return {k: decode(v) for k, v in value["$dict"].items()}
    if isinstance(value, list):
        return [decode(v) for v in value]
    return value


def wiring_data(recorded: Mapping[str, Mapping[str, Mapping[str, list[dict]]]], reference: SimpleNamespace,
                functions: Mapping[str, str]) -> dict:
    """The JSON data of ``feedback.wiring_data``: for each public wiring test and the function it wires, the
    reference's own calls (``calls``) and those of the catalogue's variants of that function (``variants``),
    and the signatures to bind a stand-in's arguments with."""
    return {"signatures": {name: signature_of(getattr(reference, name)) for name in functions},
            "tests": {test: {function: {kind: [encode(c) for c in calls] for kind, calls in kinds.items()}
                             for function, kinds in by_function.items()}
                      for test, by_function in sorted(recorded.items())}}


def reference_modules(reference: SimpleNamespace) -> list[Any]:
    """The modules the reference functions live in."""
    return [sys.modules[f.__module__] for f in vars(reference).values() if f.__module__ in sys.modules]
