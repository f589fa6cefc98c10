"""Public tests for rmsnorm(x, gain=None, eps=1e-6) = x / sqrt(mean(x**2, axis=-1) + eps) * gain:
each row over the last axis, no mean subtracted, no shift, gain defaults to ones.

The expected numbers were computed once from a correct RMSNorm and written here to 10 significant
digits. Property tests (@pytest.mark.property) check a rule on your own outputs only, so a slip in
the values keeps them.
"""

import numpy as np
import pytest

from grader.feedback.compare import assert_array, assert_close, assert_close_own
from public.toy import X

# A row with a mean far from 0 (RMSNorm keeps it: only LayerNorm subtracts it), a tiny row (mean
# square 1e-6, where
# eps = 1e-6 halves the square: the output shows which eps), and a row of zeros (eps keeps it
# finite: zeros).
ROWS = np.array(
    [
        [3.0, 4.0, 5.0, 6.0],
        [-1.0, 0.5, 2.0, -0.5],
        [0.001, -0.001, 0.001, -0.001],
        [0.0, 0.0, 0.0, 0.0],
    ]
)
GAIN = np.array([1.0, 2.0, 0.5, -1.0])
EPS_ROWS = np.array([[0.1, -0.2, 0.3, 0.0], [1.0, 1.5, 0.5, 1.0]])


@pytest.mark.points(2)
def test_rmsnorm_of_the_course_d8_stream(student, mistakes):
    """RMSNorm of the course's 5×8 residual stream x (the script's u = rmsnorm(x)): each row on its
    own."""
    got = student.rmsnorm(X)
    assert_close(
        got,
        [
            [
                -0.2556331348,
                0.8783944452,
                -0.1427064036,
                -1.100961009,
                1.072390237,
                0.404349446,
                -2.132284677,
                -0.2653896288,
            ],
            [
                0.4084060195,
                1.368022711,
                0.4325146076,
                -1.807199899,
                -0.3290639904,
                0.8380180556,
                -0.7618453884,
                -1.057188541,
            ],
            [
                1.191542737,
                -0.9008369788,
                -0.3325660909,
                -1.933052382,
                0.5148127942,
                0.7882159265,
                0.5219662051,
                0.8733008658,
            ],
            [
                0.5573513032,
                0.4331710413,
                0.5993895455,
                -0.3380585949,
                1.50284989,
                -0.4408307724,
                -1.849401583,
                1.074701057,
            ],
            [
                2.03859069,
                -1.057628029,
                -0.1119489725,
                -0.7550297739,
                -0.4192210002,
                0.05077244394,
                -1.367879909,
                -0.3058417566,
            ],
        ],
        what="rmsnorm of the course's 5×8 x (each row divided by the root of its mean square, "
        "axis=-1)",
        diagnose=mistakes.rmsnorm(X),
    )


@pytest.mark.points(1.5)
def test_rmsnorm_gain_and_rows_that_tell_the_mean_and_eps(student, mistakes):
    """gain multiplies each column; a row with a large mean keeps it (no centring); a tiny row shows
    eps = 1e-6, and a row of zeros gives zeros."""
    got = student.rmsnorm(ROWS, GAIN)
    assert_close(
        got,
        [
            [0.6469966242, 1.725324331, 0.5391638535, -1.293993248],
            [-0.8528025553, 0.8528025553, 0.8528025553, 0.4264012777],
            [0.7071067812, -1.414213562, 0.3535533906, 0.7071067812],
            [0, 0, 0, -0],
        ],
        what="rmsnorm of a 4×4 input with gain = [1, 2, 0.5, -1] (row 1 has mean 4.5, which stays; "
        "row 3 has "
        "mean square 1e-6, as large as eps; row 4 is zeros)",
        diagnose=mistakes.rmsnorm(ROWS, GAIN),
    )


@pytest.mark.points(1)
def test_rmsnorm_eps_goes_inside_the_square_root(student, mistakes):
    """With eps = 0.1 the result is x / sqrt(mean(x**2) + eps)."""
    got = student.rmsnorm(EPS_ROWS, eps=0.1)
    assert_close(
        got,
        [
            [0.272165527, -0.544331054, 0.8164965809, 0],
            [0.9035079029, 1.355261854, 0.4517539515, 0.9035079029],
        ],
        what="rmsnorm of a 2×4 input with eps = 0.1 (inside the square root: sqrt(mean(x**2) + "
        "eps))",
        diagnose=mistakes.rmsnorm(EPS_ROWS, eps=0.1),
    )


@pytest.mark.property
@pytest.mark.points(1)
def test_rmsnorm_row_times_10_gives_the_same_row(student):
    """The course's check: multiply one token's row by 10 and its output row does not change (up to
    eps)."""
    x10 = np.array(X)
    x10[2] *= 10.0
    what = (
        "rmsnorm of the course's x with row 3 multiplied by 10, against rmsnorm of x (each row's "
        "scale goes)"
    )
    assert_close_own(student.rmsnorm(x10), student.rmsnorm(X), rtol=1e-4, what=what)


@pytest.mark.property
@pytest.mark.points(1)
def test_rmsnorm_each_row_is_normalised_on_its_own(student):
    """A (2, 5, 8) batch gives, row for row, what each (5, 8) half gives alone: only the last axis
    counts."""
    x = np.stack([X, 3.0 * X[::-1]])
    what = (
        "rmsnorm of a 2×5×8 batch against rmsnorm of each 5×8 half alone (normalise along the last "
        "axis)"
    )
    batch = assert_array(student.rmsnorm(x), x.shape, what=what)
    for i in range(2):
        assert_close_own(batch[i], student.rmsnorm(x[i]), what=what)
