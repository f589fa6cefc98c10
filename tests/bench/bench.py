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
        for jobs in (1, 2):
            seconds = wall(GRADE + ["autograde", str(subs), "--out", str(Path(tmp) / f"out{jobs}"),
                                    "--jobs", str(jobs)])
            print(f"grade autograde, {args.submissions} submissions, --jobs {jobs}: {seconds:6.2f} s = "
                  f"{args.submissions / seconds:6.1f} submissions/s (target >= 10/s with --jobs 2)")


if __name__ == "__main__":
    main()
