"""`make bench`: how fast the grader is, measured in one run on this machine, today's targets first.

CPU time counts every process a command starts, the sandboxed zygotes and workers included (a
control group around the command: tests/bench/cgroup.py). Each figure is the median of --runs runs;
the machines are shared and noisy, so compare figures of one run (the ratios), never across runs.

1. `grade check` on the reference, in a student's release: wall and CPU time, against `python -c
   "import numpy, pytest"` in the same venv (targets: at most 0.5 s wall on a quiet machine, and at
   most 1.5x that command's CPU, the median of the run-by-run ratios).
2. `grade autograde --jobs 2` at the best sandbox on N copies of the reference: CPU time a
   submission and submissions a second (targets: at most 50 ms, at least 40/s); and on the mix (the
   reference, the stubs and the bundled examples in turn).
3. The floor (tests/bench/floor.py): the same N submissions' sandboxed work with nothing graded
   (each phase's worker forked, confined and importing, every call of a correct grading answered),
   measured the same way; the product's CPU against it.
With --full, the figures of earlier targets: --jobs 1 and the process level, a worker's and a
grader's peak memory, a hanging submission's cost, the same class graded by one plain pytest run a
submission (as same-process graders do), and on a Dask LocalCluster.

    python tests/bench/bench.py [--submissions 300] [--runs 3] [--full]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from cgroup import measured  # tests/bench/ (this script's folder is on sys.path)

from grader.course.manifest import load
from grader.sandbox.policy import available_levels

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
GRADE = [sys.executable, "-m", "grader"]
COURSE = ["-a", "the-block"]  # the class measured: the-block's
MODULES = load(ROOT / "course.json", "the-block").modules
HANG = "def gelu(x):\n    while True:\n        pass\n"


def make_class(folder: Path, n: int) -> None:
    """n submissions cycling through the reference, the stubs and the bundled examples (no
    hangs)."""
    sources = [ROOT / "solutions" / "the-block", ROOT / "exercises" / "the-block"]
    sources += sorted((ROOT / "examples" / "the-block").iterdir())
    for i in range(n):
        shutil.copytree(
            sources[i % len(sources)],
            folder / f"s{i:04d}",
            ignore=shutil.ignore_patterns("mistakes.py"),
        )


def make_correct_class(folder: Path, n: int) -> None:
    """n copies of the reference's modules."""
    for i in range(n):
        (folder / f"c{i:04d}").mkdir(parents=True)
        for module in MODULES:
            shutil.copy(ROOT / "solutions" / "the-block" / f"{module}.py", folder / f"c{i:04d}")


def median_of(runs: int, cmd: list[str], ok: tuple[int, ...] = (0,)) -> tuple[float, float, bool]:
    """(wall, CPU, counted by a control group) of ``cmd``, each the median of ``runs`` runs."""
    figures = [measured(cmd, ROOT, ok) for _ in range(runs)]
    return (
        statistics.median(f[0] for f in figures),
        statistics.median(f[1] for f in figures),
        figures[0][2],
    )


def grade_check(folder: Path, runs: int) -> None:
    """A student's view: a fresh release (``grade release``) with the reference's modules in its
    exercises/, checked from inside it as its README says, after one run that writes its bytecode as
    a student's first run would. Baseline and check run in turn, so a drift of the machine's speed
    reaches both."""
    release = folder / "release"
    subprocess.run(
        GRADE + ["release", *COURSE, "--out", str(release), "--nbgrader-dir", str(folder / "nb")],
        cwd=ROOT,
        check=True,
        capture_output=True,
    )
    for module in MODULES:
        shutil.copy(ROOT / "solutions" / "the-block" / f"{module}.py", release / "exercises")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    check = [sys.executable, "-m", "grader", "check"]
    measured(check, release, env=env)
    base, mine = [], []
    for _ in range(runs):
        base.append(measured([sys.executable, "-c", "import numpy, pytest"], release, env=env))
        mine.append(measured(check, release, env=env))
    base_wall, base_cpu = (
        statistics.median(f[0] for f in base),
        statistics.median(f[1] for f in base),
    )
    wall, cpu = statistics.median(f[0] for f in mine), statistics.median(f[1] for f in mine)
    ratio = statistics.median(m[1] / b[1] for m, b in zip(mine, base))
    print(f"python -c 'import numpy, pytest': {base_wall:6.3f} s wall, {base_cpu:6.3f} s CPU")
    print(
        f"grade check on the reference:     {wall:6.3f} s wall, {cpu:6.3f} s CPU = {ratio:.2f}x "
        "its CPU "
        "(targets: <= 0.5 s wall on a quiet machine, <= 1.5x CPU; in a release, as a student runs "
        "it)"
    )


def autograde(folder: Path, out: Path, jobs: int, level: str, force: bool = True) -> list[str]:
    return (
        GRADE
        + [
            "autograde",
            *COURSE,
            str(folder),
            "--out",
            str(out),
            "--jobs",
            str(jobs),
            "--sandbox",
            level,
            "--unsafe",
            "--quiet",
        ]
        + (["--force"] if force else [])
    )


def throughput(tmp: Path, n: int, runs: int, level: str) -> float:
    """Copies of the reference and the mix, --jobs 2; returns the CPU a correct submission."""
    correct, mix = tmp / "correct", tmp / "mix"
    make_correct_class(correct, n)
    make_class(mix, n)
    counted = True
    cpus = {}
    for name, folder in (("copies of the reference", correct), ("the mix", mix)):
        wall, cpu, counted = median_of(
            runs, autograde(folder, tmp / f"out-{folder.name}", 2, level), ok=(0, 1)
        )
        cpus[name] = cpu
        print(
            f"grade autograde --jobs 2 --sandbox {level}, {n} {name}: {cpu / n * 1000:5.1f} ms CPU "
            "a submission, "
            f"{n / wall:5.1f} submissions/s ({wall:.1f} s wall)"
            + (" (targets: <= 50 ms, >= 40/s)" if folder is correct else "")
        )
    if not counted:
        print("  (no control group could be made here: the CPU figures miss the sandboxed workers)")
    return cpus["copies of the reference"] / n


def floor(n: int, runs: int, level: str, product: float) -> None:
    _, cpu, _ = median_of(
        runs,
        [
            sys.executable,
            str(HERE / "floor.py"),
            "--submissions",
            str(n),
            "--jobs",
            "2",
            "--sandbox",
            level,
        ],
    )
    per = cpu / n  # (its start-up included, as the product's is)
    print(
        f"the floor (--jobs 2, {level}, {n} copies: forks, confinement, imports, every call of a "
        "correct grading "
        f"answered, nothing graded): {per * 1000:5.1f} ms CPU a submission; the product takes "
        f"{product / per:.2f}x the floor"
    )


def full(tmp: Path, n: int, runs: int, level: str) -> None:
    """The figures of earlier targets."""
    mix = tmp / "mix"
    for lvl in available_levels():
        for jobs in (1, 2):
            wall, cpu, _ = median_of(
                runs, autograde(mix, tmp / f"out-{lvl}-{jobs}", jobs, lvl), ok=(0, 1)
            )
            print(
                f"the mix, --jobs {jobs} --sandbox {lvl:7}: {n / wall:6.1f} submissions/s, "
                f"{cpu / n * 1000:5.1f} ms "
                "CPU a submission"
            )
    two = tmp / "two"
    make_class(two, 2)
    wall, _, _ = median_of(runs, autograde(two, tmp / "out-two", 2, level), ok=(0, 1))
    print(
        f"fixed cost: --jobs 2 on 2 submissions takes {wall:5.2f} s (start-up, pytest collection, "
        "the zygotes)"
    )
    hangs = tmp / "hangs"
    for i in range(2):
        shutil.copytree(
            ROOT / "solutions" / "the-block",
            hangs / f"h{i}",
            ignore=shutil.ignore_patterns("mistakes.py"),
        )
        (hangs / f"h{i}" / "gelu.py").write_text(HANG)
    wall, _, _ = median_of(1, autograde(hangs, tmp / "out-hangs", 2, level), ok=(0, 1))
    print(
        f"2 submissions whose gelu never returns, --jobs 2: {wall:6.2f} s (bounded by the call "
        "timeout and the "
        "problem budgets in course.json)"
    )
    worker, grader = peak_rss(autograde(mix, tmp / "out-memory", 2, level))
    print(
        f"peak RSS (--jobs 2 --sandbox {level}): {worker:5.1f} MiB a worker, {grader:5.1f} MiB a "
        "grader process"
    )
    started = time.perf_counter()
    for folder in sorted(mix.iterdir()):
        plain_pytest(folder, capture_output=True)
    seconds = time.perf_counter() - started
    print(
        f"baseline, one plain pytest run a submission, one at a time: {n / seconds:6.1f} "
        "submissions/s"
    )
    try:
        import distributed
    except ImportError:
        return
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
    ) as cluster:
        cmd = autograde(mix, tmp / "out-dask", 2, level) + [
            "--executor",
            "dask",
            "--scheduler",
            cluster.scheduler_address,
        ]
        measured(cmd, ROOT, (0, 1))  # warms the workers
        wall, _, _ = median_of(runs, cmd, ok=(0, 1))
        print(f"Dask LocalCluster, 2 workers x 1 thread: {n / wall:6.1f} submissions/s")


def plain_pytest(folder: Path, **kwargs) -> subprocess.CompletedProcess:
    """The baseline's grading of one submission: one plain `pytest` run of the public and hidden
    suites with the student's modules imported into the test process (tests/bench/naive.py)."""
    suites = [
        str(p)
        for p in sorted((ROOT / "tests" / "the-block" / "public").glob("test_*.py"))
        + sorted((ROOT / "tests" / "the-block" / "hidden").glob("test_*.py"))
    ]
    env = {
        **os.environ,
        "PYTHONPATH": str(HERE),
        "PYTHONDONTWRITEBYTECODE": "1",
        "SUBMISSION": str(folder),
    }
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "naive",
            "-p",
            "no:cacheprovider",
            "--rootdir",
            str(ROOT),
            "-c",
            str(HERE / "naive.ini"),
            *suites,
        ],
        cwd=ROOT,
        env=env,
        timeout=600,
        **kwargs,
    )


def peak_rss(cmd: list[str]) -> tuple[float, float]:
    """(the largest RSS of a worker, of a grader process), MiB, polling ``ps`` while ``cmd``
    runs."""
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    worker = grader = 0.0
    while proc.poll() is None:
        out = subprocess.run(["ps", "-eo", "rss=,args="], capture_output=True, text=True).stdout
        for line in out.splitlines():
            rss, _, args = line.strip().partition(" ")
            if "worker.py" in args and "--zygote" not in args:
                worker = max(worker, int(rss) / 1024)
            elif "grader autograde" in args:
                grader = max(grader, int(rss) / 1024)
        time.sleep(0.05)
    return worker, grader


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--submissions", type=int, default=300)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--full", action="store_true", help="also the figures of earlier targets")
    args = parser.parse_args()
    level = available_levels()[0]
    with tempfile.TemporaryDirectory(prefix="bench-") as tmp:
        grade_check(Path(tmp), 4 * args.runs + 1)
        per = throughput(Path(tmp), args.submissions, args.runs, level)
        floor(args.submissions, args.runs, level, per)
        if args.full:
            full(Path(tmp), args.submissions, args.runs, level)


if __name__ == "__main__":
    main()
