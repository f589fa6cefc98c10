"""The worker and its parent: values come back as plain data; every failure becomes a
StudentError."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time

import numpy as np
import pytest

from grader.course.limits import Limits
from grader.errors import StudentError
from grader.sandbox import replies
from grader.sandbox.child import protocol as wire
from grader.sandbox.client import Worker

# pytest and what it imports, for the tests of what student code can do with pytest (the course's
# policy
# allows only numpy).
WITH_PYTEST = Limits(
    call_timeout=2,
    problem_budget=5,
    submission_budget=20,
    memory_mb=1024,
    imports=("numpy", "pytest", "_pytest", "pluggy", "iniconfig", "packaging", "pygments", "py"),
)


def call(worker, fn, *args, module="mod", timeout=2.0, **kwargs):
    return worker.call(module, fn, list(args), kwargs, timeout=timeout).value


def test_value_round_trip(submission, make_worker):
    sub = submission(
        {
            "mod.py": """
        import numpy as np
        def f(x, params, n=1):
            return {"y": x * n, "w": params["W"].sum(), "n": n, "t": (1, 2.5, None, "s")}
        """
        }
    )
    with make_worker(sub) as w:
        out = call(w, "f", np.eye(2, dtype=np.float32), {"W": np.ones(3)}, n=3)
    assert type(out["y"]) is np.ndarray and out["y"].dtype == np.float32
    assert out["y"].tolist() == [[3, 0], [0, 3]]
    assert out["w"] == 3.0 and type(out["w"]) is float
    assert out["n"] == 3 and out["t"] == [1, 2.5, None, "s"]


@pytest.mark.parametrize(
    "array",
    [
        np.arange(6.0).reshape(2, 3).T,  # not C-contiguous
        np.array(3, dtype=">i4"),  # 0-d, big-endian
        np.zeros((0, 4), dtype=bool),
        np.array([1 + 2j, np.nan, np.inf], dtype=np.complex64),
        np.arange(24, dtype=np.uint8).reshape(2, 3, 4),
    ],
    ids=["transposed", "0d-big-endian", "empty-bool", "complex-nan", "uint8-3d"],
)
def test_arrays_travel_exactly_and_writable(array):
    back = wire.decode(wire.encode({"x": [array]}))["x"][0]
    assert type(back) is np.ndarray and back.dtype == array.dtype and back.shape == array.shape
    assert np.array_equal(back, array, equal_nan=True) and back.flags.writeable


@pytest.mark.parametrize(
    "ref",
    [
        {"$nd": 0, "dtype": "|O", "shape": [1]},  # object arrays would unpickle
        {"$nd": 0, "dtype": "<f8", "shape": [3]},  # 16 bytes are not three float64
        {"$nd": 0, "dtype": "<f8", "shape": [-2]},
        {"$nd": 1, "dtype": "<f8", "shape": [2]},  # no second array frame
        {"$nd": "0", "dtype": "<f8", "shape": [2]},
        {"$nd": 0, "dtype": "[('a', '<f8')]", "shape": [1]},
    ],
)
def test_forged_array_frames_are_refused(ref):
    head = json.dumps({"arrays": 1, "body": ref}).encode()
    with pytest.raises(wire.WireError):
        wire.decode([head, np.zeros(2).tobytes()])


@pytest.mark.parametrize(
    "body",
    [[[0]] * (wire.MAX_ITEMS + 1), [[[[[[[[[[[[[[[[[[0]]]]]]]]]]]]]]]]]]],
    ids=["items", "depth"],
)
def test_a_forged_reply_is_held_to_the_same_caps_as_a_real_one(body):
    """decode() refuses what encode() would never send: a small frame must not cost the grader
    gigabytes."""
    with pytest.raises(wire.WireError, match="too many items|too deeply"):
        wire.decode([json.dumps({"arrays": 0, "body": body}).encode()])


def test_one_array_frame_cannot_be_referenced_twice():
    """Each reference would copy the frame: 32 MiB on the wire could ask the grader for
    terabytes."""
    ref = {"$nd": 0, "dtype": "<f8", "shape": [2]}
    head = json.dumps({"arrays": 1, "body": [ref] * 1000}).encode()
    with pytest.raises(wire.WireError, match="used twice"):
        wire.decode([head, np.zeros(2).tobytes()])


def test_input_is_a_copy_and_mutation_is_reported(submission, make_worker):
    sub = submission({"mod.py": "def f(x):\n    x[0] = 99.0\n    return x\n"})
    x = np.zeros(3)
    with make_worker(sub) as w:
        reply = w.call("mod", "f", [x], {}, timeout=2, return_inputs=True)
    assert x[0] == 0.0
    args_after, _ = reply.inputs
    assert args_after[0][0] == 99.0


@pytest.mark.parametrize(
    "source, kind, words",
    [
        ("def f(:\n", "import_error", "SyntaxError"),
        ("raise NameError('u_test')\n", "import_error", "NameError"),
        ("import sys\nsys.exit(0)\n", "import_error", "SystemExit"),
        ("raise KeyboardInterrupt\n", "import_error", "KeyboardInterrupt"),
        ("def g():\n    pass\n", "missing_function", "no function f()"),
        ("def f():\n    raise NotImplementedError\n", "not_implemented", "not implemented"),
        ("def f():\n    raise ValueError('secret 1234')\n", "raised", "raised ValueError"),
        ("import sys\ndef f():\n    sys.exit(0)\n", "raised", "SystemExit"),
        ("def f():\n    raise KeyboardInterrupt\n", "raised", "KeyboardInterrupt"),
        (
            "class Liar:\n    def __eq__(self, o):\n        return True\ndef f():\n    return "
            "Liar()\n",
            "bad_type",
            "Liar",
        ),
        ("import numpy as np\ndef f():\n    return np.matrix([[1.0]])\n", "bad_type", "subclass"),
        (
            "import numpy as np\ndef f():\n    return np.array([object()])\n",
            "bad_type",
            "dtype object",
        ),
        ("def f():\n    return lambda: 1\n", "bad_type", "function"),
        ("def f():\n    x = []\n    x.append(x)\n    return x\n", "too_large", "nested"),
    ],
)
def test_failures_become_student_errors(submission, make_worker, source, kind, words):
    sub = submission({"mod.py": source})
    with make_worker(sub) as w:
        with pytest.raises(StudentError) as err:
            call(w, "f")
    assert err.value.kind == kind
    assert words in err.value.public + err.value.detail
    assert err.value.message == replies._words(
        kind, "mod", "f"
    )  # a hidden test's words: no student text
    assert "secret 1234" not in err.value.message  # the exception text stays in detail


@pytest.mark.parametrize("limits", [WITH_PYTEST], ids=["pytest-allowed"])
def test_pytest_exit_and_skip_from_student_code_are_plain_errors(submission, make_worker):
    sub = submission(
        {
            "mod.py": "import pytest\ndef f():\n    pytest.exit('bye', returncode=0)\n"
            "def g():\n    pytest.skip('nope')\n"
        }
    )
    with make_worker(sub) as w:
        for fn in ("f", "g"):
            with pytest.raises(StudentError) as err:
                call(w, fn)
            assert err.value.kind == "raised"


@pytest.mark.parametrize(
    "body, words",
    [
        ("import os\ndef f():\n    os._exit(0)\n", "exited"),
        (
            "import ctypes\ndef f():\n    return ctypes.string_at(0)\n",
            "SIGSEGV",
        ),  # reported by signal name
    ],
)
def test_a_crash_is_reported_and_the_next_call_gets_a_fresh_worker(
    submission, make_worker, body, words
):
    sub = submission({"mod.py": body + "def g():\n    return 7\n"})
    with make_worker(sub) as w:
        with pytest.raises(StudentError) as err:
            call(w, "f")
        assert err.value.kind == "crashed" and words in err.value.public
        assert call(w, "g") == 7


@pytest.mark.parametrize(
    "code, words",
    [
        (3221225477, "an access violation (0xC0000005)"),  # Windows, as subprocess reports it
        (
            -1073741819,
            "an access violation (0xC0000005)",
        ),  # the same, read as a signed 32-bit number
        (0xC00000FD, "a stack overflow (0xC00000FD)"),
        (0xC0000409, "a stack buffer overrun (0xC0000409)"),
        (0xC0001234, "a Windows error (0xC0001234)"),
        (-11, "SIGSEGV"),
    ],
)
def test_a_crash_status_reads_as_a_crash_on_every_os(code, words):
    err = replies._death("gelu", code, None)
    assert err.kind == "crashed" and err.public == f"crashed with {words} during gelu()"
    assert "sys.exit" not in err.message + err.public


@pytest.mark.parametrize("code", [0, 1, 3, 255, 0xFFFFFFFF])  # 0xFFFFFFFF: sys.exit(-1) on Windows
def test_an_exit_status_the_code_chose_reads_as_an_exit(code):
    err = replies._death("gelu", code, None)
    assert err.kind == "crashed" and f"the process exited (status {code})" in err.public
    assert "do not call sys.exit" in err.public


def test_a_hang_is_killed_at_the_timeout(submission, make_worker):
    """A call that ignores signals and sleeps on is killed at its limit. It gives up by itself
    after 60 s, so that a worker nobody kills fails this test (the call returns) instead of hanging
    it."""
    sub = submission(
        {
            "mod.py": "import signal, time\n"
            "def f():\n    signal.signal(signal.SIGALRM, signal.SIG_IGN)\n"
            "    end = time.monotonic() + 60\n"
            "    while time.monotonic() < end:\n"
            "        try:\n            time.sleep(1)\n"
            "        except BaseException:\n            pass\n"
            "    return 'not killed'\n"
            "def g():\n    return 1\n"
        }
    )
    with make_worker(sub) as w:
        started = time.monotonic()
        with pytest.raises(StudentError) as err:
            call(w, "f", timeout=0.5)
        # It sleeps: no CPU time to speak of, so the wall-clock backstop (WALL_FACTOR x 0.5 s) stops
        # it;
        # where the CPU time cannot be read (bwrap, cold), the 0.5 s are wall-clock seconds.
        assert err.value.kind == "timeout" and err.value.message in (
            "timed out after 2.5 s of wall-clock time in f (waiting, not computing)",
            "timed out after 0.5 s in f",
        )
        # quiet: 2.5 s (0.5 s where the limit is wall-clock); 12x margin for a busy machine, and
        # well short of the 60 s the call would sleep unkilled
        assert time.monotonic() - started < 30
        assert call(w, "g") == 1


def test_memory_bomb_is_refused_by_the_address_space_limit(submission, make_worker):
    sub = submission(
        {"mod.py": "import numpy as np\ndef f():\n    return np.ones(400 << 20).sum()\n"}
    )
    with make_worker(sub) as w:  # 3.2 GB of float64 against a 1 GiB limit
        with pytest.raises(StudentError) as err:
            call(w, "f")
    assert "MemoryError" in err.value.public


def test_printing_never_reaches_the_reply_channel(submission, make_worker):
    sub = submission(
        {
            "mod.py": "import sys\ndef f():\n    print('{\"score\": 100}')\n"
            "    sys.__stdout__.write('=== 10 passed ===')\n    return 1.5\n"
        }
    )
    with make_worker(sub) as w:
        reply = w.call("mod", "f", [], {}, timeout=2)
    assert reply.value == 1.5
    assert '{"score": 100}' in reply.output and "10 passed" in reply.output


def test_huge_print_is_capped(submission, make_worker, limits):
    sub = submission({"mod.py": "def f():\n    print('x' * (50 << 20))\n    return 1\n"})
    with make_worker(sub) as w:
        try:
            reply = w.call("mod", "f", [], {}, timeout=5)
            assert len(reply.output) <= limits.output_kb << 10
        except StudentError as err:  # over the file-size limit: the write fails in the worker
            assert err.kind in ("raised", "crashed")


def test_submission_folder_is_left_as_it_was(submission, make_worker):
    sub = submission(
        {
            "mod.py": "def f():\n    try:\n        open('results.json', 'w').write('{}')\n"
            "    except OSError:\n        pass\n    return 1\n"
        }
    )
    with make_worker(sub) as w:
        assert call(w, "f") == 1
    assert sorted(p.name for p in sub.iterdir()) == ["mod.py"]


def test_seeded_randomness_is_the_same_every_call(submission, make_worker):
    sub = submission({"mod.py": "import numpy as np\ndef f():\n    return np.random.rand(3)\n"})
    with make_worker(sub) as w:
        assert np.array_equal(call(w, "f"), call(w, "f"))


# ---- attacks on the machine itself: what the sandbox (bwrap level) must contain
# -----------------------------


def test_os_exit_at_import_is_a_crash(submission, make_worker):
    sub = submission({"mod.py": "import os\nos._exit(0)\n"})
    with make_worker(sub) as w:
        with pytest.raises(StudentError) as err:
            call(w, "f")
    assert err.value.kind == "crashed"


@pytest.mark.parametrize("limits", [WITH_PYTEST], ids=["pytest-allowed"])
def test_module_level_pytest_skip_is_an_import_error(submission, make_worker):
    sub = submission(
        {"mod.py": "import pytest\npytest.skip('all of it', allow_module_level=True)\n"}
    )
    with make_worker(sub) as w:
        with pytest.raises(StudentError) as err:
            call(w, "f")
    assert err.value.kind == "import_error" and "Skipped" in err.value.public


def test_wrong_signature_is_reported(submission, make_worker):
    sub = submission({"mod.py": "def f(x):\n    return x\n"})
    with make_worker(sub) as w:
        with pytest.raises(StudentError) as err:
            call(w, "f", 1, 2)
    assert err.value.kind == "raised" and "TypeError" in err.value.public


def _alive(marker: str, expect: int | None = None) -> list[str]:
    """Processes whose command line holds ``marker``, polled for up to 5 s until there are
    ``expect``."""
    deadline = time.monotonic() + 5  # quiet: 0.15 s; 30x margin, a busy machine
    while True:
        out = subprocess.run(["ps", "-ww", "-eo", "args"], capture_output=True, text=True).stdout
        found = [line for line in out.splitlines() if marker in line]
        if expect is None or len(found) == expect or time.monotonic() > deadline:
            return found
        time.sleep(0.1)


FORKER = """
import os, sys, time
def f(n, marker):
    started = 0
    for _ in range(n):
        try:
            pid = os.fork()
        except OSError:
            break
        if pid == 0:
            os.setsid()                      # escape the process group
            os.execvp(sys.executable, [sys.executable, "-c", "import time; time.sleep(30)", marker])
        started += 1
    return started
"""


def test_setsid_children_do_not_outlive_the_submission(submission, limits, make_bwrap_worker):
    marker = f"grade-test-marker-{os.getpid()}-setsid"
    with make_bwrap_worker(submission({"mod.py": FORKER})) as w:
        assert call(w, "f", 3, marker) == 3
        assert len(_alive(marker, expect=3)) == 3
    assert _alive(marker, expect=0) == []


def test_fork_bomb_is_bounded_by_the_process_limit(submission, limits, make_bwrap_worker):
    if os.geteuid() != 0:
        pytest.skip("the uid drop (and so RLIMIT_NPROC) applies when the grader runs as root")
    marker = f"grade-test-marker-{os.getpid()}-bomb"
    with make_bwrap_worker(submission({"mod.py": FORKER})) as w:
        started = call(w, "f", 500, marker, timeout=20)
    assert started < limits.worker_limits()["processes"]
    assert _alive(marker, expect=0) == []


def test_the_worker_sees_only_the_runtime_and_its_submission(
    submission, limits, make_bwrap_worker, tmp_path
):
    secret = tmp_path / "hidden_solution_course.json"
    secret.write_text("canary-7f3a")
    sub = submission(
        {
            "mod.py": """
        import os
        def f(start):
            found = []
            for root, dirs, files in os.walk(start):
                if root.startswith(("/proc", "/sys", "/dev")):
                    dirs[:] = []
                    continue
                found += [os.path.join(root, n) for n in dirs + files
                          if n in ("hidden", "solutions", "course.json", "hidden_solution_course.json")]
            return found
        """
        }
    )
    with make_bwrap_worker(sub) as w:
        assert call(w, "f", "/", timeout=30) == []
        assert call(w, "f", str(tmp_path)) == []
        assert sorted(os.listdir("/")) != call(w, "f", "/submission")  # sanity: it did walk


def test_the_grader_process_is_invisible(submission, limits, make_bwrap_worker, monkeypatch):
    monkeypatch.setenv("GRADER_SECRET_TOKEN", "canary-91bd")
    sub = submission(
        {
            "mod.py": """
        import os
        def f():
            loot = []
            for pid in [str(os.getppid()), "1"] + [p for p in os.listdir("/proc") if p.isdigit()]:
                for name in ("environ", "cmdline", "mem"):
                    try:
                        with open(f"/proc/{pid}/{name}", "rb") as fh:
                            loot.append(fh.read(1 << 16).decode("latin-1"))
                    except OSError:
                        pass
            return "\\n".join(loot) + "\\n".join(f"{k}={v}" for k, v in os.environ.items())
        """
        }
    )
    with make_bwrap_worker(sub) as w:
        loot = call(w, "f")
    assert "canary-91bd" not in loot and "pytest" not in loot


def test_no_network(submission, limits, make_bwrap_worker):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    sub = submission(
        {
            "mod.py": """
        import socket
        def f(port):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                return "connected"
            except OSError as err:
                return type(err).__name__
        """
        }
    )
    try:
        with make_bwrap_worker(sub) as w:
            assert call(w, "f", port) != "connected"
    finally:
        server.close()


def test_writes_stay_inside_the_sandbox(submission, limits, make_bwrap_worker, tmp_path):
    sub = submission(
        {
            "mod.py": """
        import os
        def f(targets):
            done = []
            for t in targets:
                try:
                    os.makedirs(os.path.dirname(t), exist_ok=True)
                    with open(t, "w") as fh:
                        fh.write('{"score": 100}')
                    done.append(t)
                except OSError:
                    pass
            return done
        """
        }
    )
    targets = [
        str(tmp_path / "results.json"),
        f"/tmp/grade-test-canary-{os.getpid()}/results.json",
        str(sub.parent / "results.json"),
        str(sub / "results.json"),
    ]
    with make_bwrap_worker(sub) as w:
        call(w, "f", targets)
    assert not any(os.path.exists(t) for t in targets)


def test_bwrap_level_is_available_where_bubblewrap_is_installed():
    """A broken bubblewrap set-up must not silently drop the grader to process isolation."""
    import shutil
    import sys

    from grader.sandbox.policy import BWRAP, available_levels

    if not sys.platform.startswith("linux") or shutil.which("bwrap") is None:
        pytest.skip("no bubblewrap here")
    assert available_levels()[0] == BWRAP


def test_a_fresh_worker_per_submission_nothing_leaks_to_the_next(submission, make_worker):
    """Globals, monkeypatched numpy and builtins, files in /tmp: none survives into the next
    student's worker."""
    cheat = submission(
        {
            "mod.py": """
        import builtins, numpy, os, sys, tempfile
        STATE = []
        def f():
            numpy.sum = lambda *a, **k: 42
            builtins.GRADER_SEEN = True
            sys.modules["layernorm"] = "hijacked"
            open(os.path.join(tempfile.gettempdir(), "left-behind"), "w").write("x")
            STATE.append(1)
            return len(STATE)
        """
        }
    )
    honest = submission(
        {
            "mod.py": """
        import builtins, numpy, os, sys, tempfile
        def f():
            return [float(numpy.sum(numpy.ones(3))), hasattr(builtins, "GRADER_SEEN"),
                    "layernorm" in sys.modules, os.path.exists(os.path.join(tempfile.gettempdir(), "left-behind"))]
        """
        }
    )
    with make_worker(cheat) as w:
        assert call(w, "f") == 1 and call(w, "f") == 2  # state persists within one submission...
    with make_worker(honest) as w:
        sums, seen, hijacked, left = call(w, "f")
    assert (sums, seen, hijacked, left) == (
        3.0,
        False,
        False,
        False,
    )  # ...and never into the next one


def test_the_kernel_keyring_and_posix_message_queues_are_refused(submission, make_bwrap_worker):
    """As root the sandbox shares the host's keyring of `nobody`, which outlives every run; a
    message queue outlives the worker in the sandbox's IPC namespace. Both would carry data to the
    next student."""
    import platform

    add_key = {"x86_64": 248, "aarch64": 217}.get(platform.machine())
    if add_key is None:
        pytest.skip("add_key's syscall number is only known here for x86_64 and aarch64")
    sub = submission(
        {
            "mod.py": f"""
        import ctypes, ctypes.util, os
        def key():
            libc = ctypes.CDLL(None, use_errno=True)
            return [libc.syscall({add_key}, b"user", b"answers", b"42", 2, -4), ctypes.get_errno()]
        def queue():
            rt = ctypes.CDLL(ctypes.util.find_library("rt") or "librt.so.1", use_errno=True)
            return [rt.mq_open(b"/answers", os.O_CREAT | os.O_RDWR, 0o600, None), ctypes.get_errno()]
        """
        }
    )
    with make_bwrap_worker(sub) as w:
        assert call(w, "key") == [-1, 1]  # EPERM
        assert call(w, "queue") == [-1, 1]


def test_system_v_shared_memory_does_not_outlive_its_worker(submission, make_bwrap_worker):
    """A segment would carry data to the next worker (the next student's, or the fresh worker of the
    block's own-components checks) and hold memory past the address-space limit."""
    sub = submission(
        {
            "mod.py": """
        import ctypes
        def make():
            libc = ctypes.CDLL(None, use_errno=True)
            return [libc.shmget(0x5EED + i, 1 << 20, 0o1000 | 0o666) for i in range(3)]   # IPC_CREAT
        def count():
            with open("/proc/sysvipc/shm") as table:
                return len([line for line in table.read().splitlines()[1:] if line.strip()])
        """
        }
    )
    with make_bwrap_worker(sub) as w:
        assert min(call(w, "make")) >= 0 and call(w, "count") == 3
        w.restart()
        assert call(w, "count") == 0


def test_the_submission_folder_is_read_only_in_the_sandbox(submission, make_bwrap_worker):
    """No disk filling through the private copy: at bwrap level only the 64 MiB /tmp is writable."""
    sub = submission(
        {
            "mod.py": """
        import os, tempfile
        def f():
            wrote = []
            for where in (".", os.path.dirname(os.path.abspath(__file__)), tempfile.gettempdir()):
                try:
                    with open(os.path.join(where, "big.bin"), "wb") as fh:
                        fh.write(b"x" * 1024)
                    wrote.append(where)
                except OSError:
                    pass
            return wrote
        """
        }
    )
    with make_bwrap_worker(sub) as w:
        assert call(w, "f") == ["/tmp"]


def test_a_reply_written_out_of_turn_is_not_taken(submission, make_worker):
    """A frame forged on the reply channel cannot answer this call, let alone a later one."""
    sub = submission(
        {
            "mod.py": """
        import json, os, struct
        def f():
            head = json.dumps({"arrays": 0, "body": {"$dict": {"ok": True, "value": 42, "id": "guess"}}}).encode()
            frame = struct.pack(">Q", len(head)) + head
            for fd in range(3, 12):
                try:
                    os.write(fd, frame * 3)
                except OSError:
                    pass
            return 1
        def g():
            return 2
        """
        }
    )
    with make_worker(sub) as w:
        with pytest.raises(StudentError) as err:
            call(w, "f")
        assert err.value.kind == "crashed" and "out of turn" in err.value.public
        assert call(w, "g") == 2


def test_a_zombie_leader_with_a_live_thread_is_killed_too(submission, make_bwrap_worker):
    """A process whose main thread exited (it shows as a zombie) while another thread runs must not
    survive into the next submission."""
    import platform

    sys_exit = {"x86_64": 60, "aarch64": 93}.get(platform.machine())
    if sys_exit is None:
        pytest.skip("needs the raw exit syscall number of this architecture")
    name = f"zb{os.getpid() % 100000}"
    sub = submission(
        {
            "mod.py": f"""
        import ctypes, os, threading, time
        def f():
            if os.fork() == 0:
                ctypes.CDLL(None).prctl(15, b"{name}", 0, 0, 0)
                threading.Thread(target=time.sleep, args=(60,)).start()
                ctypes.CDLL(None).syscall({sys_exit}, 0)     # only the main thread exits
            return 1
        """
        }
    )
    with make_bwrap_worker(sub) as w:
        assert call(w, "f") == 1

    def threads() -> list[str]:
        out = subprocess.run(["ps", "-eLo", "comm="], capture_output=True, text=True).stdout
        return [line for line in out.split() if line == name]

    deadline = time.monotonic() + 5  # quiet: 0.12 s; 40x margin, a busy machine
    while threads() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert threads() == []


def test_a_sandbox_that_cannot_start_is_a_grader_error_not_zero_points(monkeypatch, bwrap_level):
    """If the zygote's sandbox cannot start (here: no interpreter inside it), grading stops with a
    clear error instead of scoring a whole class 0 for "crashed" workers."""
    import grader.sandbox.policy as policy
    from grader.errors import GradeError
    from grader.sandbox.zygote import Zygote

    monkeypatch.setattr(policy, "_runtime_paths", lambda: [])
    with pytest.raises(GradeError, match="sandbox could not start"):
        Zygote(bwrap_level)


def test_autograde_stops_when_the_sandbox_cannot_start(monkeypatch, bwrap_level, course, tmp_path):
    """The zygote starts while pytest collects; when it never answers, grading stops with the error
    (no submission is scored 0 for it)."""
    import grader.sandbox.policy as policy
    from grader.errors import GradeError
    from grader.grading.executors import run
    from grader.grading.results import Job

    monkeypatch.setattr(policy, "_runtime_paths", lambda: [])
    graded = []
    with pytest.raises(GradeError, match="sandbox could not start"):
        run(
            course,
            [Job("ann", course.solutions)],
            graded.append,
            hidden=True,
            level=bwrap_level,
            tmp_root=tmp_path,
        )
    assert graded == []


# ---------------------------------------------------------------- calls sent ahead (forked workers)


def ahead(worker, *calls):
    """Send ``(function, *args)`` calls ahead; return their tickets."""
    tickets = worker.ahead(
        [("mod", fn, False, Worker.encode_call(fn, list(args), {})) for fn, *args in calls]
    )
    assert len(tickets) == len(calls)
    return tickets


def collect(worker, ticket, fn, *args, timeout=2.0):
    return worker.call("mod", fn, list(args), {}, timeout=timeout, ticket=ticket)


SAYS = """
    import time
    def say(word, pause=0.0):
        end = time.process_time() + pause               # CPU time: the limits count it, not sleep
        while time.process_time() < end:
            pass
        print(word)
        return word.upper()
    def hang():
        while True:
            pass
    """


def test_calls_sent_ahead_answer_in_any_order_each_with_its_own_output(
    submission, make_forked_worker
):
    with make_forked_worker(submission({"mod.py": SAYS})) as w:
        a, b, c = ahead(w, ("say", "a"), ("say", "b"), ("say", "c"))
        time.sleep(0.2)  # all three have run: their output is in the log
        replies = [collect(w, t, "say", word) for t, word in ((c, "c"), (a, "a"), (b, "b"))]
    assert [(r.value, r.output) for r in replies] == [("C", "c\n"), ("A", "a\n"), ("B", "b\n")]


def test_a_call_sent_ahead_that_hangs_does_not_time_out_the_call_after_it(
    submission, make_forked_worker
):
    """The call nobody collects hangs: the worker is killed at the call timeout, and the call after
    it runs again in a fresh worker, charged only its own time."""
    with make_forked_worker(submission({"mod.py": SAYS})) as w:
        _, later = ahead(w, ("hang",), ("say", "x"))
        reply = collect(w, later, "say", "x")
        # reply.seconds: the CPU seconds charged to "x" alone (quiet: under 0.01 s; 100x margin
        # for a busy machine); charged the hang's time too, it would be 2 s or more
        assert (reply.value, reply.output) == ("X", "x\n") and reply.seconds < 1
        assert w.starts == 2


def test_a_call_sent_ahead_is_held_to_its_own_timeout(submission, make_forked_worker):
    """A call sent ahead ran with the limits' call timeout (2 s); collected with timeout=0.5 it gets
    0.5 s of CPU. The timeout's message names the limit that ran out: CPU time is what it counts, so
    a busy machine (which stretches 0.5 s of CPU over more wall-clock time) changes nothing here."""
    sub = submission({"mod.py": SAYS})
    with make_forked_worker(sub) as w:
        (hangs,) = ahead(w, ("hang",))
        with pytest.raises(StudentError) as err:
            collect(w, hangs, "hang", timeout=0.5)
        # held to the 2 s of the limits, it would say "after 2 s" (or 10 s of wall-clock time);
        # where the worker's CPU clock cannot be read, the limit is 0.5 s of wall-clock time; on a
        # machine so busy that the loop gets less than 1/WALL_FACTOR of a core, the 2.5 s backstop
        # comes first
        assert err.value.kind == "timeout" and err.value.message in (
            "timed out after 0.5 s of CPU time in hang",
            "timed out after 0.5 s in hang",
            "timed out after 2.5 s of wall-clock time in hang (waiting, not computing)",
        ), err.value.message
        assert (
            w.ahead([("mod", "say", False, Worker.encode_call("say", ["z"], {}))]) == []
        )  # not after a kill
    with make_forked_worker(sub) as w:
        (slow,) = ahead(w, ("say", "s", 0.6))
        time.sleep(1.0)  # answered, in 0.6 s: more than this call may take
        with pytest.raises(StudentError) as err:
            collect(w, slow, "say", "s", 0.6, timeout=0.3)
        assert err.value.kind == "timeout"
        assert collect(w, None, "say", "y").value == "Y"


def test_a_reply_cannot_answer_a_call_sent_ahead_of_time(submission, make_forked_worker):
    """The student's code can read the requests sent ahead (their tickets too) and forge their
    replies: one written before its call's turn breaks the channel's order and is a crash; the call
    sent ahead runs again in a fresh worker."""
    sub = submission(
        {
            "mod.py": """
        import gc, io, json, struct
        def f():
            for obj in gc.get_objects():
                if isinstance(obj, io.BufferedReader) and not obj.closed:
                    try:
                        data = obj.peek(1 << 16)
                    except Exception:
                        continue
                    for ticket in set(__import__("re").findall(rb'"id": "([0-9a-f]{16})"', data)):
                        head = json.dumps({"arrays": 0, "body": {"$dict": {"ok": True, "value": 99,
                                           "id": ticket.decode(), "log": 0}}}).encode()
                        for fd in range(3, 12):
                            try:
                                __import__("os").write(fd, struct.pack(">Q", len(head)) + head)
                            except OSError:
                                pass
            return 1
        def g():
            return 2
        """
        }
    )
    with make_forked_worker(sub) as w:
        first, second = ahead(w, ("f",), ("g",))
        with pytest.raises(StudentError) as err:
            collect(w, first, "f")
        assert err.value.kind == "crashed" and "out of turn" in err.value.public
        assert collect(w, second, "g").value == 2 and w.starts == 2


def test_a_slow_call_ends_sending_ahead_and_what_was_queued_runs_when_asked(
    submission, make_forked_worker
):
    """A slow submission's queued calls would run ahead of the tests and eat its time budgets: after
    a call slower than SLOW_CALL of the timeout, the worker is killed and the calls queued behind it
    run when their tests ask, in a fresh worker."""
    with make_forked_worker(submission({"mod.py": SAYS})) as w:
        slow, queued = ahead(w, ("say", "a", 0.3), ("say", "b", 0.3))
        assert collect(w, slow, "say", "a", 0.3).value == "A"
        assert (
            w.starts == 1
            and w.ahead([("mod", "say", False, Worker.encode_call("say", ["c"], {}))]) == []
        )
        assert collect(w, queued, "say", "b", 0.3).value == "B" and w.starts == 2


OFFLOADS = """import os, time
def _burn(seconds):
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass
def f(seconds):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:                       # a grandchild does the work, reparented away: never waited for
        if os.fork() == 0:
            _burn(seconds)
            os.write(w, b"x")
        os._exit(0)
    os.waitpid(pid, 0)                 # only the child that exited at once
    os.read(r, 1)
    return 1
"""


def test_cpu_time_a_call_hands_to_a_grandchild_counts_against_its_timeout(
    submission, make_forked_worker
):
    """Red team 18c: the CPU clock reads the worker's own time and that of the children it waited
    for; a call that has a double-forked grandchild do its work, and reads the result from a pipe,
    was charged none of it: 1.5 s of CPU passed a 0.5 s call timeout (up to WALL_FACTOR times every
    CPU limit: call, problem and submission budgets). In the-block a gelu that burned 6 s of CPU
    this way kept its points (5 s timeout). Since 4c66c61 a worker's whole tree is on its clock (a
    control group, or the zygote as subreaper)."""
    sub = submission({"mod.py": OFFLOADS})
    with make_forked_worker(sub) as w:
        with pytest.raises(StudentError) as err:
            call(w, "f", 1.5, timeout=0.5)
        # The CPU limit's message (or, where no CPU clock can be read, the 0.5 s of wall-clock time
        # that stand for it), never the backstop's: on a busy machine the grandchild's 1.5 s of CPU
        # can take more than the backstop's 2.5 s of wall-clock time, which would pass this test
        # with the grandchild's time on no clock.
        assert err.value.message in (
            "timed out after 0.5 s of CPU time in f",
            "timed out after 0.5 s in f",
        ), err.value.message


def test_imports_that_sleep_cannot_stall_the_batch_restart_after_restart(submission, bwrap_level):
    """Red team 18c: the import budget counts CPU seconds only, and every restarted worker imports
    the submission's modules again: a module that sleeps at import (just under the wall-clock
    backstop, WALL_FACTOR times import_timeout) beside functions that crash costs no budget at all,
    and each crash costs a sleep. In the-block, 2 s of sleep in layernorm.py and a gelu that exits
    made one submission take 28 s; 45 s in each of five modules, and every function exiting, about
    90 x 225 s: hours of one batch, at --jobs 1 before every student after it. The budget must run
    out (the modules then fail to import) after a bounded wall time."""
    from grader.sandbox.zygote import Zygote

    sub = submission(
        {"mod.py": "import time\ntime.sleep(0.6)\nimport os\ndef f():\n    os._exit(3)\n"}
    )
    limits = Limits(
        call_timeout=1,
        problem_budget=5,
        submission_budget=20,
        import_timeout=0.5,
        import_budget=0.5,
    )
    with (
        Zygote(bwrap_level) as zygote,
        Worker(sub, limits, bwrap_level, zygote, modules=["mod"]) as w,
    ):
        messages = []
        for _ in range(8):
            with pytest.raises(StudentError) as err:
                call(w, "f")
            messages.append(err.value.message)
        assert "importing mod.py" in messages[-1], (
            messages
        )  # its budget used up: it no longer imports


# ---------------------------------------------------------------- where bubblewrap cannot be used


def _without_bwrap_level(monkeypatch, **replaced):
    """policy with ``replaced`` attributes, its probe's answer forgotten (again after the test)."""
    import grader.sandbox.policy as policy

    for name, value in replaced.items():
        monkeypatch.setattr(policy, name, value)
    policy.bwrap_unusable.cache_clear()
    return policy


@pytest.fixture
def forget_probe():
    import grader.sandbox.policy as policy

    yield
    policy.bwrap_unusable.cache_clear()  # the next test probes the real machine again


def test_a_refused_private_tmp_is_no_bwrap_level_and_one_line_says_so(
    tmp_path, monkeypatch, bwrap_level, forget_probe
):
    """bwrap's namespaces may work where a worker's own /tmp mount is refused (user namespaces
    restricted by AppArmor): the probe mounts it as a worker would, so the notebook's test cells
    fall back to process isolation, said in one line, rather than score the reference 0. Here
    the mount is refused by a confine.py whose _private_tmp fails."""
    import grader.sandbox.policy as policy

    child = tmp_path / "child"
    shutil.copytree(policy.CHILD, child)
    with open(child / "confine.py", "a", encoding="utf-8") as f:
        f.write(
            "\n\ndef _private_tmp(size, inodes):\n"
            "    raise OSError(1, 'could not mount a private /tmp')\n"
        )
    policy = _without_bwrap_level(monkeypatch, CHILD=child)
    assert policy.available_levels() == [policy.PROCESS]
    note = policy.fallback_note()
    assert note is not None and "\n" not in note and "could not mount a private /tmp" in note
    assert "process isolation" in note


def test_without_libseccomp_no_bwrap_level_and_one_line_says_so(monkeypatch, forget_probe):
    """pyseccomp raises RuntimeError (not ImportError) when libseccomp is missing."""
    import shutil as sh

    def no_libseccomp():
        raise RuntimeError("Unable to find libseccomp")

    if sh.which("bwrap") is None:
        pytest.skip("no bubblewrap here")
    policy = _without_bwrap_level(monkeypatch, _seccomp_file=no_libseccomp)
    assert policy.available_levels() == [policy.PROCESS]
    assert policy.fallback_note() == (
        "note: libseccomp cannot be loaded (Unable to find libseccomp): "
        "the code runs with process isolation only (rlimits), not in bwrap"
    )


NO_LIBSECCOMP = """import ctypes.util, runpy, sys
_find = ctypes.util.find_library
ctypes.util.find_library = lambda name: None if "seccomp" in name else _find(name)
sys.argv = ["grade", *sys.argv[1:]]
runpy.run_module("grader", run_name="__main__", alter_sys=True)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="libseccomp is Linux's")
def test_grade_without_libseccomp_says_one_line_never_a_traceback(tmp_path):
    """`grade check` on the reference and `grade autograde` on a Linux where ctypes finds no
    libseccomp: check grades as usual; autograde refuses in one line naming libseccomp, and with
    --unsafe grades with process isolation after one line saying so."""
    from conftest import PROJECT, students_copy

    script = tmp_path / "no_libseccomp.py"
    script.write_text(NO_LIBSECCOMP, encoding="utf-8")
    release = students_copy(tmp_path / "release")
    for module in (release / "exercises").glob("*.py"):
        shutil.copy(PROJECT / "solutions" / "the-block" / module.name, module)

    def grade(*args, cwd):
        # timeout: a backstop against a hang, not a measurement (quiet: under 10 s a run)
        proc = subprocess.run(
            [sys.executable, str(script), *map(str, args)],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=600,
        )
        return proc.returncode, proc.stdout + proc.stderr

    code, output = grade("check", cwd=release)
    assert code == 0 and "33/33" in output and "Traceback" not in output, output
    subs, out = tmp_path / "submissions", tmp_path / "out"
    shutil.copytree(release / "exercises", subs / "ann")
    code, output = grade("autograde", subs, "--out", out, "-a", "the-block", cwd=PROJECT)
    assert code == 2 and "Traceback" not in output, output
    assert "libseccomp" in output and len(output.strip().splitlines()) == 1, output
    if shutil.which("bwrap"):  # (without it: "not installed", as always)
        code, output = grade(
            "autograde", subs, "--out", out, "-a", "the-block", "--unsafe", cwd=PROJECT
        )
        assert code == 0 and "Traceback" not in output, output
        notes = [line for line in output.splitlines() if "libseccomp" in line]
        assert notes == [
            "note: libseccomp cannot be loaded (Unable to find libseccomp): the code runs "
            "with process isolation only (rlimits), not in bwrap"
        ], output
