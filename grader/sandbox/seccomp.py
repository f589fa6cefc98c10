"""The seccomp filters, written by libseccomp (``pyseccomp``): the bwrap sandbox's (``--seccomp``),
and the one every worker adds to its own process before any student code.
"""

from __future__ import annotations

import errno
import signal
import sys
import tempfile
from functools import lru_cache

# Syscalls the sandbox refuses (EPERM): the kernel keyring (as root the sandbox shares the host's
# user
# keyring of `nobody`, which outlives every run), POSIX message queues (they outlive the workers in
# the
# sandbox's IPC namespace), and reading or tracing another process.
BLOCKED_SYSCALLS = (
    "add_key",
    "request_key",
    "keyctl",
    "mq_open",
    "mq_unlink",
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
)


@lru_cache(maxsize=1)
def _seccomp_program() -> bytes:
    """The BPF program for bwrap's ``--seccomp``, written by libseccomp (``pyseccomp``).

    :raises Exception: libseccomp is missing or unusable (then the bwrap level is not offered).
    """
    import pyseccomp

    rules = pyseccomp.SyscallFilter(pyseccomp.ALLOW)
    for name in BLOCKED_SYSCALLS:
        rules.add_rule(pyseccomp.ERRNO(errno.EPERM), name)
    with tempfile.TemporaryFile() as bpf:
        rules.export_bpf(bpf)
        bpf.seek(0)
        return bpf.read()


# A process's own namespaces and mounts: an uncapped tmpfs of its own would hold memory no limit
# counts (and
# the sandbox's view of the file system is the grader's to make). The worker mounts its private /tmp
# before
# it adds the filter; nothing after it needs any of these.
NAMESPACE_SYSCALLS = (
    "unshare",
    "setns",
    "mount",
    "umount2",
    "pivot_root",
    "chroot",
    "fsopen",
    "fsmount",
    "fsconfig",
    "fspick",
    "move_mount",
    "open_tree",
    "mount_setattr",
    "memfd_create",
    "memfd_secret",
    "timer_create",
)
CLONE_NAMESPACES = (
    0x00020000,
    0x02000000,
    0x04000000,
    0x08000000,
    0x10000000,
    0x20000000,
    0x40000000,
)
F_SETSIG, TIOCSIG = 10, 0x40045436


@lru_cache(maxsize=1)
def worker_seccomp_program() -> bytes | None:
    """The filter every worker adds to its own process before any student code (Linux; None without
    libseccomp or when it cannot load):

    - no SIGKILL by any route the kernel offers: sent (kill, tkill, tgkill, sigqueue, a pidfd),
      asked for as a child's exit signal (clone), as an I/O signal (fcntl F_SETSIG), a timer's
      (timer_create) or a terminal's (ioctl TIOCSIG), and no lowering of its own limits (past a
      lowered CPU limit the kernel SIGKILLs it); a worker's death by SIGKILL then comes from outside
      its code, and is the machine's only on the kernel's word
      (:func:`grader.sandbox.replies.oom_kills`);
    - no namespaces and no mounts of its own (``NAMESPACE_SYSCALLS``; clone3, whose flags a filter
      cannot read, answers ENOSYS, so the C library falls back to clone, whose flags it can), and no
      memory-backed file outside the size-capped /tmp (memfd_create)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import pyseccomp
    except Exception:  # ImportError; RuntimeError when libseccomp is missing
        return None
    rules = pyseccomp.SyscallFilter(pyseccomp.ALLOW)
    eperm = pyseccomp.ERRNO(errno.EPERM)
    for name, arg in (
        ("kill", 1),
        ("tkill", 1),
        ("tgkill", 2),
        ("rt_sigqueueinfo", 1),
        ("rt_tgsigqueueinfo", 2),
        ("pidfd_send_signal", 1),
    ):
        rules.add_rule(eperm, name, pyseccomp.Arg(arg, pyseccomp.EQ, signal.SIGKILL))
    rules.add_rule(eperm, "clone", pyseccomp.Arg(0, pyseccomp.MASKED_EQ, 0xFF, signal.SIGKILL))
    for flag in CLONE_NAMESPACES:
        rules.add_rule(eperm, "clone", pyseccomp.Arg(0, pyseccomp.MASKED_EQ, flag, flag))
    rules.add_rule(pyseccomp.ERRNO(errno.ENOSYS), "clone3")
    rules.add_rule(eperm, "fcntl", pyseccomp.Arg(1, pyseccomp.EQ, F_SETSIG))
    rules.add_rule(eperm, "ioctl", pyseccomp.Arg(1, pyseccomp.EQ, TIOCSIG))
    for name in NAMESPACE_SYSCALLS:
        rules.add_rule(eperm, name)
    rules.add_rule(eperm, "setrlimit")
    rules.add_rule(
        eperm, "prlimit64", pyseccomp.Arg(2, pyseccomp.NE, 0)
    )  # reading a limit stays allowed
    with tempfile.TemporaryFile() as bpf:
        rules.export_bpf(bpf)
        bpf.seek(0)
        return bpf.read()


def _seccomp_file():
    """A temporary file holding the seccomp program, at its start, for one bwrap to read
    (``--seccomp FD``)."""
    bpf = tempfile.TemporaryFile()
    bpf.write(_seccomp_program())
    bpf.seek(0)
    return bpf
