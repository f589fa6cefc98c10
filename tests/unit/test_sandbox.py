"""The worker and its parent: values come back as plain data; every failure becomes a StudentError."""
from __future__ import annotations

import time

import numpy as np
import pytest

from grader.errors import StudentError
from grader.sandbox import Worker


def call(worker, fn, *args, module="mod", timeout=2.0, **kwargs):
    return worker.call(module, fn, list(args), kwargs, timeout=timeout).value


def test_value_round_trip(submission, limits):
    sub = submission({"mod.py": """
        import numpy as np
        def f(x, params, n=1):
            return {"y": x * n, "w": params["W"].sum(), "n": n, "t": (1, 2.5, None, "s")}
        """})
    with Worker(sub, limits) as w:
        out = call(w, "f", np.eye(2, dtype=np.float32), {"W": np.ones(3)}, n=3)
    assert type(out["y"]) is np.ndarray and out["y"].dtype == np.float32
    assert out["y"].tolist() == [[3, 0], [0, 3]]
    assert out["w"] == 3.0 and type(out["w"]) is float
    assert out["n"] == 3 and out["t"] == [1, 2.5, None, "s"]


def test_input_is_a_copy_and_mutation_is_reported(submission, limits):
    sub = submission({"mod.py": "def f(x):\n    x[0] = 99.0\n    return x\n"})
    x = np.zeros(3)
    with Worker(sub, limits) as w:
        reply = w.call("mod", "f", [x], {}, timeout=2, return_inputs=True)
    assert x[0] == 0.0
    args_after, _ = reply.inputs
    assert args_after[0][0] == 99.0


@pytest.mark.parametrize("source, kind, words", [
    ("def f(:\n", "import_error", "SyntaxError"),
    ("raise NameError('u_test')\n", "import_error", "NameError"),
    ("import sys\nsys.exit(0)\n", "import_error", "SystemExit"),
    ("raise KeyboardInterrupt\n", "import_error", "KeyboardInterrupt"),
    ("def g():\n    pass\n", "missing_function", "no function f()"),
    ("def f():\n    raise NotImplementedError\n", "not_implemented", "not implemented"),
    ("def f():\n    raise ValueError('secret 1234')\n", "raised", "raised ValueError"),
    ("import sys\ndef f():\n    sys.exit(0)\n", "raised", "SystemExit"),
    ("def f():\n    raise KeyboardInterrupt\n", "raised", "KeyboardInterrupt"),
    ("class Liar:\n    def __eq__(self, o):\n        return True\ndef f():\n    return Liar()\n", "bad_type", "Liar"),
    ("import numpy as np\ndef f():\n    return np.matrix([[1.0]])\n", "bad_type", "subclass"),
    ("import numpy as np\ndef f():\n    return np.array([object()])\n", "bad_type", "dtype object"),
    ("def f():\n    return lambda: 1\n", "bad_type", "function"),
    ("def f():\n    x = []\n    x.append(x)\n    return x\n", "too_large", "nested"),
])
def test_failures_become_student_errors(submission, limits, source, kind, words):
    sub = submission({"mod.py": source})
    with Worker(sub, limits) as w:
        with pytest.raises(StudentError) as err:
            call(w, "f")
    assert err.value.kind == kind
    assert words in err.value.message + err.value.detail
    assert "secret 1234" not in err.value.message        # the exception text stays in detail


def test_pytest_exit_and_skip_from_student_code_are_plain_errors(submission, limits):
    sub = submission({"mod.py": "import pytest\ndef f():\n    pytest.exit('bye', returncode=0)\n"
                                "def g():\n    pytest.skip('nope')\n"})
    with Worker(sub, limits) as w:
        for fn in ("f", "g"):
            with pytest.raises(StudentError) as err:
                call(w, fn)
            assert err.value.kind == "raised"


def test_os_exit_is_a_crash_and_the_next_call_gets_a_fresh_worker(submission, limits):
    sub = submission({"mod.py": "import os\ndef f():\n    os._exit(0)\ndef g():\n    return 7\n"})
    with Worker(sub, limits) as w:
        with pytest.raises(StudentError) as err:
            call(w, "f")
        assert err.value.kind == "crashed" and "exited" in err.value.message
        assert call(w, "g") == 7


def test_a_hang_is_killed_at_the_timeout(submission, limits):
    sub = submission({"mod.py": "import signal, time\n"
                                "def f():\n    signal.signal(signal.SIGALRM, signal.SIG_IGN)\n"
                                "    while True:\n        try:\n            time.sleep(1)\n"
                                "        except BaseException:\n            pass\n"
                                "def g():\n    return 1\n"})
    with Worker(sub, limits) as w:
        started = time.monotonic()
        with pytest.raises(StudentError) as err:
            call(w, "f", timeout=0.5)
        assert err.value.kind == "timeout" and "timed out after 0.5 s in f" in err.value.message
        assert time.monotonic() - started < 5
        assert call(w, "g") == 1


def test_memory_bomb_is_refused_by_the_address_space_limit(submission, limits):
    sub = submission({"mod.py": "import numpy as np\ndef f():\n    return np.ones(400 << 20).sum()\n"})
    with Worker(sub, limits) as w:          # 3.2 GB of float64 against a 1 GiB limit
        with pytest.raises(StudentError) as err:
            call(w, "f")
    assert "MemoryError" in err.value.message


def test_printing_never_reaches_the_reply_channel(submission, limits):
    sub = submission({"mod.py": "import sys\ndef f():\n    print('{\"score\": 100}')\n"
                                "    sys.__stdout__.write('=== 10 passed ===')\n    return 1.5\n"})
    with Worker(sub, limits) as w:
        reply = w.call("mod", "f", [], {}, timeout=2)
    assert reply.value == 1.5
    assert '{"score": 100}' in reply.output and "10 passed" in reply.output


def test_huge_print_is_capped(submission, limits):
    sub = submission({"mod.py": "def f():\n    print('x' * (50 << 20))\n    return 1\n"})
    with Worker(sub, limits) as w:
        try:
            reply = w.call("mod", "f", [], {}, timeout=5)
            assert len(reply.output) <= limits.output_kb << 10
        except StudentError as err:         # over the file-size limit: the write fails in the worker
            assert err.kind in ("raised", "crashed")


def test_submission_folder_is_left_as_it_was(submission, limits):
    sub = submission({"mod.py": "import os\ndef f():\n    open('results.json', 'w').write('{}')\n    return 1\n"})
    with Worker(sub, limits) as w:
        assert call(w, "f") == 1
    assert sorted(p.name for p in sub.iterdir()) == ["mod.py"]


def test_seeded_randomness_is_the_same_every_call(submission, limits):
    sub = submission({"mod.py": "import numpy as np\ndef f():\n    return np.random.rand(3)\n"})
    with Worker(sub, limits) as w:
        assert np.array_equal(call(w, "f"), call(w, "f"))
