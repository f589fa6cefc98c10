"""A test's verdict from what it raised: its status, its kind, and the words the student sees (a public
test's values and output; a hidden test's grader-chosen words only)."""
from __future__ import annotations

import pytest

from grader.errors import StudentError
from grader.feedback.mismatch import Mismatch

MAX_SHOWN_OUTPUT = 2000


def verdict(exc: BaseException, public: bool, function_output: str) -> tuple[str, str, str]:
    """(status, kind, output) for a test that raised ``exc``."""
    if isinstance(exc, Mismatch):
        status, kind, text = "failed", "mismatch", exc.full if public else exc.public
    elif isinstance(exc, StudentError):
        status, kind = "error", exc.kind
        text = exc.public + (f"\n{exc.detail}" if exc.detail else "") if public else exc.message
    elif isinstance(exc, AssertionError):
        status, kind, text = "failed", "assertion", (str(exc) or "assertion failed") if public else "assertion failed"
    elif isinstance(exc, pytest.fail.Exception):
        status, kind, text = "failed", "assertion", (exc.msg or "failed") if public else "failed"
    elif isinstance(exc, pytest.skip.Exception):
        status, kind, text = "failed", "skipped", "skipped: a skipped test earns no points"
    else:
        status, kind = "error", "grader_error"         # a suite's own error: its text may hold a student value
        text = f"error in the test itself: {type(exc).__name__}: {exc}" if public else "error in the test itself"
    if public and function_output.strip():
        shown = function_output if len(function_output) <= MAX_SHOWN_OUTPUT else (
            function_output[:MAX_SHOWN_OUTPUT] + "\n[... output cut ...]")
        text += f"\nyour code printed:\n{shown.rstrip()}"
    return status, kind, text
