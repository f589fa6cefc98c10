"""A control group around a zygote and everything it starts (Linux): the CPU time of a worker's
whole tree, the grandchildren it double-forks included (no wait() ever reaps them, so no process's
clock counts them), and every process of it to kill, setsid'd daemons included.

Made where this process may: cgroup v2 (the unified hierarchy, or its mount beside v1's), under this
process's own group (root, or a delegated user slice); else v1's cpuacct as root. Elsewhere
:func:`make` gives None and the worker's own clock counts, with the zygote as the subreaper of what
its workers leave behind.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

ROOTS = (Path("/sys/fs/cgroup"), Path("/sys/fs/cgroup/unified"))  # cgroup v2, pure or beside v1
V1_CPU = Path("/sys/fs/cgroup/cpuacct")


class Group:
    """One control group: ``folder`` in the cgroup file system, its usage read from
    ``usage_file``."""

    def __init__(self, folder: Path, usage_file: str):
        self.folder = folder
        self._fd = os.open(folder / usage_file, os.O_RDONLY)
        self._v2 = usage_file == "cpu.stat"

    def add(self, pid: int) -> None:
        """Move process ``pid`` in (what it starts from then on is in too). :raises OSError:
        refused."""
        (self.folder / "cgroup.procs").write_text(str(pid))

    def usage(self) -> float:
        """CPU seconds used by every process that was ever in the group."""
        data = os.pread(self._fd, 4096, 0)
        if self._v2:  # "usage_usec N" is cpu.stat's first line
            return int(data.split(b"\n", 1)[0].split()[1]) / 1e6
        return int(data) / 1e9

    def pids(self) -> list[int]:
        try:
            return [int(p) for p in (self.folder / "cgroup.procs").read_text().split()]
        except (OSError, ValueError):
            return []

    def kill_all_but(self, keep: int | None) -> None:
        """SIGKILL every process in the group but ``keep`` (the zygote)."""
        for pid in self.pids():
            if pid != keep:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass

    def close(self) -> None:
        os.close(self._fd)
        for _ in range(100):  # its last processes may still be leaving
            try:
                self.folder.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(0.01)


def _own(root: Path, v2: bool) -> Path | None:
    """This process's group in the hierarchy mounted at ``root``."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if (v2 and controllers == "") or (not v2 and "cpuacct" in controllers.split(",")):
            return root / path.lstrip("/")
    return None


def make(name: str) -> Group | None:
    """A new group named ``name`` under this process's own, or None where none can be made."""
    candidates = [(root, True) for root in ROOTS if (root / "cgroup.procs").is_file()]
    candidates += [(V1_CPU, False)] if (V1_CPU / "cpuacct.usage").is_file() else []
    for root, v2 in candidates:
        parent = _own(root, v2)
        if parent is None or not os.access(parent, os.W_OK):
            continue
        folder = parent / name
        try:
            folder.mkdir()
            return Group(folder, "cpu.stat" if v2 else "cpuacct.usage")
        except OSError:
            try:
                folder.rmdir()
            except OSError:
                pass
    return None
