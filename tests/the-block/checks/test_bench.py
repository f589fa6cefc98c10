"""The benchmark's baseline must grade: every test of the suites runs in the plain pytest run."""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests" / "bench"))

from bench import plain_pytest  # noqa: E402


def _outcomes(folder: Path) -> dict[str, int]:
    proc = plain_pytest(folder, capture_output=True, text=True)
    summary = proc.stdout.strip().splitlines()[-1]
    return {word: int(n) for n, word in re.findall(r"(\d+) (passed|failed|errors?)", summary)}


def test_the_baseline_passes_the_reference_and_fails_the_stubs_on_every_test():
    tests = len(
        re.findall(
            r"^\s*def test_",
            "".join(
                p.read_text()
                for p in (ROOT / "tests" / "the-block").glob("*/test_*.py")
                if p.parent.name in ("public", "hidden")
            ),
            re.M,
        )
    )
    assert _outcomes(ROOT / "solutions" / "the-block") == {"passed": tests}
    assert _outcomes(ROOT / "exercises" / "the-block") == {
        "failed": tests
    }  # run and failed, not errors at setup
