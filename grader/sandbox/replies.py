"""What a worker's reply may be and what a failed call means: the well-formed check, the kinds of
failure in the grader's own words, and the death of a worker (signal, NTSTATUS code, exit).
"""

from __future__ import annotations

import builtins
import signal
from typing import Any

from grader.errors import StudentError

BUILTIN_EXCEPTIONS = frozenset(
    name
    for name, value in vars(builtins).items()
    if isinstance(value, type) and issubclass(value, BaseException)
)
KINDS = {"import_error", "missing_function", "not_implemented", "raised", "bad_type", "too_large"}


SHOWN_TEXT = 2000  # characters of the worker's own error text kept (public tests only)


def _words(kind: str, module: str, function: str) -> str:
    """What a failed call's ``kind`` means, in the grader's own words: all a hidden test shows of it
    (the worker's text is the student's process's, which could carry anything, a hidden input
    included)."""
    return {
        "import_error": f"importing {module}.py failed",
        "missing_function": f"{module}.py has no function {function}()",
        "not_implemented": f"{function}() is not implemented yet (it raises NotImplementedError)",
        "raised": f"{function}() raised an exception",
        "bad_type": f"{function}() returned a value that cannot be graded: return a numpy array of "
        "a "
        "numeric dtype, or plain Python numbers",
        "too_large": f"{function}() returned a value that is too large",
    }[kind]


def _well_formed(reply: Any, nonce: str, return_inputs: bool) -> bool:
    """A reply the worker's own code would send for this request (a student could write others)."""
    if type(reply) is not dict or reply.get("id") != nonce or type(reply.get("ok")) is not bool:
        return False
    if reply["ok"]:
        inputs = reply.get("inputs")
        return "value" in reply and (
            not return_inputs
            or (
                type(inputs) is list
                and len(inputs) == 2
                and type(inputs[0]) is list
                and type(inputs[1]) is dict
            )
        )
    builtins = reply.get("builtins", [])
    return (
        reply.get("kind") in KINDS
        and type(reply.get("error")) is str
        and type(reply.get("traceback", "")) is str
        and type(builtins) is list
        and all(type(b) is str and b in BUILTIN_EXCEPTIONS for b in builtins)
    )


# Windows reports a crash as the NTSTATUS code the process died with (an exit status of 0xC0000000
# or
# more, e.g. 3221225477), not as a signal; these are the ones student code meets.
NTSTATUS_CRASHES = {
    0xC0000005: "an access violation",
    0xC00000FD: "a stack overflow",
    0xC0000409: "a stack buffer overrun",
    0xC0000374: "a corrupted heap",
    0xC000001D: "an illegal instruction",
    0xC0000094: "an integer division by zero",
    0xC0000096: "a privileged instruction",
    0xC0000006: "an in-page error",
    0xC0000017: "no memory left",
    0xC000013A: "Ctrl+C",
}


def crash_name(code: int) -> str | None:
    """What killed a process that exited with ``code``, or None when it exited on its own
    (sys.exit).

    Negative: the POSIX signal (``SIGSEGV``). On Windows, an NTSTATUS error code (severity bits 11),
    seen unsigned (3221225477) or as a signed 32-bit number (-1073741819): "an access violation
    (0xC0000005)". An exit status a program chooses is 0-255 on POSIX; on Windows ``sys.exit(-1)``
    gives 0xFFFFFFFF, which is no NTSTATUS code and stays an exit.
    """
    unsigned = code & 0xFFFFFFFF
    if unsigned >> 30 == 0b11 and unsigned != 0xFFFFFFFF and (code > 255 or code < -255):
        return f"{NTSTATUS_CRASHES.get(unsigned, 'a Windows error')} (0x{unsigned:08X})"
    if code < 0:
        try:
            return signal.Signals(-code).name
        except ValueError:
            return f"signal {-code}"
    return None


def oom_kills() -> int | None:
    """How many processes the kernel's out-of-memory killer has killed since the machine started
    (Linux's /proc/vmstat; None where it cannot be read): a worker's death by SIGKILL is the
    machine's only when this rose while it ran. The worker's filter closes every route by which its
    own code could have the kernel SIGKILL it
    (:func:`grader.sandbox.seccomp.worker_seccomp_program`)."""
    try:
        with open("/proc/vmstat", "rb") as f:
            for line in f:
                if line.startswith(b"oom_kill "):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return None


def _death(
    function: str, code: int | None, garbled: str | None, module: str = "", seconds: float = 0.0
) -> StudentError:
    """The error for a worker that died or broke its channel: the grader's words for hidden tests,
    the signal or exit status (which the student's code chooses) for public ones."""
    what = f"importing {module}.py" if module else f"{function}()"
    if garbled:
        return StudentError(
            "crashed",
            f"the worker sent a broken reply during {what}",
            public=f"the worker sent a broken reply during {what} ({garbled})",
            seconds=seconds,
        )
    if code is None:
        return StudentError(
            "crashed", f"the worker closed its channel during {what}", seconds=seconds
        )
    name = crash_name(code)
    if name is not None:
        return StudentError(
            "crashed",
            f"crashed during {what}",
            public=f"crashed with {name} during {what}",
            seconds=seconds,
        )
    return StudentError(
        "crashed",
        f"the process exited during {what}: do not call sys.exit or os._exit",
        public=f"the process exited (status {code}) during {what}: do not call sys.exit or "
        "os._exit",
        seconds=seconds,
    )
