"""Fair grades: every single fault of mutants.FAULTS (the catalogue's mistakes and others, each written into a
copy of the reference here), graded with the reference, costs points in its own problem only: none outside it
(a correct block keeps its points beside a wrong component), and some inside it (the suites catch it).
`make fairness` prints the same measurement, with what numeric slips keep."""
from __future__ import annotations

import json

import pytest
from conftest import grade
from mutants import FAULTS, points_lost, write_class


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> dict[str, dict]:
    tmp = tmp_path_factory.mktemp("fairness")
    code, output = grade("autograde", write_class(tmp / "subs"), "--out", tmp / "out", "--jobs", 2)
    assert code == 0, output
    docs = {p.stem: json.loads(p.read_text()) for p in (tmp / "out").glob("*.json")}
    assert docs["reference"]["score"] == docs["reference"]["max_score"]
    return docs


@pytest.mark.parametrize("name", sorted(FAULTS))
def test_a_single_fault_costs_nothing_outside_its_problem(graded, name):
    _, outside = points_lost(graded[name], graded["reference"], FAULTS[name].problem)
    assert outside == 0, [(t["problem"], t["name"], t["output"][:200]) for t in graded[name]["tests"]
                          if t["status"] != "passed" and t["problem"] != FAULTS[name].problem]


@pytest.mark.parametrize("name", sorted(FAULTS))
def test_a_single_fault_costs_points_in_its_problem(graded, name):
    own, _ = points_lost(graded[name], graded["reference"], FAULTS[name].problem)
    assert own > 0, f"{name}: no test of {FAULTS[name].problem} fails"
