"""Public tests for gelu(x): GPT-2's tanh form, 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 *
x**3))), applied to every element.

The expected numbers were computed once from a correct gelu and written here to 10 significant
digits. The tanh form and the exact erf form x * Phi(x) differ by up to 4.7e-4 (near |x| = 2.7):
these tests want the tanh form.
"""

import numpy as np
import pytest

from grader.feedback.compare import assert_array, assert_close, assert_close_own
from public.toy import COURSE


@pytest.mark.points(1.5)
def test_course_values_at_plus_and_minus_1_102(student, mistakes):
    """The course's worked numbers: gelu(-1.102) = -0.149 and gelu(1.102) = 0.953 (0.95279; the
    course text prints 0.952, a rounding slip)."""
    got = student.gelu(np.array([-1.102, 1.102]))
    assert_close(
        got,
        [-0.149, 0.953],
        **COURSE,
        what="gelu of [-1.102, 1.102] (the course's numbers for ␣the, to 3 decimals: -0.149 and "
        "0.953)",
        diagnose=mistakes.gelu(np.array([-1.102, 1.102])),
    )


@pytest.mark.points(2)
def test_known_values_from_minus_4_to_4(student, mistakes):
    """gelu at eleven points from -4 to 4, including ±2.7 where the erf form is furthest from the
    tanh form."""
    x = np.array([-4.0, -2.7, -1.5, -1.0, -0.5, 0.0, 0.5, 1.0, 1.5, 2.7, 4.0])
    expected = [
        -7.024594819e-05,
        -0.008887594639,
        -0.100428423,
        -0.1588080094,
        -0.1542859902,
        0.0,
        0.3457140098,
        0.8411919906,
        1.399571577,
        2.691112405,
        3.999929754,
    ]
    got = student.gelu(x)
    assert_close(
        got,
        expected,
        what="gelu of [-4, -2.7, -1.5, -1, -0.5, 0, 0.5, 1, 1.5, 2.7, 4] "
        "(GPT-2's tanh form with 0.044715, not the erf form)",
        diagnose=mistakes.gelu(x),
    )


@pytest.mark.property
@pytest.mark.points(1.5)
def test_matrix_input_is_taken_element_by_element(student):
    """gelu of a 2×3 matrix is a 2×3 matrix, each entry what gelu gives that number alone (in a flat
    array)."""
    x = np.array([[-0.3, 0.8, 2.0], [-2.0, 3.3, -0.05]])
    what = (
        "gelu of a 2×3 matrix against gelu of its 6 numbers as a flat array (elementwise, same "
        "shape out)"
    )
    got = assert_array(student.gelu(x), x.shape, what=what)
    assert_close_own(got.reshape(-1), student.gelu(x.reshape(-1)), what=what)
