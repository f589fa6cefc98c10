"""The grader's exception family: one place for every error a user can see."""

from __future__ import annotations

from enum import IntEnum


class GradeError(Exception):
    """A problem with the grader's input (course.json, a folder, a score file): a one-line message.

    ``exit_code`` is what the CLI exits with.
    """

    exit_code = 2


class StudentError(Exception):
    """The student's code failed to give a value: it raised, timed out, crashed or returned bad
    data.

    :param kind: a short tag for the score file: ``raised``, ``import_error``, ``missing_function``,
        ``not_implemented``, ``timeout``, ``crashed``, ``bad_type``, ``too_large``, ``budget``.
    :param message: one line a student can act on, in the grader's own words only (a hidden test
        shows it), e.g. ``"timed out after 5 s of CPU time in gelu"``.
    :param public: the same with what the student's code chose (an exception's type name, an exit
        status), for public tests only; defaults to ``message``.
    :param seconds: the CPU seconds the failed call took (charged to the time budgets).
    :param builtins: for ``raised``, the built-in exception classes the exception is an instance of,
        by name (``("ValueError", "Exception", "BaseException")``): what ``compare.assert_raises``
        asks.
    """

    def __init__(
        self,
        kind: str,
        message: str,
        detail: str = "",
        output: str = "",
        seconds: float = 0.0,
        public: str = "",
        builtins: tuple[str, ...] = (),
    ):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.public = public or message
        self.detail = detail  # the student's traceback lines; may show values, so public tests only
        self.output = output  # what the student's code printed during the call
        self.seconds = seconds
        self.builtins = builtins
        self.used: tuple[str, ...] | None = None  # the watched modules the call ran code of


class GraderFault(Exception):
    """The grader's own machinery failed while grading a submission: the zygote or a worker's
    channel was lost, a sandbox could not start, the machine (its out-of-memory killer, another
    process) killed a worker, or the grader raised. Never the student's grade: the submission is
    flagged (``status: "grader_error"``), never cached, never exported, and regraded by the next
    run.

    :param message: one sentence for the instructor, e.g. ``"the sandbox's zygote died during
        gelu()"``.
    """


class ExitStatus(IntEnum):
    """What ``grade`` exits with."""

    OK = 0
    FAILED = (
        1  # a test failed (check, validate); a submission got no score file (autograde); a student
    )
    # was left out (export)
    ERROR = 2  # bad input: course.json, a folder, an option; --out in use by another autograde
    # autograde: the grader's own machinery failed on a submission (flagged, rerun regrades it)
    GRADER_ERROR = 3
    INTERRUPTED = (
        130  # autograde: Ctrl-C or SIGTERM (the score files already written are kept), as shells do
    )
