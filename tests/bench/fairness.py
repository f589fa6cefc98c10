"""`make fairness`: where the points of a single fault fall.

Writes every single fault of tests/unit/mutants.py (FAULTS: the catalogue's mistakes and others,
each written into a copy of the reference) into a temporary class beside the reference, autogrades
it once, and prints per fault the points lost in its own problem, the points lost outside it
(target: 0), and for a numeric slip (a wrong constant or precision that keeps every property) the
share of its problem's points it keeps; then the totals. Exits 0 when no fault costs points outside
its problem and every fault costs some in its own.

    python tests/bench/fairness.py
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "the-block" / "checks"))  # mutants.py

from mutants import FAULTS, points_lost, write_class  # noqa: E402


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="fairness-") as tmp:
        subs, out = write_class(Path(tmp) / "subs"), Path(tmp) / "out"
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "grader",
                "autograde",
                "-a",
                "the-block",
                str(subs),
                "--out",
                str(out),
                "--jobs",
                "2",
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
        )
        if proc.returncode != 0:
            sys.exit(
                f"fairness: grade autograde failed:\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}"
            )
        docs = {p.stem: json.loads(p.read_text()) for p in out.glob("*.json")}
    reference = docs.pop("reference")
    maximum = {p["name"]: p["max_score"] for p in reference["problems"]}
    assert reference["score"] == reference["max_score"], "the reference does not score full marks"
    print(f"{'fault':<32} {'problem':<10} {'own lost':>9} {'outside':>8} {'slip keeps':>11}")
    uncaught, outside_total, unfair, kept = [], 0.0, [], []
    for name, fault in sorted(FAULTS.items(), key=lambda item: (item[1].problem, item[0])):
        own, outside = points_lost(docs[name], reference, fault.problem)
        share = 1 - own / maximum[fault.problem]
        if fault.slip:
            kept.append(share)
        uncaught += [name] * (own <= 0)
        unfair += [name] * (outside > 0)
        outside_total += outside
        print(
            f"{name:<32} {fault.problem:<10} {own:>4g}/{maximum[fault.problem]:<4g} {outside:>8g} "
            f"{f'{100 * share:.0f}%' if fault.slip else '':>11}"
        )
    print(
        f"\n{len(FAULTS)} single faults: {len(FAULTS) - len(uncaught)} cost points in their own "
        "problem "
        f"(not caught: {', '.join(uncaught) or 'none'})"
    )
    print(
        f"points lost outside the faulty problem: {outside_total:g} in all, by {len(unfair)} "
        "faults "
        f"({', '.join(unfair) or 'none'}; target 0)"
    )
    if kept:
        print(
            f"numeric slips ({len(kept)}) keep {100 * sum(kept) / len(kept):.0f}% of their "
            "problem's points "
            f"on average (least {100 * min(kept):.0f}%, most {100 * max(kept):.0f}%)"
        )
    return 0 if not uncaught and not unfair else 1


if __name__ == "__main__":
    sys.exit(main())
