"""The grader's exception family: one place for every error a user can see."""
from __future__ import annotations


class GradeError(Exception):
    """A problem with the grader's input (course.json, a folder, a score file): a one-line message.

    ``exit_code`` is what the CLI exits with.
    """

    exit_code = 2


class StudentError(Exception):
    """The student's code failed to give a value: it raised, timed out, crashed or returned bad data.

    :param kind: a short tag for the score file: ``raised``, ``import_error``, ``missing_function``,
        ``not_implemented``, ``timeout``, ``crashed``, ``bad_type``, ``too_large``, ``budget``.
    :param message: one line a student can act on, e.g. ``"timed out after 5 s in gelu"``.
    """

    def __init__(self, kind: str, message: str, detail: str = "", output: str = ""):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.detail = detail      # the student's traceback lines; may show values, so public tests only
        self.output = output      # what the student's code printed during the call


class Deferred(Exception):
    """Raised by a test whose verdict needs the student's code in a fresh worker, e.g. to check a block's
    wiring with the student's own components, which must know nothing of what the block just ran.

    The runner finishes the test after the submission's other tests: it starts one fresh worker, which
    runs only such checks, and ``check()``'s outcome (returns, raises Mismatch, ...) is the test's verdict.
    One fresh worker a submission, not one a failed test.
    """

    def __init__(self, check):
        super().__init__("finished later, in a fresh worker")
        self.check = check
