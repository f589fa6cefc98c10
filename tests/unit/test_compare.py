"""The comparison helpers: a wrong value never passes, and the message says why."""
from __future__ import annotations

import numpy as np
import pytest

from grader.compare import Mismatch, assert_close, assert_close_any, assert_equal

EXP = np.array([[1.0, 2.0], [3.0, 4.0]])


@pytest.mark.parametrize("got, words", [
    (EXP.tolist(), "got a list"),
    (3.0, "got a float"),
    (np.array([]), "shape"),
    (np.full((1, 2), 2.5), "shape"),                     # would broadcast against EXP
    (np.float64(2.5), "got a float64"),
    (EXP.T.copy(), "values differ"),
    (EXP.astype(complex), "dtype complex128"),
    (EXP > 2, "dtype bool"),
    (np.array([[1.0, np.nan], [3.0, 4.0]]), "NaN"),
    (np.array([[1.0, 2.0], [np.inf, 4.0]]), "inf"),
    (EXP + 1e-3, "values differ"),
])
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
    assert "[1, 0]" in err.value.detail and "yours 3.5" in err.value.detail and "expected 3" in err.value.detail
    assert "1 / 4 entries differ" in err.value.detail


def test_nan_in_expected_position_is_reported_with_its_index():
    got = EXP.copy()
    got[1, 1] = np.nan
    with pytest.raises(Mismatch) as err:
        assert_close(got, EXP, what="x")
    assert "first at [1, 1]" in err.value.detail


def test_close_any_names_the_match():
    assert assert_close_any(EXP, {"reference": EXP + 5, "your own components": EXP}, what="x") == "your own components"
    with pytest.raises(Mismatch):
        assert_close_any(EXP, {"reference": EXP + 5, "yours": EXP - 5}, what="x")


@pytest.mark.parametrize("got, words", [
    ({"total": 7, "mlp": 3}, "wrong keys"),
    ({"total": 7.0}, "should be a int"),
    ({"total": True}, "should be a int"),
    ({"total": 8}, "not the expected count"),
    ([("total", 7)], "expected a dict"),
])
def test_assert_equal_is_strict_about_type_and_value(got, words):
    with pytest.raises(Mismatch) as err:
        assert_equal(got, {"total": 7}, what="counts")
    assert words in err.value.full


def test_assert_equal_passes_equal_dicts():
    assert_equal({"total": 7, "mlp": 3}, {"mlp": 3, "total": 7}, what="counts")
