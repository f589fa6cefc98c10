"""The CPU time of a command and of everything it starts, sandboxed workers included: the command runs in a
control group of its own (cgroup v2, or v1's cpuacct), whose usage counts every process in it, also those that
bubblewrap starts in another pid namespace and that no wait() in the command ever reaps. Where no control group
can be made (not root, no cgroup file system), the children's rusage is the fallback, and it says so: it misses
what was not waited for."""
from __future__ import annotations

import os
import resource
import subprocess
import time
from pathlib import Path

V2, V1 = Path("/sys/fs/cgroup"), Path("/sys/fs/cgroup/cpuacct")


def _parent() -> tuple[Path, str] | None:
    """Where a group can be made, and the file with its usage (nanoseconds in v1, microseconds in v2)."""
    if (V2 / "cgroup.controllers").is_file() and os.access(V2, os.W_OK):
        return V2, "cpu.stat"
    if (V1 / "cpuacct.usage").is_file() and os.access(V1, os.W_OK):
        return V1, "cpuacct.usage"
    return None


def _usage(group: Path, name: str) -> float:
    text = (group / name).read_text()
    if name == "cpu.stat":
        return int(next(line.split()[1] for line in text.splitlines() if line.startswith("usage_usec"))) / 1e6
    return int(text) / 1e9


def measured(cmd: list[str], cwd: Path, ok: tuple[int, ...] = (0,), **kwargs) -> tuple[float, float, bool]:
    """Run ``cmd``: (wall seconds, CPU seconds of it and all it started, whether a control group counted them).

    :raises SystemExit: the command failed (an exit status not in ``ok``)."""
    where = _parent()
    group = None
    if where is not None:
        group = where[0] / f"bench-{os.getpid()}-{time.monotonic_ns()}"
        group.mkdir()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    try:
        proc = subprocess.run(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, **kwargs,
                              preexec_fn=(lambda: (group / "cgroup.procs").write_text(str(os.getpid())))
                              if group else None)
        wall = time.perf_counter() - started
        if proc.returncode not in ok:
            raise SystemExit(f"bench: {' '.join(cmd)} failed ({proc.returncode}): {proc.stderr.decode()[-800:]}")
        if group is not None:
            return wall, _usage(group, where[1]), True
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        return wall, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime), False
    finally:
        if group is not None:
            for _ in range(50):                          # its last processes may still be leaving
                try:
                    group.rmdir()
                    break
                except OSError:
                    time.sleep(0.1)
