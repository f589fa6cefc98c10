"""What #12's defences cost a submission: the same classes graded by the project and by a copy of it with
those defences switched off, run in turn (on, off, on, off ...), the ratio taken pair by pair.

Switched off in the copy (each a substitution in its source; the bench stops if one no longer matches):
the worker's private /tmp, its seccomp filter and the import policy; the imports as requests of their own
(the first call imports, in its own time, as before #12); the CPU clock (wall-clock limits and the worker's
own count); the score file's HMAC. Left on, because they cost nothing a submission: the zygote's request
ids, the lock on --out, the parent-death signal, the grader-fault flags, the wording of hidden tests.
"""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

OFF = [
    ("grader/sandbox/child/worker.py", 'if limits.get("tmp_inodes"):', "if False:", "the private /tmp"),
    ("grader/sandbox/child/worker.py", 'if limits.get("seccomp"):', "if False:", "the seccomp filter"),
    ("grader/sandbox/child/worker.py", 'if limits.get("imports") is not None:', "if False:", "the import policy"),
    ("grader/sandbox/inflight.py", "        for module in self.modules:\n            if module in self.import_failed:",
     "        for module in ():\n            if module in self.import_failed:", "the imports' own requests"),
    ("grader/sandbox/clock.py", '    if pid is None or not sys.platform.startswith("linux"):', "    if True:",
     "the CPU clock"),
    ("grader/grading/signature.py", '"signature": _digest(doc, key)}', '"signature": PREFIX + "0" * 64}',
     "the signature"),
]


def copy_tracked(root: Path, copy: Path) -> Path:
    """The project's tracked files copied to ``copy``."""
    files = subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True, check=True).stdout.split(b"\0")
    for name in filter(None, (f.decode() for f in files)):
        if (root / name).is_file():
            (copy / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(root / name, copy / name)
    return copy


def without_defences(root: Path, copy: Path) -> Path:
    """A copy of the project at ``root`` with the defences of OFF switched off; run it as
    ``python -m grader`` from inside the copy (the current folder comes first on ``sys.path``)."""
    copy_tracked(root, copy)
    for name, old, new, what in OFF:
        path = copy / name
        text = path.read_text()
        if text.count(old) != 1:
            raise SystemExit(f"bench: {name}: {what} is no longer where tests/bench/defences.py switches it off; "
                             "update OFF")
        path.write_text(text.replace(old, new))
    return copy
