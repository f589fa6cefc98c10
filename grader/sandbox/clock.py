"""What a worker's requests cost: its CPU clock (read from /proc on Linux, from the OS through
psutil on macOS and Windows: where the student's code cannot forge it), the seconds each reply is
charged, and when a request has run out of time.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any, Callable

from grader.errors import StudentError

WALL_FACTOR = (
    5  # a call may take this many times its CPU limit in wall-clock time (sleeping, blocked)
)
FAST_CALL = (
    0.002  # wall seconds: a reply this soon after the CPU clock's last reading is charged its
)
# wall time (see Meter.charge)


class _CpuClock:
    """CPU seconds (user + system, every thread, and the children it waited for) used by one
    process, read from ``/proc/<pid>/stat`` through a descriptor kept open (Linux). Unforgeable by
    the student's code, unlike anything the worker reports."""

    TICK = (
        os.sysconf("SC_CLK_TCK")
        if hasattr(os, "sysconf") and "SC_CLK_TCK" in os.sysconf_names
        else 100
    )

    def __init__(self, pid: int):
        self._fd = os.open(f"/proc/{pid}/stat", os.O_RDONLY)
        self.last = self()

    def __call__(self) -> float:
        try:
            data = os.pread(self._fd, 1024, 0)
            fields = data.rsplit(b")", 1)[1].split()
            return sum(int(f) for f in fields[11:15]) / self.TICK  # utime, stime, cutime, cstime
        except (OSError, IndexError, ValueError):
            return self.last  # gone: no more CPU

    def close(self) -> None:
        os.close(self._fd)


class _GroupClock:
    """CPU seconds used by every process of a control group (:mod:`grader.sandbox.cgroups`): a
    worker's whole tree, what it double-forked included (a zygote serves one worker at a time)."""

    def __init__(self, group):
        self._group = group
        self.last = self()

    def __call__(self) -> float:
        try:
            return self._group.usage()
        except (OSError, IndexError, ValueError):
            return self.last

    def close(self) -> None:
        pass


def _times(pid: int | str, fields: slice = slice(11, 15)) -> float:
    """CPU seconds of ``/proc/<pid>/stat``'s ``fields`` (utime, stime, cutime, cstime); 0 once it is
    gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return sum(int(v) for v in f.read().rsplit(b")", 1)[1].split()[fields]) / _CpuClock.TICK
    except (OSError, IndexError, ValueError):
        return 0.0


def _children(pid: int) -> list[str]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children", "rb") as f:
            return f.read().decode().split()
    except OSError:
        return []


class _TreeClock(_CpuClock):
    """Where no control group can be made: a worker's CPU seconds, its children's that it has not
    waited for, and those of what it left behind, which the zygote adopts as their subreaper: the
    zygote's other children, live or not yet reaped, and what it has reaped (its children's clock;
    the one worker it serves at a time is reaped only once its calls are over). Deeper descendants
    count once their parents end."""

    def __init__(self, pid: int, zygote: int):
        self._pid, self._zygote = pid, zygote
        super().__init__(pid)

    def __call__(self) -> float:
        own = super().__call__()
        left = [p for p in _children(self._zygote) if p != str(self._pid)] + _children(self._pid)
        return own + _times(self._zygote, slice(13, 15)) + sum(_times(p) for p in left)


class _PortableClock:
    """Where there is no /proc (macOS, Windows): the user + system CPU seconds of the worker and
    of its descendants, as psutil reads them from the OS's own process tables. Windows' venv
    python.exe is a launcher whose child is the interpreter that runs the worker; a process the
    student's code starts counts too. The tree is walked again at most every RESCAN seconds (a walk
    reads the whole process table); a process that ended keeps its last reading, so the clock
    never goes back."""

    RESCAN = 0.1

    def __init__(self, process):
        self._root = process
        self._seen: dict[int, list] = {}  # pid -> [its psutil.Process, last reading]
        self._walked = float("-inf")
        self.last = 0.0
        self.last = self()

    def __call__(self) -> float:
        import psutil

        now = time.monotonic()
        if now - self._walked >= self.RESCAN:
            self._walked = now
            try:
                tree = [self._root, *self._root.children(recursive=True)]
            except psutil.Error:  # the worker is gone: what it used stays
                tree = []
            for process in tree:
                self._seen.setdefault(process.pid, [process, 0.0])
        for seen in self._seen.values():
            try:
                times = seen[0].cpu_times()
            except psutil.Error:
                continue
            seen[1] = times.user + times.system
        self.last = max(self.last, sum(seconds for _, seconds in self._seen.values()))
        return self.last

    def close(self) -> None:
        pass


def cpu_clock(pid: int | None, group=None, zygote: int | None = None):
    """The clock of a worker: its control group's (``group``), or its own and its zygote's
    children's (``zygote``: their subreaper), or its own (from /proc on Linux, else through psutil);
    None where neither can read it (then the worker's own count)."""
    if group is not None:
        return _GroupClock(group)
    if pid is None:
        return None
    if sys.platform.startswith("linux"):
        try:
            return _TreeClock(pid, zygote) if zygote else _CpuClock(pid)
        except OSError:  # no /proc here: as on macOS and Windows
            pass
    try:
        import psutil
    except ImportError:
        return None
    try:
        return _PortableClock(psutil.Process(pid))
    except psutil.Error:
        return None


class Meter:
    """One running worker's time: its CPU clock (None where it cannot be read: the bwrap level's
    other pid namespace, or a machine without /proc and without psutil) and that clock's last
    reading.

    Times are the worker's CPU seconds where the clock can be read, with a wall-clock backstop
    WALL_FACTOR times larger; elsewhere the worker's own count, and wall-clock time for timeouts.
    """

    def __init__(self, pid: int | None, group=None, zygote: int | None = None):
        self.clock = cpu_clock(pid, group, zygote)
        self.cpu_last = (
            self.clock.last if self.clock else 0.0
        )  # the CPU seconds at the clock's last reading,
        self.clock_read = time.monotonic()  # and its time.monotonic()

    def close(self) -> None:
        if self.clock is not None:
            self.clock.close()

    def since(self, mark: float, start: float) -> float:
        """The worker's CPU seconds since ``mark`` (wall-clock seconds since ``start`` where it
        cannot be read)."""
        return self.clock() - mark if self.clock is not None else time.monotonic() - start

    def wait(
        self,
        next_message: Callable[[float], tuple[str, Any]],
        start: float,
        mark: float,
        limit: float,
        wall: float = float("inf"),
    ) -> tuple[str, Any] | str:
        """The next message (``next_message(deadline)``, which raises :class:`TimeoutError` when
        none came by then), or ``"cpu"``/``"wall"`` when the oldest request ran out of CPU time
        (``limit`` seconds since ``mark``) or of wall-clock time (WALL_FACTOR times that since
        ``start``, at most ``wall``). The CPU clock is read only after ``limit`` seconds of wall
        clock: before that it cannot have run out."""
        wall_end = start + min(limit * (WALL_FACTOR if self.clock is not None else 1), wall)
        deadline = min(start + limit, wall_end)
        while True:
            try:
                return next_message(deadline)
            except TimeoutError:
                now = time.monotonic()
                used = self.since(mark, start)
                if used >= limit:
                    return "cpu"
                if now >= wall_end:
                    return "wall"
                deadline = min(now + max(limit - used, 0.005), wall_end)

    def timed_out(self, what: str, limit: float, how: str) -> StudentError:
        """The error of a request (``what`` it did) that ran out of time ``how`` (see
        :meth:`wait`)."""
        if how == "cpu" and self.clock is not None:
            return StudentError(
                "timeout", f"timed out after {limit:g} s of CPU time in {what}", seconds=limit
            )
        if self.clock is not None:
            return StudentError(
                "timeout",
                f"timed out after {limit * WALL_FACTOR:g} s of wall-clock time in "
                f"{what} (waiting, not computing)",
                seconds=limit,
            )
        return StudentError("timeout", f"timed out after {limit:g} s in {what}", seconds=limit)

    def charge(self, reply: dict, now: float, start: float, mark: float) -> float:
        """The seconds a request that ran from ``start`` to ``now`` (wall) is charged: its CPU time
        since the clock's reading ``mark``; or its wall time when the clock was read less than
        FAST_CALL ago.

        Reading ``/proc`` after each of the ~70 replies of a submission cost about 10 µs each, and
        most of them come back to back (calls sent ahead). Such a call is far shorter than the
        clock's tick (10 ms) and its CPU time on one core at most its wall time; whatever it did use
        stays on the clock, and the next reading charges it. The clock is read at least every
        FAST_CALL, so every slower call (and every call after a pause) is charged its CPU time as
        before, from a reading at most FAST_CALL older than its start: the CPU-time limits keep
        their meaning to well within one tick.
        """
        if self.clock is None:  # no clock: the worker's own count
            reported = reply.get("cpu")
            return reported if type(reported) is float and 0 <= reported < 1e6 else now - start
        if now - self.clock_read < FAST_CALL:
            return now - start
        cpu = self.clock()
        self.cpu_last, self.clock_read = cpu, now
        return cpu - mark
