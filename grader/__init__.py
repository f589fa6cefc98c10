"""Auto-grader for the transformer-block exercises.

Student code never runs in this package's processes: the suites reach it through
:mod:`grader.sandbox.proxy`, which calls a sandboxed worker (:mod:`grader.sandbox.child.worker`) and
gets plain data back.
"""

import os

# The grader's own numpy work is on arrays of a few dozen numbers: OpenBLAS's extra threads would
# only
# spin after each product (about 1% of a batch's CPU under perf). Set before numpy is first
# imported. (A
# worker forked from this process, in grade check, keeps its numpy: one thread, as every worker
# has.)
for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

__version__ = "0.3.0"


def load_ipython_extension(ipython) -> None:
    """``%load_ext grader``: the ``%grade check`` magic (:mod:`grader.commands.jupyter`; IPython is
    needed only here)."""
    from grader.commands.jupyter import load_ipython_extension as load

    load(ipython)


def __getattr__(name: str):
    # ``from grader import check`` in a notebook, without importing the grading machinery (the
    # worker
    # imports this package too) until it is used.
    if name == "check":
        from grader.commands.jupyter import check

        return check
    raise AttributeError(f"module 'grader' has no attribute {name!r}")
