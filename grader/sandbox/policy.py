"""What the sandbox lets a worker see and do: the levels (bwrap, process), the bubblewrap command
line (which files are visible inside), the private copy of a submission, the worker's environment,
and the user a worker runs as without bubblewrap (seccomp: :mod:`grader.sandbox.seccomp`).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from functools import lru_cache
from pathlib import Path

from grader.course.limits import MAX_SUBMISSION_BYTES, MAX_SUBMISSION_FILES
from grader.errors import GradeError, StudentError
from grader.sandbox.seccomp import _seccomp_file

CHILD = Path(__file__).resolve().with_name("child")  # the code that runs inside the sandbox
CHILD_FILES = (
    "worker.py",
    "protocol.py",
    "confine.py",
    "student.py",
    "zygote.py",
)  # all the sandbox sees
WORKER_SCRIPT = CHILD / "worker.py"
BWRAP, PROCESS = "bwrap", "process"
DROP_UID = 65534  # nobody: the worker's uid when the grader runs as root
SANDBOX_TMP_BYTES = 64 << 20  # each worker's private /tmp: bytes,
SANDBOX_TMP_INODES = 4096  # and files and folders (tmpfs counts no bytes for an empty folder)
SITE = "/worker/site"  # where the course's allowed packages appear in the sandbox


def _interpreter() -> str:
    """The base interpreter (not a venv's): the sandbox runs it with ``-S``, so no site-packages is
    on its path."""
    return getattr(sys, "_base_executable", None) or sys.executable


def _runtime_paths() -> list[Path]:
    """Folders the worker needs to see: the interpreter and its standard library."""
    paths = {Path(sys.base_prefix), Path(_interpreter()).resolve().parent.parent}
    return sorted(p for p in paths if not str(p).startswith("/usr/"))


def _hidden_site_dirs(bound: list[Path]) -> list[str]:
    """The base interpreter's site-packages folders inside what the sandbox binds: covered by an
    empty read-only folder, so nothing installed there (pytest, the grader's own libraries) can be
    imported."""
    import site
    import sysconfig

    found = {
        sysconfig.get_paths(vars={"base": sys.base_prefix, "platbase": sys.base_prefix})[key]
        for key in ("purelib", "platlib")
    }
    found |= set(getattr(site, "getsitepackages", lambda: [])()) | {site.getusersitepackages()}
    found |= {
        "/usr/lib/python3/dist-packages",
        f"/usr/local/lib/python3.{sys.version_info[1]}/dist-packages",
    }
    roots = [Path("/usr")] + bound
    return sorted(
        d for d in found if os.path.isdir(d) and any(Path(d).is_relative_to(r) for r in roots)
    )


@lru_cache(maxsize=8)
def allowed_packages(names: tuple[str, ...]) -> dict[str, Path]:
    """The files of the course's allowed packages, by the name they get under SITE: each package's
    folder (or single module) as this interpreter imports it, and its wheel's bundled libraries
    (``numpy.libs``)."""
    import importlib.util

    found: dict[str, Path] = {}
    for name in names:
        spec = importlib.util.find_spec(name)
        if (
            spec is None
            or spec.origin in (None, "built-in", "frozen")
            and not spec.submodule_search_locations
        ):
            continue  # not installed here: importing it fails as usual
        place = (
            Path(next(iter(spec.submodule_search_locations)))
            if spec.submodule_search_locations
            else Path(spec.origin)
        )
        found[place.name] = place
        libs = place.with_name(f"{name}.libs")
        if libs.is_dir():
            found[libs.name] = libs
    return found


def _bwrap_command(
    copy: Path,
    python: list[str],
    drop_uid: bool,
    seccomp_fd: int,
    inside: str = "/submission",
    imports: tuple[str, ...] = ("numpy",),
) -> list[str]:
    """The bubblewrap command line: a mount namespace holding only /usr, the Python runtime (its
    site-packages covered), the course's allowed packages (``imports``, at SITE), the worker script
    and ``copy`` (the submission's private copy, or the spool of private copies, at ``inside``), all
    read-only; new pid, net, ipc and uts namespaces; a size-capped /tmp (each worker mounts a
    private one of its own over it, hence CAP_SYS_ADMIN, which the worker drops before any student
    code); the seccomp program read from ``seccomp_fd`` (pass it to the child); killed with its
    parent."""
    cmd = [
        "bwrap",
        "--seccomp",
        str(seccomp_fd),
        "--unshare-pid",
        "--unshare-net",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--die-with-parent",
        "--new-session",
        "--ro-bind",
        "/usr",
        "/usr",
        "--perms",
        "1777",
        "--size",
        str(SANDBOX_TMP_BYTES),
        "--tmpfs",
        "/tmp",
    ]  # before a runtime in /tmp
    for name in ("bin", "lib", "lib64", "sbin"):
        if os.path.islink(f"/{name}"):
            cmd += ["--symlink", os.readlink(f"/{name}"), f"/{name}"]
    made: set[Path] = set()
    for path in _runtime_paths():
        for parent in reversed(path.parents[:-1]):  # bwrap would make missing parents 0700
            if parent not in made:
                cmd += ["--perms", "0755", "--dir", str(parent)]
                made.add(parent)
        cmd += ["--ro-bind", str(path), str(path)]
    for hidden in _hidden_site_dirs(_runtime_paths()):
        cmd += ["--tmpfs", hidden, "--remount-ro", hidden]
    cmd += [
        "--perms",
        "0755",
        "--dir",
        "/worker",
        "--perms",
        "0755",
        "--dir",
        SITE,
        *[
            arg
            for name in CHILD_FILES
            for arg in ("--ro-bind", str(CHILD / name), f"/worker/{name}")
        ],
    ]
    for name, place in allowed_packages(tuple(imports)).items():
        cmd += ["--ro-bind", str(place), f"{SITE}/{name}"]
    cmd += [
        "--ro-bind",
        str(copy),
        inside,
        "--chdir",
        inside,
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--cap-add",
        "CAP_SYS_ADMIN",
    ]
    if drop_uid:  # root: keep only what the worker needs to drop to `nobody` itself
        cmd += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    else:  # not root: a user namespace maps us in
        cmd += ["--unshare-user"]
    return cmd + python


# What every worker at the bwrap level does first: mount a private /tmp of its own (a kernel or a
# security module may allow bwrap's namespaces and still refuse that mount).
PROBE = "import sys; sys.path[:0] = ['/worker']; import confine; confine._private_tmp(1 << 20, 8)"


@lru_cache(maxsize=1)
def bwrap_unusable() -> str | None:
    """Why this machine offers no bwrap level, in a few words; None when it does (a worker's start
    works)."""
    if not sys.platform.startswith("linux") or shutil.which("bwrap") is None:
        return "bubblewrap is not installed"
    try:
        bpf = _seccomp_file()
    except Exception as err:  # pyseccomp: RuntimeError when libseccomp is missing
        return f"libseccomp cannot be loaded ({err})"
    with bpf, tempfile.TemporaryDirectory(prefix="grade-probe-") as tmp:  # the zygote checks numpy
        python = [_interpreter(), "-I", "-S", "-c", PROBE]
        cmd = _bwrap_command(Path(tmp), python, os.geteuid() == 0, bpf.fileno())
        try:
            proc = subprocess.run(
                cmd,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=30,
                pass_fds=(bpf.fileno(),),
            )
        except (OSError, subprocess.TimeoutExpired) as err:
            return f"bwrap could not start ({err})"
    said = proc.stderr.decode(errors="replace").strip().splitlines()
    return (
        f"bwrap cannot run here ({said[-1] if said else f'exit status {proc.returncode}'})"
        if proc.returncode
        else None
    )


def available_levels() -> list[str]:
    """The isolation levels this machine offers, strongest first: ``bwrap`` (Linux with bubblewrap),
    ``process``."""
    return ([BWRAP] if bwrap_unusable() is None else []) + [PROCESS]


def fallback_note() -> str | None:
    """The one line a command taking the strongest level says when bubblewrap is installed but
    cannot be used (no libseccomp, a namespace or mount refused): what isolation is in effect
    instead. None when bwrap works or is not installed (a student's laptop, where process isolation
    is what is expected)."""
    why = bwrap_unusable()
    if why is None or shutil.which("bwrap") is None:
        return None
    return f"note: {why}: the code runs with process isolation only (rlimits), not in bwrap"


def describe(level: str) -> str:
    """The ``sandbox`` field of a score file: what isolated the student's code."""
    if level == BWRAP:
        who = f"uid {DROP_UID}" if os.geteuid() == 0 else "user namespace"
        return f"bwrap (mount, pid, net, ipc, uts namespaces; {who}; rlimits)"
    return "process (rlimits)" if os.name == "posix" else "process"


MEMORY = Path("/dev/shm")  # a tmpfs on Linux
MEMORY_FREE = 256 << 20  # bytes it must have free to be used


def scratch(fallback: Path | None) -> Path | None:
    """Where a zygote keeps its spool of private copies: in memory where the machine
    has a tmpfs to spare (a submission's copy made and deleted there costs a sixth of the CPU it
    costs on disk, and nothing waits on the journal), else ``fallback``."""
    try:
        free = os.statvfs(MEMORY)
        if os.access(MEMORY, os.W_OK | os.X_OK) and free.f_bavail * free.f_frsize >= MEMORY_FREE:
            return MEMORY
    except OSError:
        pass
    return fallback


def private_copy(submission: Path, into: Path) -> Path:
    """Copy the submission's regular files (no symlinks, capped in count and size) into
    ``into/submission``.

    :raises StudentError: ``too_large`` when the submission exceeds the caps.
    """
    target = into / "submission"
    target.mkdir()
    count = size = 0
    for root, dirs, files in os.walk(submission, followlinks=False):
        dirs[:] = [
            d
            for d in dirs
            if d not in ("__pycache__", ".git") and not os.path.islink(os.path.join(root, d))
        ]
        rel = Path(root).relative_to(submission)
        (target / rel).mkdir(exist_ok=True)
        for name in files:
            src = Path(root) / name
            if src.is_symlink() or not src.is_file():
                continue
            count += 1
            size += src.stat().st_size
            if count > MAX_SUBMISSION_FILES or size > MAX_SUBMISSION_BYTES:
                raise StudentError(
                    "too_large",
                    f"the submission has more than {MAX_SUBMISSION_FILES} files "
                    f"or {MAX_SUBMISSION_BYTES >> 20} MiB",
                )
            try:
                shutil.copyfile(src, target / rel / name)
            except OSError as err:
                raise StudentError(
                    "unreadable", f"could not read {rel / name}: {err.strerror}"
                ) from None
            (target / rel / name).chmod(0o644)  # readable by the sandbox's unprivileged user
        (target / rel).chmod(0o755)
    return target


def _worker_env(home: str, tmp: str) -> dict[str, str]:
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": home,
        "TMPDIR": tmp,
        "PYTHONHASHSEED": "0",
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "LANG": "C.UTF-8",
    }
    for key in ("SYSTEMROOT", "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):  # Windows needs SYSTEMROOT
        if key in os.environ:
            env[key] = os.environ[key]
    return env


def run_as_ids(user: str | None, level: str) -> tuple[int, int] | None:
    """The (uid, gid) of ``user``, whom workers run as at the ``process`` level when no bubblewrap
    can run (a Gradescope container): the grader runs as root and hides what the student must not
    read or write from that user; every process of it is killed after each submission.

    :raises GradeError: ``user`` is unknown, is root, or is asked for at the ``bwrap`` level or by a
        grader that is not root (it could not switch users).
    """
    if user is None:
        return None
    import pwd

    if level != PROCESS or os.name != "posix" or os.geteuid() != 0:
        raise GradeError(
            "--run-as needs the process level (--sandbox process --unsafe) and a grader running as "
            "root"
        )
    try:
        entry = pwd.getpwnam(user)
    except KeyError:
        raise GradeError(f"--run-as {user}: no such user") from None
    if entry.pw_uid == 0:
        raise GradeError(f"--run-as {user}: must not be root")
    _check_runs_as(entry.pw_uid, entry.pw_gid, user)
    return entry.pw_uid, entry.pw_gid


@lru_cache(maxsize=4)
def _check_runs_as(uid: int, gid: int, user: str) -> None:
    """:raises GradeError: ``user`` cannot run this Python with numpy (e.g. it is installed under
    /root)."""
    try:
        proc = subprocess.run(
            [sys.executable, "-I", "-c", "import numpy, tempfile"],
            user=uid,
            group=gid,
            extra_groups=[],
            cwd="/",
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=60,
        )
        ok = proc.returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        ok = False
    if not ok:
        raise GradeError(
            f"--run-as {user}: that user cannot run {sys.executable} with numpy; install Python "
            "and "
            "the grader's requirements where every user can read them"
        )
