"""What a worker does to itself before any student code runs (Linux, through ctypes): drop
privileges and capabilities, install the seccomp filter, set its rlimits, mount a private /tmp, die
with its parent. Standard library only; loaded by path by worker.py, in the sandbox.
"""

from __future__ import annotations

import functools
import os
import signal
import sys
from types import SimpleNamespace


@functools.lru_cache(maxsize=1)
def _libc():
    """The C library through ctypes, with the types the worker's start needs (Linux). Loaded once,
    in the zygote before it forks (see :func:`_prepare_start`): each worker inherits it instead of
    paying for ``CDLL``, the ctypes types and the function lookups again (about 0.5 ms a worker)."""
    import ctypes

    class Program(ctypes.Structure):  # struct sock_fprog
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    libc = ctypes.CDLL(None, use_errno=True)
    for name in ("prctl", "capset", "capget", "unshare", "mount"):
        getattr(libc, name)  # looked up (and kept by the CDLL) once
    return SimpleNamespace(
        libc=libc,
        ctypes=ctypes,
        Program=Program,
        CapHeader=ctypes.c_uint32 * 2,
        CapData=ctypes.c_uint32 * 6,
    )


@functools.lru_cache(maxsize=4)
def _seccomp_fprog(program_hex: str):
    """The seccomp program (hex, as the grader sends it) as a ``struct sock_fprog`` and the buffer
    it points to (kept alive with it); made once per program, in the zygote before it forks."""
    c = _libc()
    program = bytes.fromhex(program_hex)
    code = c.ctypes.create_string_buffer(program, len(program))
    return c.Program(len(program) // 8, c.ctypes.addressof(code)), code


def _prepare_start(limits: dict) -> None:
    """In the zygote, before a fork: what every worker's start needs and that is the same for all of
    them."""
    if sys.platform.startswith("linux"):
        _libc()
        if limits.get("seccomp"):
            _seccomp_fprog(limits["seccomp"])


def _drop_privileges(uid: int | None, gid: int | None = None) -> None:
    """As root, become ``uid`` (and ``gid``) with no groups; then hold no capability at all (in the
    sandbox the zygote keeps CAP_SYS_ADMIN to mount each worker's private /tmp; as root CAP_SETUID
    and CAP_SETGID)."""
    if uid is not None and os.getuid() == 0:
        os.setgroups([])
        os.setgid(uid if gid is None else gid)
        os.setuid(uid)
        if os.getuid() != uid or os.geteuid() != uid:
            raise SystemExit("could not drop privileges")
    if sys.platform.startswith("linux"):
        c = _libc()
        c.libc.prctl(47, 4, 0, 0, 0)  # PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL
        header = c.CapHeader(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this thread
        c.libc.capset(header, c.CapData())  # effective, permitted, inheritable: empty
        # Checked with capget (reading /proc/self/status cost a quarter of a millisecond): effective
        # and
        # permitted sets empty, in both words; the ambient set is then empty too (the kernel keeps
        # it a
        # subset of the permitted one).
        held = c.CapData()
        if c.libc.capget(c.CapHeader(0x20080522, 0), held) != 0 or any(
            held[i] for i in (0, 1, 3, 4)
        ):
            raise SystemExit("could not drop capabilities")


def _filter_syscalls(program_hex: str) -> None:
    """Add the grader's seccomp filter (a BPF program libseccomp wrote, in hex) to this process, for
    good."""
    c = _libc()
    fprog, _code = _seccomp_fprog(program_hex)
    PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2
    if (
        c.libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
        or c.libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, c.ctypes.byref(fprog), 0, 0) != 0
    ):
        raise SystemExit("could not install the worker's syscall filter")


def _become_subreaper() -> None:
    """Linux: adopt the orphans of this process's descendants (PR_SET_CHILD_SUBREAPER): what a
    worker leaves behind is reaped here, where the grader reads its CPU time, not by the pid
    namespace's init."""
    if sys.platform.startswith("linux"):
        _libc().libc.prctl(36, 1, 0, 0, 0)


def _set_parent_death_signal() -> None:
    """Linux: be killed when the parent dies (the grader, or for a worker its zygote), so nothing
    outlives it."""
    if sys.platform.startswith("linux"):
        _libc().libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG


def _limit(limits: dict) -> None:
    """Apply the POSIX resource limits the grader asked for (no-op where ``resource`` is
    missing)."""
    try:
        import resource
    except ImportError:  # Windows: the parent's timeouts still hold
        return
    wanted = {
        "RLIMIT_AS": limits.get("memory_bytes"),
        "RLIMIT_FSIZE": limits.get("file_bytes"),
        "RLIMIT_NOFILE": limits.get("open_files"),
        "RLIMIT_CPU": limits.get("cpu_seconds"),
        "RLIMIT_CORE": 0,
    }
    if os.name == "posix" and os.getuid() != 0:  # not enforced for root anyway
        wanted["RLIMIT_NPROC"] = limits.get("processes")
    if hasattr(signal, "SIGXFSZ"):  # past the file-size limit a write fails, no kill
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    for name, value in wanted.items():
        if value is not None and hasattr(resource, name):
            try:
                resource.setrlimit(getattr(resource, name), (int(value), int(value)))
            except (ValueError, OSError):
                pass


def _private_tmp(size: int, inodes: int) -> None:
    """Give this process a mount namespace of its own with a fresh tmpfs on /tmp, capped in bytes
    and in inodes (tmpfs counts no bytes for an empty folder: a flood of them is stopped by the
    inode cap). It dies with the last process in the namespace, so nothing is left to clean up for
    the next worker.

    :raises OSError: the kernel refused (the zygote checks at start that it works)."""
    c = _libc()
    CLONE_NEWNS, MS_NOSUID, MS_NODEV, MS_REC, MS_PRIVATE = 0x20000, 2, 4, 1 << 14, 1 << 18
    if (
        c.libc.unshare(CLONE_NEWNS) != 0
        or c.libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None) != 0
        or c.libc.mount(
            b"tmpfs",
            b"/tmp",
            b"tmpfs",
            MS_NOSUID | MS_NODEV,
            f"size={size},nr_inodes={inodes},mode=1777".encode(),
        )
        != 0
    ):
        raise OSError(c.ctypes.get_errno(), "could not mount a private /tmp")
