"""The zygote's side (``worker.py --zygote``): a warm parent in the sandbox, numpy imported and no
student code ever loaded, that forks one worker per submission on the grader's request and kills
them all, and everything they started, after it. Standard library only; loaded by path by worker.py.
"""

from __future__ import annotations

import json
import os
import signal
import time

# noqa: E402  loaded by worker.py, under this name, before this module
import _worker_confine as confine

_prepare_start, _private_tmp, _set_parent_death_signal = (
    confine._prepare_start,
    confine._private_tmp,
    confine._set_parent_death_signal,
)


def _kill_all(in_pid_namespace: bool, children: set[int], owner: int | None = None) -> bool:
    """Kill every worker and everything they started; in a pid namespace that is every process but
    its init and this one, so children that called setsid() go too; outside one, with the workers
    running as a user of their own (``owner``), every process of that user. False if some survive 5
    s."""
    if not in_pid_namespace:
        for pid in children:
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass
        if owner:
            for name in os.listdir("/proc") if os.path.isdir("/proc") else []:
                try:
                    if name.isdigit() and os.stat(f"/proc/{name}").st_uid == owner:
                        os.kill(int(name), signal.SIGKILL)
                except OSError:
                    pass
        return True
    me = os.getpid()
    deadline = time.monotonic() + 5
    for pid in children:  # the workers: wait until they die (not reaped yet)
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
        except OSError:
            pass
    while time.monotonic() < deadline:
        alive = []
        for name in os.listdir("/proc"):
            if name.isdigit() and int(name) not in (1, me):
                try:
                    os.kill(
                        int(name), signal.SIGKILL
                    )  # the whole thread group, zombie leader or not
                    with open(f"/proc/{name}/stat", "rb") as f:
                        zombie = f.read().rsplit(b")", 1)[1].split()[0] == b"Z"
                    if not zombie or len(os.listdir(f"/proc/{name}/task")) > 1:
                        alive.append(name)  # a zombie leader with live threads is alive
                except (OSError, IndexError):
                    pass
        if not alive:
            return True
        time.sleep(0.0005)
    return False


def _remove_ipc(owner: int | None) -> None:
    """Remove every System V shared memory segment, semaphore set and message queue in the sandbox's
    own IPC namespace: they outlive the workers that made them, and would carry data (and memory
    past RLIMIT_AS) to the next student. Done as ``owner`` (the workers' uid) when it is not ours,
    since IPC_RMID needs the owner or CAP_SYS_ADMIN. Only ever called in the bwrap sandbox
    (``--unshare-ipc``): on the host it would remove other programs' objects."""
    found = []
    for kind in ("shm", "sem", "msg"):
        try:
            with open(f"/proc/sysvipc/{kind}") as table:
                found += [
                    (kind, int(line.split()[1]))
                    for line in table.read().splitlines()[1:]
                    if line.strip()
                ]
        except (OSError, ValueError, IndexError):
            pass
    if not found:
        return
    import ctypes

    as_owner = owner is not None and owner != os.getuid()
    if as_owner:
        pid = os.fork()
        if pid:
            os.waitpid(pid, 0)
            return
    try:
        if as_owner:
            os.setgroups([])
            os.setgid(owner)
            os.setuid(owner)
        libc = ctypes.CDLL(None, use_errno=True)
        IPC_RMID = 0
        for kind, ident in found:
            if kind == "shm":
                libc.shmctl(ident, IPC_RMID, None)
            elif kind == "sem":
                libc.semctl(ident, 0, IPC_RMID)
            else:
                libc.msgctl(ident, IPC_RMID, None)
    finally:
        if as_owner:
            os._exit(0)


def _child(ctrl, fds: list[int], request: dict, run) -> None:
    """In a freshly forked worker: take the channel as stdin/stdout and the log as stderr, close
    every other descriptor (the zygote's control socket included), then serve the grader."""
    try:
        ctrl.detach()
        channel, log = fds
        _set_parent_death_signal()
        os.setsid()
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        os.dup2(channel, 0)
        os.dup2(channel, 1)
        os.dup2(log, 2)
        os.closerange(3, 1 << 16)
        os.chdir(request["dir"])
        os.environ["HOME"] = request["dir"]
        os.environ["TMPDIR"] = request["limits"]["tmp"]
        run(["worker", request["dir"], json.dumps(request["limits"])])
    finally:
        os._exit(0)


def _can_mount_private_tmp() -> bool:
    """Fork a child that mounts a private /tmp (as every worker will) and say whether it worked."""
    pid = os.fork()
    if pid == 0:
        try:
            _private_tmp(1 << 20, 16)
            os._exit(0)
        except BaseException:
            os._exit(1)
    return os.waitpid(pid, 0)[1] == 0


def zygote(in_pid_namespace: bool, run) -> None:
    """Serve the grader's control socket (fd 0, SOCK_SEQPACKET, one JSON message a packet):
    ``ping`` (the answer says whether each worker can have a private /tmp), ``spawn`` forks a worker
    on the passed channel and log descriptors (numpy already imported, no student code loaded),
    ``kill`` kills every worker. Each answer echoes its request's ``id``; each worker's exit code is
    reported back unasked (``exit``, no id)."""
    import resource  # noqa: F401  for _limit: loaded once here, not in every worker
    import select
    import socket

    _prepare_start({})  # ctypes and the C library, for every worker
    _set_parent_death_signal()
    confine._become_subreaper()  # what a worker double-forks is reaped here
    ctrl = socket.socket(fileno=0)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    children: set[int] = set()
    owner = None  # the workers' uid, from the last spawn

    def send(message: dict) -> None:
        ctrl.send(json.dumps(message).encode())

    def reap() -> None:
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if pid in children:
                children.discard(pid)
                send({"op": "exit", "pid": pid, "code": os.waitstatus_to_exitcode(status)})

    while True:
        ready, _, _ = select.select([ctrl, wake_r], [], [])
        if wake_r in ready:
            os.read(wake_r, 4096)
            reap()
        if ctrl not in ready:
            continue
        data, fds, _, _ = socket.recv_fds(ctrl, 1 << 16, 2)
        if not data:  # the grader is gone: take the workers along
            _kill_all(in_pid_namespace, children)
            return
        request = json.loads(data)
        ident = request.get("id")
        if request["op"] == "spawn":
            owner = request["limits"].get("drop_uid")
            _prepare_start(request["limits"])
            pid = os.fork()
            if pid == 0:
                _child(ctrl, fds, request, run)
            for fd in fds:
                os.close(fd)
            children.add(pid)
            send({"op": "spawned", "id": ident, "pid": pid})
        elif request["op"] == "ping":
            send(
                {
                    "op": "pong",
                    "id": ident,
                    "pid": os.getpid(),
                    "private_tmp": in_pid_namespace and _can_mount_private_tmp(),
                }
            )
        elif request["op"] == "kill":
            clean = _kill_all(
                in_pid_namespace,
                children,
                None if in_pid_namespace or owner == os.getuid() else owner,
            )
            reap()
            if in_pid_namespace:  # (each worker's /tmp went with its mount namespace)
                _remove_ipc(owner)  # its own IPC namespace: no segment left over
            send({"op": "killed", "id": ident, "clean": clean})
