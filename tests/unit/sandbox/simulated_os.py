"""`grade` on Linux with the facilities Windows or macOS lack taken away: the simulated systems of
the student path's lanes (tests/unit/sandbox/test_portable.py).

    python simulated_os.py windows|macos ARGS...    # `grade ARGS...` as on that system

A simulation is not the OS. It takes away what the grader could use and those systems do not have,
so code that reaches for it fails here as it would there; it cannot give Linux what they have
instead (Windows' job objects, NTSTATUS exit codes, its console; macOS's kqueue and libproc), and
the kernel, the C library and Python's own C code underneath stay Linux's. What each lane does, in
the grader's process and in every worker it starts (``sys.executable`` becomes a launcher that
applies the lane before ``worker.py`` runs):

``windows`` (``sys.platform`` and ``os.name`` stay Linux's: Python's own modules choose their code
by them)
- modules ``resource``, ``fcntl``, ``termios``, ``pwd``, ``grp``: importing one raises ImportError;
- ``os``: ``fork``, ``forkpty``, ``register_at_fork``, ``setsid``, ``getsid``, ``setpgid``,
  ``getpgid``, ``killpg``, ``wait3``, ``wait4``, ``waitid``, ``pread``, ``pwrite``, ``statvfs``,
  ``sysconf``, ``O_NOFOLLOW``, ``sched_getaffinity``, ``sched_setaffinity``, ``posix_spawn``,
  ``posix_spawnp``;
- ``signal``: ``SIGKILL``, ``SIGALRM``, ``SIGCHLD``, ``SIGHUP``, ``SIGPIPE``, ``SIGQUIT``,
  ``SIGUSR1``, ``SIGUSR2``, ``SIGXCPU``, ``SIGXFSZ``, ``alarm``, ``setitimer``;
  ``subprocess.Popen.kill`` still works (Windows' is TerminateProcess), sending signal 9 by its
  number;
- ``socket``: ``AF_UNIX``, ``send_fds``, ``recv_fds``, ``CMSG_LEN``, ``CMSG_SPACE``, ``SCM_RIGHTS``;
  ``socketpair`` makes a connected pair of TCP sockets on 127.0.0.1, as Windows' Python does;
- ``select``: ``poll``, ``epoll`` (only ``select.select`` is left; ``selectors`` and ``subprocess``
  pick it);
- ``/proc`` is hidden (below); ``multiprocessing`` starts processes only by "spawn" ("fork" and
  "forkserver" are unknown methods);
- files opened with ``os.open`` are in the C runtime's text mode unless the flags hold
  ``os.O_BINARY`` (which this lane adds, and takes out of the flags before Linux sees them): writing
  one through ``os.write`` or ``os.fdopen`` turns each LF into CR LF, reading one turns CR LF into
  LF and stops at the first Ctrl+Z, as Windows does.

``macos`` (``sys.platform`` is ``"darwin"``, set before the grader is imported, so its code takes
the paths it takes on a Mac; ``os.name`` stays ``"posix"``, as on a Mac)
- ``os``: ``sched_getaffinity``, ``sched_setaffinity``, ``pidfd_open``, ``memfd_create``,
  ``eventfd``, ``pipe2``, ``posix_fadvise``, ``posix_fallocate``;
- ``select.epoll`` (macOS has kqueue, which Linux cannot lend: ``selectors`` picks poll);
- ``/proc`` is hidden (below); ``multiprocessing``'s default start method is "spawn", as on macOS.

``/proc`` hidden: ``open``, ``io.open``, ``os.open``, ``os.stat``, ``os.lstat``, ``os.access``,
``os.listdir``, ``os.scandir`` and ``os.readlink`` (so ``os.path.exists``, ``pathlib`` and
``os.walk``) raise FileNotFoundError for every path under /proc, except when psutil calls them:
psutil stands in for the process tables Windows and macOS give it through their own APIs (it is
imported before anything is taken away, as its Linux part reads /proc and ``os.sysconf``).
"""

from __future__ import annotations

import atexit
import builtins
import errno
import functools
import io
import os
import posixpath
import shutil
import stat
import sys
import tempfile

LANES = ("windows", "macos")
HERE = os.path.dirname(os.path.abspath(__file__))

WINDOWS_MODULES = ("resource", "fcntl", "termios", "pwd", "grp")
WINDOWS_OS = (
    "fork",
    "forkpty",
    "register_at_fork",
    "setsid",
    "getsid",
    "setpgid",
    "getpgid",
    "killpg",
    "wait3",
    "wait4",
    "waitid",
    "pread",
    "pwrite",
    "statvfs",
    "sysconf",
    "O_NOFOLLOW",
    "sched_getaffinity",
    "sched_setaffinity",
    "posix_spawn",
    "posix_spawnp",
)
WINDOWS_SIGNAL = (
    "SIGKILL",
    "SIGALRM",
    "SIGCHLD",
    "SIGHUP",
    "SIGPIPE",
    "SIGQUIT",
    "SIGUSR1",
    "SIGUSR2",
    "SIGXCPU",
    "SIGXFSZ",
    "alarm",
    "setitimer",
)
WINDOWS_SOCKET = ("AF_UNIX", "send_fds", "recv_fds", "CMSG_LEN", "CMSG_SPACE", "SCM_RIGHTS")
WINDOWS_SELECT = ("poll", "epoll")
MACOS_OS = (
    "sched_getaffinity",
    "sched_setaffinity",
    "pidfd_open",
    "memfd_create",
    "eventfd",
    "pipe2",
    "posix_fadvise",
    "posix_fallocate",
)
MACOS_SELECT = ("epoll",)
O_BINARY = 1 << 29  # no flag of Linux's: taken out again before the kernel sees it
CTRL_Z = b"\x1a"


def _drop(module, names) -> None:
    for name in names:
        if hasattr(module, name):
            delattr(module, name)


# --- /proc ----------------------------------------------------------------------------------------


def _under_proc(path) -> bool:
    if isinstance(path, int):
        return False
    try:
        text = os.fsdecode(os.fspath(path))
    except TypeError:
        return False
    text = posixpath.normpath(posixpath.join(os.getcwd(), text))
    return text == "/proc" or text.startswith("/proc/")


def _psutil_asks() -> bool:
    frame = sys._getframe(2)
    for _ in range(6):
        if frame is None:
            return False
        if frame.f_globals.get("__name__", "").startswith("psutil"):
            return True
        frame = frame.f_back
    return False


def _hiding_proc(function, default="."):
    @functools.wraps(function)
    def hidden(*args, **kwargs):
        path = args[0] if args else kwargs.get("path", kwargs.get("file", default))
        if _under_proc(path) and not _psutil_asks():
            raise FileNotFoundError(errno.ENOENT, "No such file or directory (no /proc here)", path)
        return function(*args, **kwargs)

    return hidden


def _hide_proc() -> None:
    for name in ("open", "stat", "lstat", "access", "listdir", "scandir", "readlink"):
        setattr(os, name, _hiding_proc(getattr(os, name)))
    builtins.open = io.open = _hiding_proc(builtins.open)


# --- the C runtime's text mode (Windows) ----------------------------------------------------------

_TEXT_FDS: set[int] = set()


class _TextModeWriter(io.FileIO):
    def write(self, data) -> int:
        super().write(bytes(data).replace(b"\n", b"\r\n"))
        return len(data)


class _TextModeReader(io.RawIOBase):
    """What reading a text-mode descriptor gives: CR LF as LF, nothing after the first Ctrl+Z."""

    def __init__(self, fd: int):
        self._file = io.FileIO(fd, "r")
        self._data: io.BytesIO | None = None

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        if self._data is None:
            raw = self._file.readall() or b""
            self._data = io.BytesIO(raw.split(CTRL_Z, 1)[0].replace(b"\r\n", b"\n"))
        return self._data.readinto(buffer)

    def fileno(self) -> int:
        return self._file.fileno()

    def close(self) -> None:
        self._file.close()
        super().close()


def _text_mode() -> None:
    real_open, real_fdopen, real_write, real_close = os.open, os.fdopen, os.write, os.close

    def open_(path, flags, mode=0o777, *, dir_fd=None):
        fd = real_open(path, flags & ~O_BINARY, mode, dir_fd=dir_fd)
        if not flags & O_BINARY:
            _TEXT_FDS.add(fd)
        return fd

    def fdopen(fd, mode="r", buffering=-1, *args, **kwargs):
        if fd not in _TEXT_FDS or "b" not in mode:
            return real_fdopen(fd, mode, buffering, *args, **kwargs)
        _TEXT_FDS.discard(fd)
        if "r" in mode:
            return io.BufferedReader(_TextModeReader(fd))
        return io.BufferedWriter(_TextModeWriter(fd, mode.replace("b", "").replace("+", "")))

    def write(fd, data):
        if fd in _TEXT_FDS:
            real_write(fd, bytes(data).replace(b"\n", b"\r\n"))
            return len(data)
        return real_write(fd, data)

    def close(fd):
        _TEXT_FDS.discard(fd)
        return real_close(fd)

    os.open, os.fdopen, os.write, os.close = open_, fdopen, write, close
    os.O_BINARY = O_BINARY


# --- sockets (Windows) ----------------------------------------------------------------------------


def _tcp_socketpair(family=None, type=None, proto=0):
    """A connected pair of TCP sockets on 127.0.0.1: what ``socket.socketpair`` is on Windows."""
    import socket

    family = socket.AF_INET if family is None else family
    type = socket.SOCK_STREAM if type is None else type
    if family != socket.AF_INET:
        raise ValueError("Only AF_INET and AF_INET6 socket address families are supported")
    listener = socket.socket(family, type, proto)
    try:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        client = socket.socket(family, type, proto)
        try:
            client.connect(listener.getsockname())
            server, _ = listener.accept()
        except BaseException:
            client.close()
            raise
    finally:
        listener.close()
    return server, client


# --- the lanes ------------------------------------------------------------------------------------


def apply(lane: str, worker: bool = False) -> None:
    """Take away what ``lane``'s system lacks, in this process (``worker``: a worker's, before
    worker.py)."""
    if lane not in LANES:
        raise SystemExit(f"simulated_os: unknown lane {lane!r} (one of {', '.join(LANES)})")
    if not worker:
        try:
            # before anything is taken away: it stands in for the OS's own API
            import psutil  # noqa: F401
        except ImportError:
            pass
    import select
    import signal
    import socket

    _hide_proc()
    if lane == "windows":
        for name in WINDOWS_MODULES:
            sys.modules[name] = None  # `import resource` raises ImportError
        _drop(os, WINDOWS_OS)
        _drop(signal, WINDOWS_SIGNAL)
        _drop(socket, WINDOWS_SOCKET)
        socket.socketpair = _tcp_socketpair
        _drop(select, WINDOWS_SELECT)
        _text_mode()
    else:
        _drop(os, MACOS_OS)
        _drop(select, MACOS_SELECT)
        sys.platform = "darwin"
    import selectors
    import subprocess

    for name in ("EpollSelector", "PollSelector", "DevpollSelector", "KqueueSelector"):
        if not hasattr(select, name.replace("Selector", "").lower()) and hasattr(selectors, name):
            delattr(selectors, name)
    selectors.DefaultSelector = getattr(selectors, "PollSelector", selectors.SelectSelector)
    subprocess._PopenSelector = selectors.DefaultSelector
    if lane == "windows":
        subprocess.Popen.kill = lambda self: self.send_signal(9)
    if not worker:
        import multiprocessing
        from multiprocessing import context

        if lane == "windows":
            for method in ("fork", "forkserver"):
                context._concrete_contexts.pop(method, None)
            multiprocessing.get_all_start_methods = lambda: ["spawn"]
        multiprocessing.set_start_method("spawn", force=True)
        _worker_launcher(lane)


def _worker_launcher(lane: str) -> None:
    """Make ``sys.executable`` a launcher that applies ``lane`` in a worker before its script
    runs."""
    folder = tempfile.mkdtemp(prefix="grade-simulated-")
    atexit.register(shutil.rmtree, folder, True)
    launcher = os.path.join(folder, "python")
    with builtins.open(launcher, "w", encoding="utf-8") as f:
        f.write(
            f"#!{sys.executable} -I\nimport sys\nsys.path.insert(0, {HERE!r})\n"
            "import simulated_os\n"
            f"simulated_os.worker({lane!r})\n"
        )
    os.chmod(launcher, stat.S_IRWXU)
    sys.executable = launcher


def worker(lane: str) -> None:
    """The launcher's part: ``LAUNCHER [-I] [-B] SCRIPT ARGS...`` runs SCRIPT as ``python -I -B``
    would, in ``lane``."""
    import runpy

    args = sys.argv[1:]
    while args and args[0].startswith("-"):
        option = args.pop(0)
        if option == "-B":
            sys.dont_write_bytecode = True
        elif option not in ("-I", "-E", "-s"):
            raise SystemExit(f"simulated_os: the launcher does not take {option}")
    sys.path.remove(HERE)  # nothing of this file for the student's imports
    apply(lane, worker=True)
    sys.argv = args
    runpy.run_path(args[0], run_name="__main__")


def main(argv: list[str]) -> None:
    """``simulated_os.py LANE ARGS...``: ``python -m grader ARGS...`` in ``lane``."""
    import runpy

    sys.modules.setdefault("simulated_os", sys.modules[__name__])
    sys.path[0] = os.getcwd()  # as `python -m`: the working folder first
    apply(argv[1])
    sys.argv = ["grade", *argv[2:]]
    runpy.run_module("grader", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main(sys.argv)
