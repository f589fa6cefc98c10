"""Auto-grader for the transformer-block exercises.

Student code never runs in this package's processes: the suites reach it through
:mod:`grader.proxy`, which calls a sandboxed worker (:mod:`grader.worker`) and gets plain data back.
"""
import os

# The grader's own numpy work is on arrays of a few dozen numbers: OpenBLAS's extra threads would only
# spin after each product (about 1% of a batch's CPU under perf). Set before numpy is first imported.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

__version__ = "0.3.0"
