"""What one submission may use: course.json ``limits`` (:class:`Limits`) and the size of a hand-in.

Plain data and stdlib only: reading course.json imports neither the sandbox nor numpy.
"""
from __future__ import annotations

from dataclasses import dataclass


MAX_SUBMISSION_FILES = 200
MAX_SUBMISSION_BYTES = 5 << 20


@dataclass(frozen=True)
class Limits:
    """Resource limits for one submission's worker (all from course.json ``limits``).

    Times are CPU seconds of the student's worker (the same on a loaded machine as on an idle one), with
    a wall-clock backstop WALL_FACTOR times larger for code that sleeps or blocks.

    :param call_timeout: CPU seconds for one call.
    :param problem_budget: CPU seconds for all the calls of one problem.
    :param submission_budget: CPU seconds for all the calls of one submission.
    :param memory_mb: address-space limit of the worker, MiB.
    :param output_kb: student output kept per call, KiB.
    :param import_timeout: CPU seconds for importing one of the submission's modules (before its first
        call, on a budget of its own: neither the call's nor the problem's).
    :param import_budget: CPU seconds for all the imports of one submission (a worker restarted after a
        crash imports again).
    :param problem_wall: wall-clock seconds for all the calls of one problem, and ``submission_wall`` for the
        whole submission: code that sleeps or waits uses no CPU, and without them held its grader process for
        as long as it liked (a call's own wall-clock backstop is WALL_FACTOR times its CPU limit).
    :param imports: the packages the student's code may import besides the standard library (course.json
        ``imports``); any other import raises ModuleNotFoundError.
    """

    call_timeout: float = 5.0
    problem_budget: float = 15.0
    submission_budget: float = 120.0
    memory_mb: int = 1024
    output_kb: int = 64
    import_timeout: float = 10.0
    import_budget: float = 30.0
    problem_wall: float = 60.0
    submission_wall: float = 300.0
    imports: tuple[str, ...] = ("numpy",)

    def worker_limits(self) -> dict:
        return {"memory_bytes": self.memory_mb << 20, "file_bytes": 16 << 20, "open_files": 64,
                "cpu_seconds": int(self.submission_budget + self.import_budget) + 10, "processes": 64,
                "imports": list(self.imports)}
