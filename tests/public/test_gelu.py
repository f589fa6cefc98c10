"""Public tests for gelu(x): GPT-2's tanh form, 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x**3))),
applied to every element.

The expected numbers were computed once from a correct gelu and written here to 10 significant digits. The tanh
form and the exact erf form x * Phi(x) differ by up to 4.7e-4 (near |x| = 2.7): these tests want the tanh form.
"""
import numpy as np
import pytest

from grader.compare import assert_close


@pytest.mark.points(1.5)
def test_course_values_at_plus_and_minus_1_102(student, mistakes):
    """The course's worked numbers: gelu(-1.102) = -0.149 and gelu(1.102) = 0.952."""
    got = student.gelu(np.array([-1.102, 1.102]))
    assert_close(got, [-0.149, 0.952], rtol=0.0, atol=1e-3,
                 what="gelu of [-1.102, 1.102] (the course's numbers for ␣the, to 3 decimals)",
                 diagnose=mistakes.gelu(np.array([-1.102, 1.102])))


@pytest.mark.points(2)
def test_known_values_from_minus_4_to_4(student, mistakes):
    """gelu at eleven points from -4 to 4, including ±2.7 where the erf form is furthest from the tanh form."""
    x = np.array([-4.0, -2.7, -1.5, -1.0, -0.5, 0.0, 0.5, 1.0, 1.5, 2.7, 4.0])
    expected = [-7.024594819e-05, -0.008887594639, -0.100428423, -0.1588080094, -0.1542859902, 0.0,
                0.3457140098, 0.8411919906, 1.399571577, 2.691112405, 3.999929754]
    got = student.gelu(x)
    assert_close(got, expected, what="gelu of [-4, -2.7, -1.5, -1, -0.5, 0, 0.5, 1, 1.5, 2.7, 4] "
                                     "(GPT-2's tanh form with 0.044715, not the erf form)",
                 diagnose=mistakes.gelu(x))


@pytest.mark.points(1.5)
def test_matrix_input_keeps_its_shape(student, mistakes):
    """gelu of a 2×3 matrix works element by element and returns a 2×3 matrix."""
    x = np.array([[-0.3, 0.8, 2.0],
                  [-2.0, 3.3, -0.05]])
    expected = [[-0.1146290765, 0.6304316914, 1.954597694],
                [-0.04540230591, 3.298688772, -0.02400306176]]
    got = student.gelu(x)
    assert_close(got, expected, what="gelu of a 2×3 matrix (elementwise, same shape out)",
                 diagnose=mistakes.gelu(x))
