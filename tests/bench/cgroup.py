"""The CPU time of a command and of everything it starts, sandboxed workers included: the command
runs in a control group of its own (grader.sandbox.cgroups), whose usage counts every process in it,
also those that bubblewrap starts in another pid namespace and that no wait() in the command ever
reaps. Where no control group can be made, the children's rusage is the fallback, and it says so: it
misses what was not waited for."""

from __future__ import annotations

import os
import resource
import subprocess
import time
from pathlib import Path

from grader.sandbox import cgroups


def measured(
    cmd: list[str], cwd: Path, ok: tuple[int, ...] = (0,), **kwargs
) -> tuple[float, float, bool]:
    """Run ``cmd``: (wall seconds, CPU seconds of it and all it started, whether a control group
    counted them).

    :raises SystemExit: the command failed (an exit status not in ``ok``)."""
    group = cgroups.make(f"bench-{os.getpid()}-{time.monotonic_ns()}")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    try:
        proc = subprocess.run(
            cmd,
            cwd=cwd,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            **kwargs,
            preexec_fn=(lambda: group.add(os.getpid())) if group else None,
        )
        wall = time.perf_counter() - started
        if proc.returncode not in ok:
            raise SystemExit(
                f"bench: {' '.join(cmd)} failed ({proc.returncode}): {proc.stderr.decode()[-800:]}"
            )
        if group is not None:
            return wall, group.usage(), True
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        return wall, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime), False
    finally:
        if group is not None:
            group.close()
