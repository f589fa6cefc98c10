"""Auto-grader for the transformer-block exercises.

Student code never runs in this package's processes: the suites reach it through
:mod:`grader.proxy`, which calls a sandboxed worker (:mod:`grader.worker`) and gets plain data back.
"""
__version__ = "0.1.0"
