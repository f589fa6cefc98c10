"""grader.feedback.values: the checks of one float, one integer, an integer array, a dict of
counts and a random Generator's draws, and every input type a suite may pass to student code, sent
through a real worker as grading sends it."""

from __future__ import annotations

import numpy as np
import pytest

from grader.feedback.mismatch import Diagnosis, Mismatch
from grader.feedback.values import (
    FLOAT64,
    Tolerance,
    assert_counts,
    assert_draws,
    assert_float,
    assert_int,
    assert_ints,
    printed,
)
from grader.sandbox.child import protocol as wire


def failed(check, *args, **kwargs) -> Mismatch:
    with pytest.raises(Mismatch) as caught:
        check(*args, what="the value", **kwargs)
    return caught.value


# one float --------------------------------------------------------------------------------------


def test_a_float_within_its_tolerance_passes_and_outside_says_the_figures_and_why():
    assert_float(2.3025850929940455 + 1e-12, 2.3025850929940455, what="the loss")
    assert_float(np.float32(0.952), 0.95279, what="gelu(1.102)", tol=printed(2))
    err = failed(assert_float, 0.952, 0.95279, tol=printed(3))
    assert "rtol 0, atol 0.0005: a number printed with 3 decimals" in err.public
    assert "yours 0.952, expected 0.95279: off by -0.00079" in err.detail


def test_a_float_check_takes_an_int_and_a_0d_array_and_refuses_an_array_with_an_axis():
    assert_float(np.array(2.0), 2.0, what="x")
    assert_float(2, 2.0, what="x")
    err = failed(assert_float, np.array([2.0]), 2.0)
    assert "expected a number" in err.public and "shape (1,)" in err.detail
    assert "NaN or inf" in failed(assert_float, float("nan"), 1.0).public


def test_a_tolerance_says_its_why_and_the_default_is_float64s():
    assert str(FLOAT64).startswith("rtol 1e-09, atol 1e-12: float64")
    tol = Tolerance(1e-6, 0, "within 1e-6")
    assert "within 1e-6" in failed(assert_float, 1.1, 1.0, tol=tol).public


# one integer ------------------------------------------------------------------------------------


def test_an_integer_is_compared_exactly_and_the_message_says_so():
    assert_int(np.int64(7), 7, what="the token")
    err = failed(assert_int, 5, 7)
    assert err.public == "the value: not the expected integer (integers are compared exactly)"
    assert err.detail == "yours 5, expected 7 (off by -2)"


@pytest.mark.parametrize("value", [7.0, True, np.array(7), "7"])
def test_a_float_a_bool_or_an_array_is_not_an_integer(value):
    err = failed(assert_int, value, 7)
    assert "expected an integer (integers are compared exactly)" in err.public
    assert "7" not in err.public.replace("expected 7", "")  # the student's value: detail only


def test_an_integer_check_names_the_known_mistake_it_matches():
    def off_by_one(got, expected, same):
        return Diagnosis("sample.argmax", "this is the argmax") if same(got, 3) else None

    assert failed(assert_int, 3, 4, diagnose=off_by_one).diagnosis.mistake == "sample.argmax"


# an integer array -------------------------------------------------------------------------------


def test_an_integer_array_lists_the_first_entries_that_differ_and_gives_the_page_its_arrays():
    expected = np.array([[1, 2, 3], [4, 5, 6]])
    assert_ints(expected.astype(np.int32), expected, what="tokens")
    got = expected.copy()
    got[1, 2] = 9
    err = failed(assert_ints, got, expected)
    assert "integers are compared exactly" in err.public
    assert "1 of 6 entries differ" in err.detail and "[1, 2]: yours 9, expected 6" in err.detail
    assert set(err.feedback(public=True)) >= {"expected", "got"}


def test_a_float_array_of_whole_numbers_is_not_an_integer_array():
    err = failed(assert_ints, np.array([1.0, 2.0]), np.array([1, 2]))
    assert "wrong dtype: expected an integer array" in err.public and "float64" in err.detail
    err = failed(assert_ints, np.array([1]), np.array([1, 2]))
    assert "wrong shape: expected (2,)" in err.public


# a dict of counts --------------------------------------------------------------------------------


def test_counts_name_missing_keys_say_extra_ones_and_show_each_difference():
    expected = {"attention": 2_362_368, "mlp": 4_722_432, "norm": 3_072}
    assert_counts(
        {"attention": 2_362_368, "mlp": np.int64(4_722_432), "norm": 3_072}, expected, what="counts"
    )
    err = failed(assert_counts, {"attention": 2_359_296, "mlp": 4_722_432, "ln": 3_072}, expected)
    assert err.public == (
        "the value: missing keys ['norm']; has keys that are not expected; "
        "'attention' is not the expected count (counts are compared exactly)"
    )
    assert "'attention': yours 2359296, expected 2,362,368 (off by -3,072)" in err.detail
    assert "keys not expected: ['ln']" in err.detail
    assert "ln" not in err.public  # their keys: detail only


def test_a_count_that_is_a_float_is_not_the_expected_count():
    err = failed(assert_counts, {"n": 3.0}, {"n": 3})
    assert "'n' is not the expected count" in err.public and "(not an integer)" in err.detail


# a Generator's draws -----------------------------------------------------------------------------


def test_draws_compare_the_bit_generators_state_and_say_how_far_apart():
    def drawn(n: int) -> np.random.Generator:
        rng = np.random.default_rng(5)
        rng.random(n)
        return rng

    assert_draws(drawn(3), drawn(3), what="rng")
    err = failed(assert_draws, drawn(5), drawn(3))
    assert "drew another number or kind of random values" in err.public
    assert err.detail.startswith("yours drew 2 64-bit words more than expected")
    err = failed(assert_draws, drawn(1), drawn(3))
    assert err.detail.startswith("yours drew 2 64-bit words fewer")
    assert "expected a numpy random Generator" in failed(assert_draws, 5, drawn(0)).public


def test_a_hidden_tests_words_hold_nothing_of_the_students_value():
    """A submission could write a hidden input into its value: the public words are fixed."""
    for check, got, expected in [
        (assert_int, 123456, 7),
        (assert_float, 98765.4, 1.0),
        (assert_counts, {"x": 4242}, {"x": 1}),
        (assert_ints, np.array([31337]), np.array([1])),
    ]:
        err = failed(check, got, expected)
        assert not any(s in err.public for s in ("123456", "98765", "4242", "31337")), err.public


# every input type, through the wire and a real worker ---------------------------------------------

ECHO = """
import numpy as np


def echo(*args, **kwargs):
    return [args, kwargs, [type(a).__name__ for a in args]]


def sample(p, rng):
    return int(rng.choice(len(p), p=p))
"""

INPUTS = [
    np.arange(6, dtype=np.float32).reshape(2, 3),
    np.array([True, False]),
    True,
    3,
    2.5,
    "gpt",
    None,
    np.float32(1.5),
    np.int64(3),
    (1, 2),
    [1.0, [2.0]],
    {"d_model": 768, "eps": 1e-5},
]


def test_every_documented_input_type_arrives_as_the_docstring_says(tmp_path, limits):
    from grader.sandbox.client import Worker
    from grader.sandbox.proxy import Student

    (tmp_path / "echo.py").write_text(ECHO)
    with Worker(tmp_path, limits, modules=["echo"]) as worker:
        student = Student(worker, {"echo": "echo", "sample": "echo"}, limits)
        args, kwargs, kinds = student.echo(*INPUTS, rng=np.random.default_rng(0))
    assert kinds == [
        "ndarray",
        "ndarray",
        "bool",
        "int",
        "float",
        "str",
        "NoneType",
        "float",
        "int",
        "list",
        "list",
        "dict",
    ]
    assert args[0].dtype == np.float32 and args[0].flags.writeable and args[1].dtype == bool
    assert args[7:10] == [1.5, 3, [1, 2]] and args[11] == {"d_model": 768, "eps": 1e-5}
    assert np.array_equal(kwargs["rng"].random(3), np.random.default_rng(0).random(3))


def test_a_generator_goes_into_the_worker_and_comes_back_advanced_by_its_draws(tmp_path, limits):
    from grader.sandbox.client import Worker
    from grader.sandbox.proxy import Student

    (tmp_path / "echo.py").write_text(ECHO)
    p = np.array([0.1, 0.2, 0.3, 0.4])
    rng = np.random.default_rng(7)
    with Worker(tmp_path, limits, modules=["echo"]) as worker:
        student = Student(worker, {"sample": "echo"}, limits)
        token, (_, after), _ = student.call_with_inputs("sample", p, rng)
    expected = np.random.default_rng(7)
    assert token == int(expected.choice(4, p=p))
    assert_draws(after, expected, what="rng after sample")
    assert_draws(rng, np.random.default_rng(7), what="the suite's own generator is not advanced")


@pytest.mark.parametrize("name", wire._BIT_GENERATORS)
def test_each_bit_generator_travels_in_its_state(name):
    rng = np.random.Generator(getattr(np.random, name)(11))
    rng.normal(size=3)
    back = wire.decode(wire.encode([rng]))[0]
    assert type(back.bit_generator).__name__ == name
    assert np.array_equal(back.random(4), rng.random(4))


def test_a_forged_generator_state_is_refused_as_the_wire_refuses_any_bad_value():
    """A reply is the student's bytes: a bit generator is built only by one of numpy's names, and
    only in a state it accepts."""
    head = wire.encode([np.random.default_rng(0)])[0]
    for forged in (
        head.replace(b'"PCG64"', b'"os.system"'),  # a name of the message's choice
        head.replace(b'"PCG64"', b'"MT19937"'),  # a state of another kind
        head.replace(b'"inc": ', b'"inc": -'),
    ):  # out of the state's range
        with pytest.raises(wire.WireError):
            wire.decode([forged])
    with pytest.raises(wire.WireError, match="return a numpy array"):
        wire.encode([np.random.PCG64(0)])  # a bit generator alone: no


def test_an_argument_that_may_not_travel_is_said_as_the_suites_argument_not_a_return():
    from grader.sandbox.inflight import encode_call

    with pytest.raises(wire.WireError) as caught:
        encode_call("sample", [np.ones(2), {1, 2}], {})
    assert str(caught.value) == (
        "sample() cannot be sent this call: an argument may not travel to "
        "the worker (a builtins.set); the types that do are listed in "
        "grader.feedback.values"
    )


# the known mistakes' outputs as a release stores them -----------------------------------------


def test_a_call_with_a_generator_is_found_again_by_its_state():
    """A suite makes a new Generator at each call: a release finds the mistakes' outputs again."""
    from grader.feedback.outputs import call_key

    same = [call_key("sample", [np.ones(3), 1.0, np.random.default_rng(5)], {}) for _ in range(2)]
    assert same[0] == same[1] != call_key("sample", [np.ones(3), 1.0, np.random.default_rng(6)], {})


def test_the_values_checks_outputs_are_stored_as_json_and_read_back_as_they_were():
    import json

    from grader.feedback.outputs import decode, encode

    outputs = {
        "m": [
            np.int64(3),
            np.array([1, 5, 2]),
            np.float64(0.25),
            {"n": np.int64(4)},
            [np.array([0.5, 1.5])],
        ]
    }
    back = decode(json.loads(json.dumps(encode(outputs))))["m"]
    assert back[0] == 3 and type(back[0]) is int and back[2] == 0.25 and back[3] == {"n": 4}
    assert back[1].dtype == np.int64 and back[1].tolist() == [1, 5, 2]  # an integer array: exact
    assert np.array_equal(back[4][0], [0.5, 1.5])
