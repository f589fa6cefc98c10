"""The-modern-block's own checks; the checks every assignment gets (validate, the catalogue's
mistakes named, the examples' grades, the named tests, a student's copy, the trace) are
tests/checks/test_course.py's, with this assignment's data in expected.py."""

from __future__ import annotations

from conftest import PROJECT

from grader.course.modules import import_course_module

SOLUTIONS = PROJECT / "solutions" / "the-modern-block"


def test_the_reference_silu_warns_nothing_for_large_inputs():
    """The contract: silu(x) = x / (1 + exp(-x)) with no overflow warning however large |x|
    (float64 and float32)."""
    import warnings

    import numpy as np

    silu = import_course_module(SOLUTIONS / "swiglu.py").silu
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for dtype in (np.float64, np.float32):
            got = silu(np.array([-1e4, -1000.0, 1000.0, 1e4], dtype=dtype))
            assert got.dtype == dtype and np.array_equal(
                got, np.array([-0.0, -0.0, 1000.0, 1e4], dtype=dtype)
            )
