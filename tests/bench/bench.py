"""`make bench`: time `grade check` on the reference and `grade autograde` on generated submissions.

Prints medians of wall-clock times measured in this run, and submissions per second. The machines
are shared and noisy: compare figures from one run, never across runs.

    python tests/bench/bench.py [--submissions 200] [--repeat 5]
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from grader.sandbox import BWRAP, PROCESS, available_levels

ROOT = Path(__file__).resolve().parents[2]
GRADE = [sys.executable, "-m", "grader"]


def wall(cmd: list[str], **kwargs) -> float:
    started = time.perf_counter()
    subprocess.run(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **kwargs)
    return time.perf_counter() - started


def make_class(folder: Path, n: int) -> None:
    """n submissions cycling through the reference, the stubs and the bundled examples (no hangs)."""
    sources = [ROOT / "solutions", ROOT / "exercises"] + sorted((ROOT / "examples" / "submissions").iterdir())
    for i in range(n):
        shutil.copytree(sources[i % len(sources)], folder / f"s{i:04d}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--submissions", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    baseline = statistics.median(wall([sys.executable, "-c", "import numpy"]) for _ in range(args.repeat))
    check = statistics.median(wall(GRADE + ["check", "--path", "solutions"]) for _ in range(args.repeat))
    print(f"python + import numpy (baseline):  {baseline:6.3f} s (median of {args.repeat})")
    print(f"grade check on the reference:      {check:6.3f} s (median of {args.repeat}; "
          f"{check / baseline:.1f}x the baseline; target < 1 s)")
    with tempfile.TemporaryDirectory(prefix="bench-") as tmp:
        subs = Path(tmp) / "subs"
        make_class(subs, args.submissions)
        rates = {}
        for level in available_levels():
            for jobs in (1, 2):
                out = Path(tmp) / f"out-{level}-{jobs}"
                seconds = wall(GRADE + ["autograde", str(subs), "--out", str(out), "--jobs", str(jobs),
                                        "--sandbox", level, "--unsafe"])
                rates[level, jobs] = args.submissions / seconds
                print(f"grade autograde --sandbox {level:7} --jobs {jobs}, {args.submissions} submissions: "
                      f"{seconds:6.2f} s = {rates[level, jobs]:6.1f} submissions/s (target >= 10/s with --jobs 2)")
        if (BWRAP, 2) in rates:
            print(f"sandbox cost: bwrap runs at {rates[BWRAP, 2] / rates[PROCESS, 2]:.2f}x the throughput of "
                  "process isolation alone with --jobs 2 (target >= 0.5x)")


if __name__ == "__main__":
    main()
