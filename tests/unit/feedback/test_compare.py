"""The comparison helpers: a wrong value never passes, and the message says why."""

from __future__ import annotations

import numpy as np
import pytest

from grader.errors import StudentError
from grader.feedback.compare import (
    Diagnosis,
    Mismatch,
    assert_close,
    assert_close_any,
    assert_close_own,
    assert_equal,
    assert_keys,
    assert_raises,
    assert_types,
    same_array,
)

EXP = np.array([[1.0, 2.0], [3.0, 4.0]])


@pytest.mark.parametrize(
    "got, words",
    [
        (EXP.tolist(), "yours: a list"),
        (3.0, "yours: a float (3.0)"),
        (np.array([]), "shape"),
        (np.full((1, 2), 2.5), "shape"),  # would broadcast against EXP
        (np.float64(2.5), "yours: a float64"),
        (EXP.T.copy(), "values differ"),
        (EXP.astype(complex), "complex128"),
        (EXP > 2, "bool"),
        (np.array([[1.0, np.nan], [3.0, 4.0]]), "NaN"),
        (np.array([[1.0, 2.0], [np.inf, 4.0]]), "inf"),
        (EXP + 1e-3, "values differ"),
    ],
)
def test_wrong_values_fail(got, words):
    with pytest.raises(Mismatch) as err:
        assert_close(got, EXP, what="a 2×2 check")
    assert words in err.value.full
    assert err.value.public.startswith("a 2×2 check: ")


def test_close_values_pass_including_int_and_float32():
    assert_close(EXP + 1e-9, EXP, what="x")
    assert_close(EXP.astype(np.float32), EXP, what="x", rtol=1e-6)
    assert_close(np.array([[1, 2], [3, 4]]), EXP, what="x")


def test_public_message_hides_values_and_detail_shows_them():
    got = EXP.copy()
    got[1, 0] = 3.5
    with pytest.raises(Mismatch) as err:
        assert_close(got, EXP, what="x")
    assert "3.5" not in err.value.public and "[1, 0]" not in err.value.public
    assert (
        "[1, 0]" in err.value.detail
        and "yours 3.5" in err.value.detail
        and "expected 3" in err.value.detail
    )
    assert "1 / 4 entries differ" in err.value.detail


def test_nan_in_expected_position_is_reported_with_its_index():
    got = EXP.copy()
    got[1, 1] = np.nan
    with pytest.raises(Mismatch) as err:
        assert_close(got, EXP, what="x")
    assert "first at [1, 1]" in err.value.detail


def test_close_any_names_the_match():
    assert (
        assert_close_any(EXP, {"reference": EXP + 5, "your own components": EXP}, what="x")
        == "your own components"
    )
    with pytest.raises(Mismatch):
        assert_close_any(EXP, {"reference": EXP + 5, "yours": EXP - 5}, what="x")


@pytest.mark.parametrize(
    "got, words",
    [
        ({"mlp": 3}, "missing keys ['total']"),
        ({"total": True}, "'total' should be a number"),
        ({"total": "7"}, "'total' should be a number"),
        ({"total": 8}, "'total' is not the expected count"),
        ({"total": 6.5}, "'total' is not the expected count"),
        ([("total", 7)], "expected a dict"),
    ],
)
def test_assert_equal_compares_the_values(got, words):
    with pytest.raises(Mismatch) as err:
        assert_equal(got, {"total": 7}, what="counts")
    assert words in err.value.full


@pytest.mark.parametrize(
    "got",
    [
        {"total": 7, "mlp": 3},
        {"total": 7.0, "mlp": 3},
        {"mlp": np.int64(3), "total": 7},
        {"total": 7, "mlp": 3, "extra": 1},
    ],
)
def test_assert_equal_leaves_types_and_extra_keys_to_assert_types(got):
    assert_equal(got, {"mlp": 3, "total": 7}, what="counts")


@pytest.mark.parametrize(
    "got, words",
    [
        ({}, "missing keys ['total']"),
        ({"total": 7.0}, "'total': should be an int"),
        ({"total": np.int64(7)}, "'total': should be an int"),
        ({"total": True}, "'total': should be an int"),
    ],
)
def test_assert_types_wants_the_exact_keys_and_python_types(got, words):
    with pytest.raises(Mismatch) as err:
        assert_types(got, {"total": 7}, what="counts")
    assert words in err.value.public
    assert "extra" not in err.value.public  # the student's own keys: detail only


def test_assert_types_passes_whatever_the_values_and_other_keys():
    assert_types({"total": 8, "extra": 1.5}, {"total": 7}, what="counts")


@pytest.mark.parametrize(
    "got, words",
    [
        ({"total": 7.0, "extra": 1}, "wrong keys: has keys that are not expected"),
        ({}, "wrong keys: missing ['total']"),
        (7, "expected a dict"),
    ],
)
def test_assert_keys_wants_the_exact_keys_whatever_the_values(got, words):
    with pytest.raises(Mismatch) as err:
        assert_keys(got, {"total": 7}, what="counts")
    assert words in err.value.public
    assert_keys({"total": "x"}, {"total": 7}, what="counts")


def test_assert_close_own_compares_two_of_the_students_outputs():
    rng = np.random.default_rng(0)
    own = rng.normal(size=(3, 4))
    assert_close_own(own + 1e-9, own, what="x")
    for got, words in [
        (own + 1e-3, "your outputs differ"),
        (own[:2], "not numeric arrays of one shape"),
        ([1.0], "not numeric arrays of one shape"),
    ]:
        with pytest.raises(Mismatch) as err:
            assert_close_own(got, own, what="x")
        assert words in err.value.public
        assert (
            "(2, 4)" not in err.value.public and "(3, 4)" not in err.value.public
        )  # neither shape: theirs


@pytest.mark.parametrize(
    "own, words",
    [
        (np.zeros((3, 4)), "one number everywhere"),
        (np.full((2, 2), np.nan), "NaN or inf"),
        ("text", "did not return a numeric array"),
    ],
)
def test_an_output_that_ignores_its_input_holds_no_property(own, words):
    with pytest.raises(Mismatch) as err:
        assert_close_own(own, own, what="x")
    assert words in err.value.public


# ---------------------------------------------------------- the numeric diff of a failed comparison


def _mismatch(got, expected, **kw) -> Mismatch:
    with pytest.raises(Mismatch) as err:
        assert_close(got, expected, what="layernorm of a 3×4 input with eps = 0.1", **kw)
    return err.value


def test_value_diff_gives_shapes_errors_against_the_tolerance_and_the_first_index():
    expected = np.arange(12.0).reshape(3, 4)
    got = expected.astype(np.float32)
    got[1, 2] += 0.5  # the first difference, and the largest
    got[2, 3] += 0.25
    err = _mismatch(got, expected, rtol=1e-3, atol=1e-6)
    lines = err.full.splitlines()
    assert (
        lines[0]
        == "layernorm of a 3×4 input with eps = 0.1: values differ from the expected ones beyond "
        "the tolerance"
    )
    assert lines[1] == "yours: shape (3, 4), float32; expected: shape (3, 4), float64"
    assert (
        "2 / 12 entries differ by more than 0.011 (rtol 0.001 of the largest expected magnitude, "
        "plus "
        "atol 1e-06); max abs error 0.5 at [1, 2]: yours 6.5, expected 6" in err.detail
    )
    assert "first difference at [1, 2]: yours 6.5, expected 6" in err.detail


def test_excerpt_shows_rows_from_the_first_difference_and_marks_only_the_differing_entries():
    expected = np.arange(12.0).reshape(3, 4)
    got = expected.copy()
    got[1, 2] = 60.0
    detail = _mismatch(got, expected).detail
    excerpt = detail[detail.index("excerpt") :].splitlines()
    assert excerpt[0] == "excerpt (3 decimals, * = outside the tolerance):"
    assert excerpt[1].split() == ["[1,", ":]", "expected", "4.000", "5.000", "6.000*", "7.000"]
    assert excerpt[2].split() == ["yours", "4.000", "5.000", "60.000*", "7.000"]
    assert (
        excerpt[3].split()[:3] == ["[2,", ":]", "expected"] and "*" not in excerpt[3] + excerpt[4]
    )
    assert "[0, :]" not in detail  # rows before the first difference left out


def test_a_near_miss_is_printed_with_the_digits_that_show_it():
    expected = np.array([[0.5, 0.25], [1.0, -1.0]])
    got = expected.copy()
    got[1, 0] += 3e-5  # beyond rtol 1e-5, the same at 3 decimals
    detail = _mismatch(got, expected).detail
    excerpt = detail[detail.index("excerpt") :].splitlines()
    assert excerpt[0] == "excerpt (5 decimals, * = outside the tolerance):"
    assert excerpt[1].split() == ["[1,", ":]", "expected", "1.00000*", "-1.00000"]
    assert excerpt[2].split() == ["yours", "1.00003*", "-1.00000"]


def test_excerpt_of_a_long_vector_is_a_window_around_the_first_difference():
    expected = np.linspace(0.0, 1.0, 40)
    got = expected.copy()
    got[30] += 1.0
    detail = _mismatch(got, expected).detail
    assert "columns 26 to 33 of 40" in detail
    assert "1.769*" in detail and f"{expected[30]:.3f}*" in detail


def test_nan_and_inf_are_located_before_any_values():
    expected = np.zeros((3, 4))
    got = expected.copy()
    got[1, 2] = got[2, 0] = np.nan
    got[2, 3] = -np.inf
    err = _mismatch(got, expected)
    assert err.public.endswith("your output has NaN or inf where the expected values are finite")
    assert "NaN at 2 of 12 entries, first at [1, 2], in rows [1], [2]" in err.detail
    assert "-inf at 1 of 12 entries, first at [2, 3], in row [2]" in err.detail
    assert "nan*" in err.detail and "-inf*" in err.detail


@pytest.mark.parametrize(
    "got, wrong",
    [
        (np.zeros((4, 3)), "wrong shape: expected (3, 4)"),
        (np.zeros((3, 4), dtype=complex), "wrong dtype: expected a float array"),
    ],
)
def test_shape_and_dtype_errors_say_so_and_give_no_numbers(got, wrong):
    err = _mismatch(got, np.ones((3, 4)))
    assert err.public == f"layernorm of a 3×4 input with eps = 0.1: {wrong}"
    assert "max abs error" not in err.full and "excerpt" not in err.full
    assert f"yours: shape {got.shape}, {got.dtype}; expected: shape (3, 4), float64" in err.detail


def test_counts_name_every_wrong_key_with_the_difference():
    with pytest.raises(Mismatch) as err:
        assert_equal(
            {"attention": 9, "norm": 4, "total": 13},
            {"attention": 12, "norm": 4, "total": 16},
            what="c",
        )
    assert err.value.public == "c: 'attention', 'total' are not the expected counts"
    assert "'attention': yours 9, expected 12 (off by -3)" in err.value.detail
    assert "'total': yours 13, expected 16 (off by -3)" in err.value.detail


# ------------------------------------------------------------------ the diagnosis hook


def test_diagnose_is_asked_only_after_a_failure_with_the_checks_own_tolerance():
    asked = []

    def diagnose(got, expected, same):
        asked.append((same(got, got + 1e-4), same(got, got + 1e-2)))
        return Diagnosis("toy.off_by_one", "this matches an off-by-one: start at 0")

    assert_close(EXP, EXP, what="x", diagnose=diagnose)
    assert asked == []
    with pytest.raises(Mismatch) as err:
        assert_close(EXP + 1, EXP, what="x", rtol=0, atol=1e-3, diagnose=diagnose)
    assert asked == [(True, False)]
    assert (
        err.value.public == "x: values differ from the expected ones beyond the tolerance\n"
        "diagnosis: this matches an off-by-one: start at 0"
    )
    assert err.value.full.startswith(err.value.public + "\nyours: shape")


def test_diagnose_also_runs_for_nan_and_for_counts():
    def diagnose(got, expected, same):
        return Diagnosis("m", "named") if same(got, bad) else None

    bad = np.array([[np.nan, 2.0], [3.0, 4.0]])
    with pytest.raises(Mismatch) as err:
        assert_close(bad.copy(), EXP, what="x", diagnose=diagnose)
    assert err.value.diagnosis == Diagnosis("m", "named")
    bad = {"total": 6}
    with pytest.raises(Mismatch) as err:
        assert_equal({"total": 6}, {"total": 7}, what="c", diagnose=diagnose)
    assert err.value.diagnosis == Diagnosis("m", "named")
    with pytest.raises(Mismatch) as err:
        assert_equal(
            {"total": 6.0}, {"total": 7}, what="c", diagnose=diagnose
        )  # by value: 6.0 is 6
    assert err.value.diagnosis == Diagnosis("m", "named")
    with pytest.raises(Mismatch) as err:
        assert_equal({"total": 5}, {"total": 7}, what="c", diagnose=diagnose)
    assert err.value.diagnosis is None


def test_same_array_needs_the_shape_and_nan_in_the_same_places():
    assert same_array(np.array([1.0, np.nan]), [1.0 + 1e-9, np.nan])
    assert not same_array(np.array([1.0, np.nan]), [1.0, 2.0])
    assert not same_array(np.array([1.0, 2.0]), [[1.0, 2.0]])
    assert not same_array([1.0, 2.0], [1.0, 2.0])  # a list is not an array


def test_feedback_keeps_the_arrays_for_public_tests_only():
    with pytest.raises(Mismatch) as err:
        assert_close(
            EXP + 1, EXP, what="x", diagnose=lambda got, expected, same: Diagnosis("m", "named")
        )
    public, hidden = err.value.feedback(public=True), err.value.feedback(public=False)
    assert hidden == {"diagnosis": "m"}
    assert public["diagnosis"] == "m"
    np.testing.assert_array_equal(public["got"], EXP + 1)
    np.testing.assert_array_equal(public["expected"], EXP)


def test_close_any_accepts_nan_where_a_candidate_has_it_too():
    own = EXP.copy()
    own[0, 0] = np.nan  # e.g. the student's own components give NaN there
    assert assert_close_any(own.copy(), {"reference": EXP, "own": own}, what="x") == "own"
    with pytest.raises(Mismatch) as err:
        assert_close_any(own.copy(), {"reference": EXP, "own": EXP + 1}, what="x")
    assert "NaN" in err.value.public


def _isclose(got, expected, rtol, atol):
    """numpy's isclose with one tolerance for the whole array: atol + rtol · max |finite
    expected|."""
    finite = np.abs(expected[np.isfinite(expected)])
    scale = finite.max() if finite.size else 0.0
    return np.isclose(got, expected, rtol=0.0, atol=atol + rtol * scale, equal_nan=True)


VALUES = [0, 1, -1, 1e-9, np.inf, -np.inf, np.nan, 1e300, -1e300, 5e-324, 1 + 1e-6, 1 + 1e-4]


@pytest.mark.parametrize("rtol, atol", [(1e-5, 1e-8), (0.0, 0.0), (1e-3, 1e-3)])
def test_the_tolerance_is_isclose_scaled_to_the_arrays_magnitude_nan_equal_to_nan(rtol, atol):
    from grader.feedback.compare import _outside, allowed

    rest = np.array([2.0, -3.5, 1e-7])
    for first_got in VALUES:
        for first_expected in VALUES:
            got, expected = np.array([first_got, *rest]), np.array([first_expected, *rest])
            with np.errstate(over="ignore", invalid="ignore"):
                assert np.array_equal(
                    _outside(got, expected, allowed(expected, rtol, atol)),
                    ~_isclose(got, expected, rtol, atol),
                ), (got, expected)


def test_an_entry_near_zero_is_judged_against_the_arrays_magnitude():
    expected = np.array([[3.0, -2.0, 7e-5], [1.0, 0.5, -1e-9]])
    rounded = expected.astype(np.float32).astype(np.float64) + 1e-7  # float32 arithmetic inside
    assert_close(rounded, expected, what="x")  # per entry, 7e-5 and -1e-9 would fail
    off = expected.copy()
    off[0, 0] *= 1 + 1e-4  # a real error on the largest entry
    with pytest.raises(Mismatch):
        assert_close(off, expected, what="x")


@pytest.mark.parametrize("rtol, atol", [(1e-5, 1e-8), (0.0, 0.0), (1e-3, 1e-3)])
def test_same_array_is_scaled_isclose_everywhere_whatever_the_first_entry(rtol, atol):
    rest = np.array([2.0, -3.5])
    for dtype in (np.float64, np.float32, np.int64):
        for first_got in VALUES:
            for first_expected in VALUES:
                got = np.array([first_got, *rest])
                if dtype is np.int64:
                    if not np.isfinite(first_got) or abs(first_got) > 1e18:
                        continue
                    got = got.astype(np.int64)
                with np.errstate(over="ignore"):  # 1e300 as float32 is inf
                    got = got.astype(dtype)
                expected = np.array([first_expected, *rest])
                with np.errstate(over="ignore", invalid="ignore"):
                    want = bool(_isclose(got.astype(np.float64), expected, rtol, atol).all())
                assert same_array(got, expected, rtol=rtol, atol=atol) is want, (got, expected)


# ---------------------------------------------------- a hidden test's view: the grader's words only


def _views(check) -> tuple[str, str]:
    """(public, full) of the Mismatch that ``check()`` raises."""
    with pytest.raises(Mismatch) as err:
        check()
    return err.value.public, err.value.full


COUNTS = {"attention": 3, "total": 7}
ZEROS = np.zeros((0, 31337, 271828))  # zero-size: any dims cost no memory, so they can say anything

# Each failure form, with student values carrying marker numbers and strings that their public view
# shows.
# A hidden test's view must be the same whatever the value (so nothing of it can be there) and hold
# no marker.
LEAKS = {
    "not an array": (
        lambda got: assert_close(got, EXP, what="w"),
        [
            (0.7777123, ["float", "0.7777123"]),
            ([31337.0], ["list"]),
            ("LEAK-4242", ["str"]),
            ({"LEAK-4242": 1}, ["dict"]),
            (None, ["NoneType"]),
            (True, ["bool", "True"]),
        ],
    ),
    "wrong dtype": (
        lambda got: assert_close(got, EXP, what="w"),
        [
            (np.zeros((2, 2), dtype=np.complex64), ["complex64"]),
            (np.zeros((0, 31337), dtype=bool), ["bool", "31337"]),
        ],
    ),
    "wrong shape": (
        lambda got: assert_close(got, EXP, what="w"),
        [
            (ZEROS, ["31337", "271828"]),
            (np.zeros((2, 4242)), ["4242"]),
            (np.zeros((2, 2, 1), dtype=np.int16), ["int16"]),
        ],
    ),
    "NaN or inf": (
        lambda got: assert_close(got, EXP, what="w"),
        [
            (np.array([[np.nan, 2.0], [3.0, 4.0]]), ["NaN at 1 of 4"]),
            (np.array([[1.0, -np.inf], [-np.inf, -np.inf]]), ["-inf at 3 of 4"]),
            (np.array([[np.inf, 2.0], [3.0, 4.0]], dtype=np.float32), ["float32", "inf at 1 of 4"]),
        ],
    ),
    "values differ": (
        lambda got: assert_close(got, EXP, what="w"),
        [(np.full((2, 2), 0.7777123), ["0.777712"]), (np.full((2, 2), 31337), ["31337", "int64"])],
    ),
    "close_any: wrong shape": (
        lambda got: assert_close_any(got, {"a": EXP, "b": EXP + 1}, what="w"),
        [(np.zeros((0, 31337)), ["31337"]), (np.zeros(4242), ["4242"])],
    ),
    "close_any: values differ": (
        lambda got: assert_close_any(got, {"a": EXP, "b": EXP + 1}, what="w"),
        [(np.full((2, 2), 0.7777123), ["0.777712"]), (EXP + 31337, ["31338"])],
    ),
    "a number": (
        lambda got: assert_equal(got, 7, what="w"),
        [(31337, ["31337"]), (4242, ["4242"]), (0.7777123, ["0.7777123"])],
    ),
    "not a number": (
        lambda got: assert_equal(got, 7, what="w"),
        [("LEAK-4242", ["LEAK-4242"]), (True, ["True"]), ([31337], ["31337"])],
    ),
    "a string": (
        lambda got: assert_equal(got, "gelu", what="w"),
        [("LEAK-4242", ["LEAK-4242"]), ("", ["yours ''"])],
    ),
    "not a dict": (
        lambda got: assert_equal(got, COUNTS, what="w"),
        [([31337], ["list"]), (0.7777123, ["0.7777123"]), ("LEAK-4242", ["str"])],
    ),
    "missing and unexpected keys": (
        lambda got: assert_keys(got, COUNTS, what="w"),
        [
            ({"total": 7, "LEAK-4242": 1}, ["LEAK-4242"]),
            ({"total": 7, "LEAK-31337": 2, "x": 0}, ["LEAK-31337"]),
        ],
    ),
    "unexpected keys": (
        lambda got: assert_keys(got, COUNTS, what="w"),
        [({**COUNTS, "LEAK-4242": 1}, ["LEAK-4242"]), ({**COUNTS, "31337": 0}, ["31337"])],
    ),
    "a value of the wrong type": (
        lambda got: assert_types(got, COUNTS, what="w"),
        [
            ({"attention": 3, "total": 0.7777123}, ["0.7777123", "float"]),
            ({"attention": 3, "total": "LEAK-4242"}, ["str"]),
            ({"attention": 3, "total": [31337]}, ["list"]),
            ({"attention": 3, "total": None}, ["NoneType"]),
        ],
    ),
    "wrong counts": (
        lambda got: assert_equal(got, COUNTS, what="w"),
        [
            ({"attention": 3, "total": 31337}, ["31337", "+31,330"]),
            ({"attention": 3, "total": 4242}, ["4242"]),
        ],
    ),
}


@pytest.mark.parametrize("form", LEAKS)
def test_a_hidden_test_shows_nothing_of_the_students_value(form):
    check, values = LEAKS[form]
    views = [(_views(lambda: check(got)), markers) for got, markers in values]
    assert len({public for (public, _), _ in views}) == 1, (
        views
    )  # the same words whatever the value
    for (public, full), markers in views:
        assert full.startswith(public)
        for marker in markers:
            assert marker in full, (marker, full)  # a public test still shows what is wrong
            assert marker not in public, (marker, public)


@pytest.mark.parametrize(
    "got, public",
    [
        (0.5, "expected a numpy array of shape (2, 2), got another kind of value"),
        (EXP.astype(complex), "wrong dtype: expected a float array"),
        (ZEROS, "wrong shape: expected (2, 2)"),
        (
            np.full((2, 2), np.nan),
            "your output has NaN or inf where the expected values are finite",
        ),
    ],
)
def test_a_hidden_test_says_what_is_wrong_in_fixed_words(got, public):
    assert _views(lambda: assert_close(got, EXP, what="w"))[0] == f"w: {public}"


@pytest.mark.parametrize(
    "check, got, public",
    [
        (
            assert_equal,
            [7],
            "expected a dict with keys ['attention', 'total'], got another kind of value",
        ),
        (assert_equal, {"total": 7}, "missing keys ['attention']"),
        (assert_equal, {"attention": 3, "total": 8}, "'total' is not the expected count"),
        (assert_keys, {"total": 7}, "wrong keys: missing ['attention']"),
        (
            assert_keys,
            {"total": 7, "LEAK": 3},
            "wrong keys: missing ['attention'] and has keys that are not expected",
        ),
        (assert_keys, {**COUNTS, "LEAK": 3}, "wrong keys: has keys that are not expected"),
        (assert_types, {"attention": 3.0, "total": 7}, "'attention': should be an int"),
    ],
)
def test_a_hidden_test_names_only_the_expected_keys(check, got, public):
    assert _views(lambda: check(got, COUNTS, what="w"))[0] == f"w: {public}"


def test_plain_values_say_the_expected_type_and_nothing_of_the_value():
    assert _views(lambda: assert_types(7.0, 7, what="w"))[0] == "w: should be an int"
    assert (
        _views(lambda: assert_equal("7", 7, what="w"))[0]
        == "w: expected a number, got another kind of value"
    )
    assert _views(lambda: assert_equal(8, 7, what="w"))[0] == "w: not the expected value"


def _raises(kind: str, *builtins: str):
    def call():
        raise StudentError(kind, "f() failed", builtins=builtins)

    return call


def test_assert_raises_wants_that_builtin_exception_or_a_subclass():
    assert_raises(
        _raises("raised", "ValueError", "Exception", "BaseException"), ValueError, what="f('x')"
    )
    with pytest.raises(Mismatch) as err:
        assert_raises(
            _raises("raised", "KeyError", "LookupError", "Exception", "BaseException"),
            ValueError,
            what="f('x')",
        )
    assert err.value.public == "f('x'): expected ValueError, got another exception"
    with pytest.raises(Mismatch) as err:
        assert_raises(lambda: {"total": 1}, ValueError, what="f('x')")
    assert "the call returned a value" in err.value.public
    with pytest.raises(StudentError):  # a timeout or a stub stands as it is
        assert_raises(_raises("not_implemented"), ValueError, what="f('x')")
